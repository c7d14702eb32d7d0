"""What clients can make the broker hold: open connections and request bytes.

Two bounds, with Kafka's keys:

- :class:`ConnectionQuota`: ``max.connections`` in all and
  ``max.connections.per.ip`` (with ``max.connections.per.ip.overrides``) per
  client address. A new connection over either is closed at once, as Kafka's
  broker does; the refusal is logged at most once per ``_LOG_EVERY_S``.
- :class:`RequestMemoryPool`: ``queued.max.request.bytes``, the bytes of
  request bodies held at once by all connections. Bodies are charged as they
  are allocated (in bounded chunks as their bytes arrive, never the declared
  size up front), and released when the request has been answered. A
  connection whose next chunk does not fit waits, reading nothing more, until
  memory frees (Kafka mutes the channel the same way). When nothing is held,
  any chunk is granted, so a frame larger than the pool still gets through.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time

log = logging.getLogger(__name__)

_LOG_EVERY_S = 10.0


class ConnectionQuota:
    """Counts open connections per client address against the configured limits."""

    def __init__(self, max_total: int, max_per_ip: int, per_ip: dict[str, int]) -> None:
        self._max_total = max_total
        self._max_per_ip = max_per_ip
        self._per_ip_limits = per_ip
        self._open: collections.Counter[str] = collections.Counter()
        self._total = 0
        self._refused = 0
        self._last_log = 0.0

    @property
    def open_connections(self) -> int:
        return self._total

    def admit(self, ip: str) -> bool:
        """Count a new connection from ``ip``; False (and nothing counted) if over a limit."""
        limit = self._per_ip_limits.get(ip, self._max_per_ip)
        if self._total >= self._max_total:
            self._refuse(ip, f"max.connections={self._max_total}")
            return False
        if self._open[ip] >= limit:
            self._refuse(ip, f"max.connections.per.ip={limit}")
            return False
        self._open[ip] += 1
        self._total += 1
        return True

    def release(self, ip: str) -> None:
        """A connection admitted from ``ip`` has closed."""
        self._open[ip] -= 1
        if self._open[ip] <= 0:
            del self._open[ip]
        self._total -= 1

    def _refuse(self, ip: str, limit: str) -> None:
        self._refused += 1
        now = time.monotonic()
        if now - self._last_log >= _LOG_EVERY_S:
            log.warning(
                "closing new connection from %s: %s reached (%d refused since the last line)",
                ip,
                limit,
                self._refused,
            )
            self._last_log = now
            self._refused = 0


class RequestMemoryPool:
    """A byte budget for request bodies shared by all connections (-1: unbounded)."""

    def __init__(self, capacity_bytes: int) -> None:
        self._capacity = capacity_bytes
        self._used = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def used_bytes(self) -> int:
        return self._used

    async def acquire(self, size: int) -> None:
        """Take ``size`` bytes, waiting while they do not fit (first come, first served)."""
        if not self._waiters and self._fits(size):
            self._used += size
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            while True:
                await waiter
                if self._fits(size):
                    break
                waiter = asyncio.get_running_loop().create_future()
                self._waiters.appendleft(waiter)
        except BaseException:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
            self._wake()
            raise
        self._used += size
        self._wake()

    def release(self, size: int) -> None:
        """Give back ``size`` bytes taken with :meth:`acquire`."""
        self._used -= size
        self._wake()

    def _fits(self, size: int) -> bool:
        return self._capacity < 0 or self._used == 0 or self._used + size <= self._capacity

    def _wake(self) -> None:
        """Let the first waiter look again (it re-queues at the front if it still does not fit)."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
