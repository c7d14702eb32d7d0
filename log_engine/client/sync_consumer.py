"""Blocking facade over :class:`~log_engine.client.consumer.Consumer` for plain threads.

Every call runs on the consumer's :class:`~log_engine.client.loop_thread.LoopThread`
and the calling thread waits for it. Rebalance callbacks are the exception
that matters: they run in the thread that called ``poll`` or ``close`` (as in
Kafka's Java consumer), while the loop waits for them, so a callback may call
back into the consumer (``commit`` in ``on_revoke`` is the usual case).
Timeouts are in seconds here, as for other blocking Python APIs.
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any, TypeVar

from log_engine.client.config import ConsumerConfig
from log_engine.client.consumer import Consumer
from log_engine.client.loop_thread import LoopThread
from log_engine.client.types import ConsumerRecord, OffsetAndMetadata, TopicPartition

T = TypeVar("T")
SyncRebalanceCallback = Callable[[list[TopicPartition]], None]
_DONE = object()


class SyncConsumer:
    """A :class:`Consumer` driven from one application thread."""

    def __init__(
        self,
        config: ConsumerConfig | Mapping[str, Any] | None = None,
        *,
        loop_thread: LoopThread | None = None,
        **overrides: Any,
    ) -> None:
        self._owns_loop = loop_thread is None
        self._runner = loop_thread or LoopThread("sluice-consumer")
        self._consumer = Consumer(config, **overrides)
        self.config = self._consumer.config
        self._callbacks: queue.SimpleQueue[Any] | None = None
        self._call_timeout_s = self.config.request_timeout_ms / 1000 * 2

    def __enter__(self) -> SyncConsumer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly ``partitions`` (manual assignment)."""
        self._on_loop(self._consumer.assign, list(partitions))

    def subscribe(
        self,
        topics: Iterable[str],
        on_assign: SyncRebalanceCallback | None = None,
        on_revoke: SyncRebalanceCallback | None = None,
    ) -> None:
        """Join the group; callbacks run in the thread calling ``poll``/``close``."""
        self._on_loop(
            self._consumer.subscribe,
            list(topics),
            self._in_caller_thread(on_assign),
            self._in_caller_thread(on_revoke),
        )

    def unsubscribe(self) -> None:
        self._on_loop(self._consumer.unsubscribe)

    def assignment(self) -> set[TopicPartition]:
        return self._on_loop(self._consumer.assignment)

    def poll(self, timeout_s: float = 0.0) -> list[ConsumerRecord]:
        """Up to ``max.poll.records`` records, waiting at most ``timeout_s`` for some."""
        return self._with_callbacks(self._consumer.poll(int(timeout_s * 1000)))

    def commit(
        self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata] | None = None
    ) -> None:
        """Commit ``offsets``, by default the positions of everything polled."""
        self._run(self._consumer.commit(offsets))

    def committed(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        return self._run(self._consumer.committed(list(partitions)))

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self._on_loop(self._consumer.seek, tp, offset)

    def seek_to_beginning(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._on_loop(self._consumer.seek_to_beginning, partitions)

    def seek_to_end(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        self._on_loop(self._consumer.seek_to_end, partitions)

    def position(self, tp: TopicPartition) -> int:
        return self._run(self._consumer.position(tp))

    def current_lag(self, tp: TopicPartition) -> int | None:
        """:meth:`Consumer.current_lag`: read without a request, from any thread."""
        return self._consumer.current_lag(tp)

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        self._on_loop(self._consumer.pause, list(partitions))

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        self._on_loop(self._consumer.resume, list(partitions))

    def paused(self) -> set[TopicPartition]:
        return self._on_loop(self._consumer.paused)

    def beginning_offsets(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return self._run(self._consumer.beginning_offsets(list(tps)))

    def end_offsets(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        return self._run(self._consumer.end_offsets(list(tps)))

    def close(self) -> None:
        """Commit (with auto commit), leave the group, stop the loop thread."""
        if not self._runner.running:
            return
        try:
            self._with_callbacks(self._consumer.close())
        finally:
            if self._owns_loop:
                self._runner.stop()

    # -- plumbing ------------------------------------------------------------------------

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coro, self._call_timeout_s)

    def _on_loop(self, fn: Callable[..., T], *args: Any) -> T:
        async def call() -> T:
            return fn(*args)

        return self._runner.run(call(), self._call_timeout_s)

    def _with_callbacks(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro``, executing rebalance callbacks it requests in this thread."""
        callbacks: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._callbacks = callbacks
        try:
            future = self._runner.submit(coro)
            future.add_done_callback(lambda _f: callbacks.put(_DONE))
            while (item := callbacks.get()) is not _DONE:
                callback, partitions, done = item
                error: BaseException | None = None
                try:
                    callback(partitions)
                except BaseException as exc:  # handed back to the loop, raised there
                    error = exc
                self._runner.call_soon(_resolve, done, error)
            return future.result()
        finally:
            self._callbacks = None

    def _in_caller_thread(
        self, callback: SyncRebalanceCallback | None
    ) -> Callable[[list[TopicPartition]], Coroutine[Any, Any, None]] | None:
        if callback is None:
            return None

        async def relay(partitions: list[TopicPartition]) -> None:
            callbacks = self._callbacks
            if callbacks is None:  # not inside poll/close: run here, on the loop thread
                callback(partitions)
                return
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            callbacks.put((callback, partitions, done))
            await done

        return relay


def _resolve(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)
