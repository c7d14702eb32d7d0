"""Which source offsets may be committed, and committing them.

A source record's offset may be stored only once the log acknowledged that
record *and every earlier record of the same source partition*: otherwise a
crash after the commit would skip the earlier, unacknowledged records.
:class:`SubmittedRecords` keeps, per source partition, the records sent but
not yet acknowledged in send order (in runs of records sharing one delivery:
a batch of records sent together is a few entries, not one per record);
:meth:`SubmittedRecords.collect` pops the acknowledged prefix of each queue and
remembers the newest offset popped.
Records dropped by a transform or skipped as bad count as acknowledged at
once (they are submitted with no future), so their offsets move on too.

:class:`OffsetCommitter` writes those offsets to the :class:`OffsetStore`
as soon as the task's first records are acknowledged, then every
``offset.flush.interval.ms`` and once more at stop (after flushing the
producer), then calls ``task.commit()``. The early first commit bounds what a
crash soon after a start re-sends (see "Duplicates after a crash" in the
README): without it, a worker killed again and again within one
interval of its start would re-send everything since the last stored offset
every time. It runs in the task's own thread, so
the plugin never sees ``commit`` concurrently with ``poll``.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures._base import FINISHED
from typing import Any

from connect_worker.storage.offsets import OffsetStore, partition_key
from connectors.api import SourceRecord, SourceTask
from log_engine.client.errors import PartialDeliveryError

log = logging.getLogger(__name__)

Delivery = concurrent.futures.Future[Any]
FailureHandler = Callable[[SourceRecord, BaseException], None]
_NO_KEY = object()
#: Deliveries are checked by reading the future's state without taking its lock
#: (``done()`` and ``exception()`` would take it twice per record, a third of this
#: loop's cost). Safe because producers only finish futures, never cancel them, and
#: set ``_exception`` before ``_state`` (see log_engine.client.delivery).
_FINISHED = FINISHED


class _Run:
    """Consecutive records of one source partition waiting for one delivery.

    ``records[start:stop]`` are the records not yet collected; ``start`` moves on as a
    failed run's records are handed to the failure handler one by one. ``first`` is
    the index in ``records`` of the delivery's first record (a ``send_many`` segment
    may span several runs), which a :class:`PartialDeliveryError` counts from.
    """

    __slots__ = ("delivery", "first", "records", "start", "stop")

    def __init__(
        self, delivery: Delivery | None, records: Sequence[SourceRecord], start: int, stop: int,
        first: int,
    ) -> None:
        self.delivery = delivery
        self.records = records
        self.start = start
        self.stop = stop
        self.first = first


class SubmittedRecords:
    """Records handed to the producer and not yet acknowledged, per source partition.

    Records are tracked in runs: consecutive records of one source partition that
    share a delivery (a ``send_many`` segment, or a single record), so a batch of
    thousands of records costs a few queue entries. Used by one thread (the
    task's). ``in_flight`` counts every record not yet collected; the runner keeps
    it under its in-flight bound.
    """

    def __init__(self) -> None:
        self._pending: dict[str | None, deque[_Run]] = {}
        self._committable: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        self._last_partition: object = _NO_KEY
        self._last_key: str | None = None
        self.in_flight = 0
        self.acked_since_take = 0

    def submit(self, record: SourceRecord, delivery: Delivery | None) -> None:
        """Track ``record``; ``delivery`` None means nothing to wait for (dropped record)."""
        self._queue(record.source_partition).append(_Run(delivery, (record,), 0, 1, 0))
        self.in_flight += 1

    def submit_many(
        self,
        records: Sequence[SourceRecord],
        start: int,
        stop: int,
        delivery: Delivery | None,
    ) -> None:
        """Track ``records[start:stop]``, all delivered by ``delivery``.

        ``delivery`` None means nothing to wait for (dropped or skipped records).
        """
        index = start
        while index < stop:
            partition = records[index].source_partition
            end = index + 1
            while end < stop:
                other = records[end].source_partition
                if other is not partition and other != partition:
                    break
                end += 1
            self._queue(partition).append(_Run(delivery, records, index, end, start))
            index = end
        self.in_flight += stop - start

    def _queue(self, partition: dict[str, Any] | None) -> deque[_Run]:
        if partition is self._last_partition or partition == self._last_partition:
            key = self._last_key
        else:
            key = None if partition is None else partition_key(partition)
            self._last_partition, self._last_key = partition, key
        queue = self._pending.get(key)
        if queue is None:
            queue = self._pending[key] = deque()
        return queue

    def collect(
        self,
        on_ack: Callable[[SourceRecord], None] | None = None,
        on_failure: FailureHandler | None = None,
    ) -> None:
        """Pop the acknowledged prefix of every partition's queue.

        A failed delivery goes to ``on_failure`` once per record (which raises to
        fail the task, or returns to skip the record); without one its exception
        is raised. ``on_ack`` is called for each acknowledged record, in order.
        """
        emptied = []
        for key, queue in self._pending.items():
            newest: SourceRecord | None = None
            try:
                while queue:
                    run = queue[0]
                    delivery, records = run.delivery, run.records
                    if delivery is not None:
                        if delivery._state != _FINISHED:  # no lock: see _FINISHED
                            break
                        error = delivery._exception
                        if error is not None:
                            if on_failure is None:
                                raise error
                            # Only the records not delivered go to on_failure; the others
                            # of a partly delivered segment landed and count as acked.
                            failed = error.failed if type(error) is PartialDeliveryError else None
                            while run.start < run.stop:  # each record once, even if one raises
                                record = records[run.start]
                                record_error = (
                                    error if failed is None else failed.get(run.start - run.first)
                                )
                                if record_error is not None:
                                    on_failure(record, record_error)
                                run.start += 1
                                self._popped(1)
                                if record.source_offset is not None:
                                    newest = record
                                if on_ack is not None:
                                    on_ack(record)
                            queue.popleft()
                            continue
                    queue.popleft()
                    self._popped(run.stop - run.start)
                    for index in range(run.stop - 1, run.start - 1, -1):
                        if records[index].source_offset is not None:
                            newest = records[index]
                            break
                    if on_ack is not None:
                        for index in range(run.start, run.stop):
                            on_ack(records[index])
            finally:  # even when a failed delivery interrupts: what was popped is committable
                if newest is not None and key is not None:
                    partition, offset = newest.source_partition, newest.source_offset
                    assert partition is not None and offset is not None
                    self._committable[key] = (partition, offset)
            if not queue:
                emptied.append(key)
        for key in emptied:
            del self._pending[key]

    def _popped(self, count: int) -> None:
        self.in_flight -= count
        self.acked_since_take += count

    def oldest_pending(self) -> Delivery | None:
        """The delivery at the head of some partition's queue (to wait on), if any."""
        for queue in self._pending.values():
            if queue and queue[0].delivery is not None:
                return queue[0].delivery
        return None

    @property
    def has_committable(self) -> bool:
        """Some acknowledged offsets wait to be stored."""
        return bool(self._committable)

    def take_committable(self) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
        """Offsets that became committable since the last take: key -> (partition, offset)."""
        taken, self._committable = self._committable, {}
        self.acked_since_take = 0
        return taken

    def restore(self, offsets: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> None:
        """Put back offsets whose commit failed (newer ones collected since win)."""
        for key, value in offsets.items():
            self._committable.setdefault(key, value)


class OffsetCommitter:
    """Commits one source task's offsets on a timer and at stop (see the module doc)."""

    def __init__(
        self,
        connector: str,
        task: SourceTask,
        store: OffsetStore,
        submitted: SubmittedRecords,
        *,
        interval_ms: int,
        on_ack: Callable[[SourceRecord], None] | None,
        on_failure: FailureHandler | None,
        first_ack_wait_ms: int = 5000,
        on_commit: Callable[[float, bool, float], None] | None = None,
    ) -> None:
        self._connector = connector
        self._on_commit = on_commit
        self._task = task
        self._store = store
        self._submitted = submitted
        self._interval_s = interval_ms / 1000
        self._on_ack = on_ack
        self._on_failure = on_failure
        self._next_commit = time.monotonic() + self._interval_s
        self._stored_once = False
        self._first_ack_wait_s = first_ack_wait_ms / 1000
        self.commits = 0

    def collect(self) -> None:
        """Advance past acknowledged records (raises when a delivery failed)."""
        self._submitted.collect(self._on_ack, self._on_failure)

    def maybe_commit(self, now: float) -> None:
        """Commit when the flush interval has passed, or once the first records are acknowledged.

        Until the first offsets are stored, this waits (at most ``first_ack_wait_ms``)
        for the oldest record in flight, so the first batch's offsets are stored
        right after its acknowledgement rather than after the next ``poll()``.
        """
        if not self._stored_once:
            oldest = self._submitted.oldest_pending()
            if oldest is not None:
                concurrent.futures.wait([oldest], timeout=self._first_ack_wait_s)
                self.collect()
            if self._submitted.has_committable:
                self._stored_once = True  # tried once: a failing store waits for the interval
                self.commit()
                return
        if now >= self._next_commit:
            self.commit()

    def _committed(self, started: float, *, ok: bool) -> None:
        """Tell ``on_commit`` (the task's metrics) how long a commit took and whether it held."""
        if self._on_commit is not None:
            now = time.monotonic()
            self._on_commit(now - started, ok, now)

    def commit(self) -> bool:
        """Store the committable offsets and call ``task.commit()``; False if storing failed."""
        self._next_commit = time.monotonic() + self._interval_s
        self.collect()
        acked = self._submitted.acked_since_take
        offsets = self._submitted.take_committable()
        if offsets:
            started = time.monotonic()
            try:
                self._store.put_all(self._connector, {k: off for k, (_, off) in offsets.items()})
                self._store.flush()
            except Exception:
                log.exception("%s: storing %d source offsets failed", self._connector, len(offsets))
                self._submitted.restore(offsets)
                self._committed(started, ok=False)
                return False
            self._committed(started, ok=True)
        if offsets or acked:
            self.commits += 1
            try:
                self._task.commit()
            except Exception:
                log.exception("%s: the task's commit() raised; continuing", self._connector)
        return True
