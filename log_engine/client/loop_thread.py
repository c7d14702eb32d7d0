"""A background thread running an asyncio loop, for the synchronous facades.

Connector tasks are plain threads (DESIGN.md decision 8), while the clients
are asyncio. A :class:`LoopThread` runs the loop; the sync facades submit
coroutines with :meth:`LoopThread.run` and wait with a timeout. Several
clients may share one loop thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from log_engine.client import errors

T = TypeVar("T")


class LoopThread:
    """A daemon thread that owns an event loop until :meth:`stop`."""

    def __init__(self, name: str = "sluice-client-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def in_loop_thread(self) -> bool:
        """Whether the caller runs on the loop's thread (where blocking would deadlock)."""
        return threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop and return its future."""
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError("a blocking client call was made on the client's own loop thread")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result, at most ``timeout_s``."""
        future = self.submit(coro)
        try:
            return future.result(timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise errors.timeout_error(f"call did not complete within {timeout_s}s") from None

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback(*args)`` on the loop thread (thread-safe)."""
        self.loop.call_soon_threadsafe(callback, *args)

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the loop and join the thread."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.in_loop_thread():
            self._thread.join(timeout_s)
