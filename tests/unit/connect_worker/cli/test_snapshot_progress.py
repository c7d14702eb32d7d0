"""How ``sluice connectors status`` shows a CDC snapshot's progress per table."""

from __future__ import annotations

from connect_worker.cli.snapshot_progress import snapshot_lines


def test_a_running_snapshot_shows_rows_read_over_the_estimate_per_table() -> None:
    details = {"phase": "snapshot", "snapshot": {
        "tables": {
            "public.orders": {"rows": 1000, "estimated": 1000, "done": True},
            "public.items": {"rows": 2500, "estimated": 10000, "done": False},
            "public.fresh": {"rows": 0, "estimated": None, "done": False},
        },
        "rows_done": 3500, "rows_estimated": 11000,
    }}
    assert snapshot_lines(details) == [
        "snapshot: running, 3500/? rows",
        "  public.orders  1000/1000 (100%)  done",
        "  public.items   2500/10000 (25%)  reading",
        "  public.fresh   0/?  waiting",
    ]


def test_a_finished_snapshot_totals_the_rows_read() -> None:
    details = {"snapshot": {"tables": {
        "public.a": {"rows": 3, "estimated": 2, "done": True},
        "public.b": {"rows": 0, "estimated": -1, "done": True},
    }}}
    assert snapshot_lines(details)[0] == "snapshot: done, 3/3 (100%) rows"


def test_no_snapshot_or_a_strange_one_shows_nothing() -> None:
    assert snapshot_lines(None) == []
    assert snapshot_lines({"phase": "streaming"}) == []
    assert snapshot_lines({"snapshot": "yes"}) == []
    assert snapshot_lines({"snapshot": {"tables": {}}}) == []
