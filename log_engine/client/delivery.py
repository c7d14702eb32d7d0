"""Futures of records sent through the sync producer, cheap enough for the hot path.

``SyncProducer.send`` must return a ``concurrent.futures.Future`` per record.
A plain ``Future`` costs a ``threading.Condition`` and two lists when created,
and a lock round, a wake-up and a ``RecordMetadata`` when resolved; with
hundreds of thousands of records in flight those objects also keep the
cyclic garbage collector busy. Measured on 100-byte records, that was more
than half of the producer's CPU time.

:class:`DeliveryFuture` keeps the ``Future`` interface (``result``,
``exception``, ``done``, callbacks, ``concurrent.futures.wait`` and
``as_completed``) and sets the same private attributes the base class works
with, but:

- all futures of a batch share one condition, held while the whole batch is
  resolved, so a waiter wakes only once its own future is done;
- the waiter and callback lists are created only if someone uses them;
- the ``RecordMetadata`` is built when asked for, from the batch's
  :class:`BatchOutcome` (base offset, timestamps).

:class:`SegmentFuture` is the same for a run of consecutive records of one
batch (``SyncProducer.send_many``): one future per run instead of one per
record; its result is the list of the run's ``RecordMetadata``.

``cancel`` returns False: a record handed to the producer cannot be withdrawn.
This relies on ``concurrent.futures.Future``'s private attributes, which have
been stable since Python 3.2; ``tests/unit/client`` exercises the public API.
"""

from __future__ import annotations

import concurrent.futures
import threading
from concurrent.futures._base import FINISHED, PENDING
from typing import Any

from log_engine.client.types import RecordMetadata, TopicPartition


class BatchOutcome:
    """What happened to one batch, shared by its records' futures."""

    __slots__ = ("base_offset", "condition", "log_append_time", "timestamps", "tp")

    def __init__(self, tp: TopicPartition, timestamps: list[int]) -> None:
        self.tp = tp
        self.timestamps = timestamps
        self.condition = threading.Condition()
        self.base_offset = -1
        self.log_append_time = -1

    def metadata(self, index: int) -> RecordMetadata:
        """The RecordMetadata of the batch's ``index``-th record."""
        timestamp = self.log_append_time if self.log_append_time >= 0 else self.timestamps[index]
        offset = self.base_offset + index if self.base_offset >= 0 else -1
        return RecordMetadata(self.tp.topic, self.tp.partition, offset, timestamp)


class DeliveryFuture(concurrent.futures.Future):  # type: ignore[type-arg]
    """The future of one record in a batch (see the module docstring)."""

    def __init__(self, outcome: BatchOutcome, index: int) -> None:
        # Deliberately not Future.__init__: the same state, shared or created lazily.
        self._condition = outcome.condition
        self._state = PENDING
        self._exception: BaseException | None = None
        self._outcome = outcome
        self._index = index
        self._waiter_list: list[Any] | None = None
        self._callback_list: list[Any] | None = None

    @property  # type: ignore[override]
    def _result(self) -> RecordMetadata | None:
        if self._state == FINISHED and self._exception is None:
            return self._outcome.metadata(self._index)
        return None

    @_result.setter
    def _result(self, value: Any) -> None:  # only set_result() writes it; we never call it
        pass

    @property
    def _waiters(self) -> list[Any]:
        if self._waiter_list is None:
            self._waiter_list = []
        return self._waiter_list

    @_waiters.setter
    def _waiters(self, value: list[Any]) -> None:
        self._waiter_list = value

    @property
    def _done_callbacks(self) -> list[Any]:
        if self._callback_list is None:
            self._callback_list = []
        return self._callback_list

    @_done_callbacks.setter
    def _done_callbacks(self, value: list[Any]) -> None:
        self._callback_list = value

    def cancel(self) -> bool:
        return False

    @staticmethod
    def finish_all(
        outcome: BatchOutcome, futures: list[DeliveryFuture], error: BaseException | None
    ) -> None:
        """Resolve a batch's futures (failed with ``error`` if given) in one lock round."""
        with_callbacks = []
        with outcome.condition:
            for future in futures:
                if future._state != PENDING:
                    continue
                future._exception = error
                future._state = FINISHED
                if future._waiter_list:
                    for waiter in future._waiter_list:
                        if error is None:
                            waiter.add_result(future)
                        else:
                            waiter.add_exception(future)
                if future._callback_list:
                    with_callbacks.append(future)
            outcome.condition.notify_all()
        for future in with_callbacks:
            future._invoke_callbacks()  # type: ignore[attr-defined]


class SegmentFuture(DeliveryFuture):
    """The future of records ``start``..``stop - 1`` of one batch (see the module docstring)."""

    def __init__(self, outcome: BatchOutcome, start: int, stop: int) -> None:
        super().__init__(outcome, start)
        self._stop = stop

    @property  # type: ignore[override]
    def _result(self) -> list[RecordMetadata] | None:
        if self._state == FINISHED and self._exception is None:
            metadata = self._outcome.metadata
            return [metadata(index) for index in range(self._index, self._stop)]
        return None

    @_result.setter
    def _result(self, value: Any) -> None:  # only set_result() writes it; we never call it
        pass

    @property
    def record_count(self) -> int:
        """How many records this future stands for."""
        return self._stop - self._index
