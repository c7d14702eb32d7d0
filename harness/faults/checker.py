"""The checker of a fault-injection run: what clients were told against what is stored.

:func:`check` takes the :class:`~harness.faults.history.History` and what the
cluster holds at the end, and returns every violation as one line of text
(empty: the run was correct). The rules:

- every acknowledged record is in the final log, once, at the partition and
  offset it was acknowledged at (``lost``, ``moved``, ``duplicate``);
- the acknowledged records of one producer on one partition are stored in the
  order they were sent and were acknowledged in offset order (``reordered``);
- every record a consumer read is in the final log at the offset it was read at
  (``consumed then lost``): a consumer never saw a record above a high
  watermark that later fell back;
- every replica's log is identical to the final log below the high watermark
  (``replica diverged``);
- every partition's ISR is the expected one after recovery (``isr``).

Records the clients gave up on (failed) may be stored or not; records nobody
sent (``unknown``) must not be.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from harness.faults.history import History

LogRecords = Sequence[tuple[int, bytes]]
"""One partition's records as ``(offset, value)`` in offset order."""


@dataclass(frozen=True, slots=True)
class FinalState:
    """What the cluster holds once the run is over and the cluster has recovered.

    ``logs``: each partition's records below its high watermark, read from the
    leader; ``high_watermarks`` by partition; ``replicas``: each partition's
    records per node, read from that node's log dir (may go past the high
    watermark); ``isr`` by partition.
    """

    logs: Mapping[int, LogRecords]
    high_watermarks: Mapping[int, int]
    replicas: Mapping[int, Mapping[int, LogRecords]] = field(default_factory=dict)
    isr: Mapping[int, tuple[int, ...]] = field(default_factory=dict)


def check(history: History, final: FinalState, expected_isr: set[int] | None = None) -> list[str]:
    """Every violation of the rules in this module's docstring, one line each."""
    violations: list[str] = []
    where = _index_final(history, final, violations)
    _check_acks(history, where, violations)
    _check_consumed(history, final, violations)
    _check_replicas(final, violations)
    if expected_isr is not None:
        for partition in sorted(final.logs):
            isr = set(final.isr.get(partition, ()))
            if isr != expected_isr:
                violations.append(
                    f"isr: partition {partition} has ISR {sorted(isr)}, "
                    f"expected {sorted(expected_isr)} after recovery"
                )
    return violations


def _index_final(
    history: History, final: FinalState, violations: list[str]
) -> dict[bytes, tuple[int, int]]:
    """Where each value is stored (partition, offset); duplicates and strangers reported."""
    where: dict[bytes, tuple[int, int]] = {}
    for partition, records in sorted(final.logs.items()):
        previous = -1
        for offset, value in records:
            if offset <= previous:
                violations.append(
                    f"log order: partition {partition} has offset {offset} after {previous}"
                )
            previous = offset
            if value in where:
                first = where[value]
                violations.append(
                    f"duplicate: {value!r} stored at {first[0]}/{first[1]} and again at "
                    f"{partition}/{offset}"
                )
                continue
            where[value] = (partition, offset)
            if value not in history.sent:
                violations.append(f"unknown: {value!r} at {partition}/{offset} was never sent")
    return where


def _check_acks(
    history: History, where: Mapping[bytes, tuple[int, int]], violations: list[str]
) -> None:
    acked_at: dict[bytes, tuple[int, int]] = {}
    for ack in history.acked:
        if ack.value in acked_at and acked_at[ack.value] != (ack.partition, ack.offset):
            first = acked_at[ack.value]
            violations.append(
                f"duplicate: {ack.value!r} acknowledged at {first[0]}/{first[1]} and again at "
                f"{ack.partition}/{ack.offset}"
            )
        acked_at.setdefault(ack.value, (ack.partition, ack.offset))
        stored = where.get(ack.value)
        if stored is None:
            violations.append(
                f"lost: {ack.value!r} acknowledged at {ack.partition}/{ack.offset} is not stored"
            )
        elif stored != (ack.partition, ack.offset):
            violations.append(
                f"moved: {ack.value!r} acknowledged at {ack.partition}/{ack.offset} is stored at "
                f"{stored[0]}/{stored[1]}"
            )

    # Per producer and partition: acknowledged in offset order, stored in send order.
    ack_offsets: dict[tuple[str, int], list[tuple[int, bytes]]] = defaultdict(list)
    for ack in history.acked:
        sent = history.sent.get(ack.value)
        if sent is not None:
            ack_offsets[(sent.producer, ack.partition)].append((ack.offset, ack.value))
    for (producer, partition), offsets in sorted(ack_offsets.items()):
        for (before, before_value), (after, after_value) in pairwise(offsets):
            if after <= before:
                violations.append(
                    f"reordered: {producer} on partition {partition} was acknowledged "
                    f"{after_value!r} at {after} after {before_value!r} at {before}"
                )
    stored_by_seq: dict[tuple[str, int], list[tuple[int, int, bytes]]] = defaultdict(list)
    for value in acked_at:
        sent = history.sent.get(value)
        if sent is not None and value in where:
            entry = (sent.seq, where[value][1], value)
            stored_by_seq[(sent.producer, sent.partition)].append(entry)
    for (producer, partition), entries in sorted(stored_by_seq.items()):
        entries.sort()
        for (_, before, before_value), (_, after, after_value) in pairwise(entries):
            if after <= before:
                violations.append(
                    f"reordered: {producer} sent {before_value!r} before {after_value!r} but "
                    f"partition {partition} stores them at {before} and {after}"
                )


def _check_consumed(history: History, final: FinalState, violations: list[str]) -> None:
    stored = {p: dict(records) for p, records in final.logs.items()}
    for read in history.consumed:
        value = stored.get(read.partition, {}).get(read.offset)
        if value != read.value:
            now = "nothing" if value is None else repr(value)
            violations.append(
                f"consumed then lost: a consumer read {read.value!r} at "
                f"{read.partition}/{read.offset}, which now holds {now}"
            )


def _check_replicas(final: FinalState, violations: list[str]) -> None:
    for partition, by_node in sorted(final.replicas.items()):
        high_watermark = final.high_watermarks.get(partition, 0)
        expected = [(o, v) for o, v in final.logs.get(partition, ()) if o < high_watermark]
        for node, records in sorted(by_node.items()):
            below = [(o, v) for o, v in records if o < high_watermark]
            if below == expected:
                continue
            mismatch = next(
                (i for i, (a, b) in enumerate(zip(below, expected, strict=False)) if a != b),
                min(len(below), len(expected)),
            )
            mine = below[mismatch] if mismatch < len(below) else "its log end"
            theirs = expected[mismatch] if mismatch < len(expected) else "the high watermark"
            violations.append(
                f"replica diverged: node {node} partition {partition} below high watermark "
                f"{high_watermark}: record #{mismatch} is {mine!r}, the leader has {theirs!r}"
            )
