"""A CDC snapshot's progress in ``sluice connectors status``.

Read from the REST status, where the PostgreSQL CDC task reports it under
``tasks[i].details.snapshot`` (Sluice's addition to Kafka Connect's status
body): ``{"tables": {name: {"rows", "estimated", "done"}}, "rows_done",
"rows_estimated"}``. The status is the one place that already answers "what
is this task doing" per connector, so no metrics scrape is needed; the same
numbers are on ``GET /metrics`` as ``debezium_metrics_rowsscanned`` and
``sluice_plugin_postgres_cdc_snapshot_rows_estimated``.

The total of a table still being read is PostgreSQL's estimate
(``pg_class.reltuples``, ``?`` before the table was ever analyzed); once a
table is done its total is the rows read.
"""

from __future__ import annotations

from typing import Any


def snapshot_lines(details: dict[str, Any] | None) -> list[str]:
    """Lines showing the snapshot in ``details`` (none when it has no snapshot)."""
    snapshot = (details or {}).get("snapshot")
    tables = snapshot.get("tables") if isinstance(snapshot, dict) else None
    if not isinstance(tables, dict) or not tables:
        return []
    rows = [(name, *_table_progress(table)) for name, table in tables.items()]
    done_all = all(state == "done" for *_, state in rows)
    read = sum(r for _, r, _, _ in rows)
    totals = [t for _, _, t, _ in rows]
    total = None if None in totals else sum(t for t in totals if t is not None)
    head = f"snapshot: {'done' if done_all else 'running'}, {_fraction(read, total)} rows"
    width = max(len(name) for name, *_ in rows)
    lines = [head]
    for name, table_read, table_total, state in rows:
        lines.append(f"  {name.ljust(width)}  {_fraction(table_read, table_total)}  {state}")
    return lines


def _table_progress(table: Any) -> tuple[int, int | None, str]:
    """(rows read, total or None, state) of one table's entry."""
    if not isinstance(table, dict):
        return 0, None, "?"
    read = int(table.get("rows") or 0)
    if table.get("done"):
        return read, read, "done"
    estimated = table.get("estimated")
    total = int(estimated) if isinstance(estimated, int | float) and estimated > 0 else None
    if total is not None and total < read:
        total = None  # the estimate was low: an unknown total, not a percentage over 100
    return read, total, "reading" if read else "waiting"


def _fraction(read: int, total: int | None) -> str:
    if total is None:
        return f"{read}/?"
    percent = 100 * read // total if total else 100
    return f"{read}/{total} ({percent}%)"
