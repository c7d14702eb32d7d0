"""The fault-injection checker on hand-made histories: each kind of violation is caught."""

from __future__ import annotations

from harness.faults.checker import FinalState, LogRecords, check
from harness.faults.history import History


def _history(acks: list[tuple[str, int, int]]) -> History:
    """``(producer, partition, offset)`` acknowledgements, each of the producer's next value."""
    history = History()
    for producer, partition, offset in acks:
        value = history.send(producer, partition)
        history.ack(value, partition, offset)
    return history


def _log(*values: str, start: int = 0) -> LogRecords:
    return [(start + i, v.encode()) for i, v in enumerate(values)]


def _clean() -> tuple[History, FinalState]:
    history = _history([("a", 0, 0), ("b", 0, 1), ("a", 0, 2), ("a", 1, 0)])
    history.consume(0, 1, b"b:0:0")
    log0 = _log("a:0:0", "b:0:0", "a:0:1")
    log1 = _log("a:1:0")
    final = FinalState(
        logs={0: log0, 1: log1},
        high_watermarks={0: 3, 1: 1},
        replicas={0: {1: log0, 2: log0, 3: [*log0, (3, b"a:0:9")]}, 1: {1: log1, 2: log1}},
        isr={0: (1, 2, 3), 1: (3, 2, 1)},
    )
    return history, final


def test_a_correct_run_has_no_violation() -> None:
    history, final = _clean()
    history.send("a", 0)  # sent, never acknowledged nor stored: allowed
    assert check(history, final, expected_isr={1, 2, 3}) == []


def test_a_lost_acknowledged_record_is_caught() -> None:
    history, final = _clean()
    logs = {0: _log("a:0:0", "b:0:0"), 1: final.logs[1]}
    violations = check(history, FinalState(logs, final.high_watermarks))
    assert violations == ["lost: b'a:0:1' acknowledged at 0/2 is not stored"]


def test_a_duplicate_is_caught() -> None:
    history, final = _clean()
    logs = {0: _log("a:0:0", "b:0:0", "a:0:1", "a:0:1"), 1: final.logs[1]}
    violations = check(history, FinalState(logs, {0: 4, 1: 1}))
    assert violations == ["duplicate: b'a:0:1' stored at 0/2 and again at 0/3"]


def test_a_record_stored_at_another_offset_than_acknowledged_is_caught() -> None:
    history, final = _clean()
    logs = {0: _log("a:0:0", "x", "b:0:0", "a:0:1"), 1: final.logs[1]}
    violations = check(history, FinalState(logs, {0: 4, 1: 1}))
    assert "moved: b'b:0:0' acknowledged at 0/1 is stored at 0/2" in violations
    assert "moved: b'a:0:1' acknowledged at 0/2 is stored at 0/3" in violations
    assert "unknown: b'x' at 0/1 was never sent" in violations


def test_a_reorder_is_caught() -> None:
    # a's two records on partition 0 swapped in the log, and acknowledged that way.
    history = _history([("a", 0, 1), ("a", 0, 0)])
    violations = check(history, FinalState({0: _log("a:0:1", "a:0:0")}, {0: 2}))
    assert violations == [
        "reordered: a on partition 0 was acknowledged b'a:0:1' at 0 after b'a:0:0' at 1",
        "reordered: a sent b'a:0:0' before b'a:0:1' but partition 0 stores them at 1 and 0",
    ]


def test_a_record_a_consumer_saw_that_was_later_lost_is_caught() -> None:
    history, final = _clean()
    history.consume(1, 1, b"a:1:1")  # read above what survived
    history.consume(0, 2, b"zombie")  # read, then replaced by another record
    violations = check(history, final)
    assert violations == [
        "consumed then lost: a consumer read b'a:1:1' at 1/1, which now holds nothing",
        "consumed then lost: a consumer read b'zombie' at 0/2, which now holds b'a:0:1'",
    ]


def test_a_diverged_or_short_replica_is_caught() -> None:
    history, final = _clean()
    replicas = {
        0: {1: final.logs[0], 2: _log("a:0:0", "zombie"), 3: _log("a:0:0", "b:0:0")},
    }
    state = FinalState(final.logs, final.high_watermarks, replicas)
    assert check(history, state) == [
        "replica diverged: node 2 partition 0 below high watermark 3: record #1 is "
        "(1, b'zombie'), the leader has (1, b'b:0:0')",
        "replica diverged: node 3 partition 0 below high watermark 3: record #2 is "
        "'its log end', the leader has (2, b'a:0:1')",
    ]


def test_an_isr_that_did_not_recover_is_caught() -> None:
    history, final = _clean()
    state = FinalState(final.logs, final.high_watermarks, isr={0: (1, 2), 1: (1, 2, 3)})
    assert check(history, state, expected_isr={1, 2, 3}) == [
        "isr: partition 0 has ISR [1, 2], expected [1, 2, 3] after recovery"
    ]
