"""``ThrottledLog``: one log line per key and interval for an event that repeats.

A misconfigured node retries a refused request every heartbeat; a line for
each would bury the rest of the log. The first event of a key is logged at
once; later ones within ``interval_s`` are counted, and the next line says how
many were not logged.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable

_MAX_KEYS = 1024  # a bound on what is remembered (keys are principals and APIs)


class ThrottledLog:
    """Logs a repeated event at most once per ``interval_s`` for each key."""

    def __init__(
        self,
        logger: logging.Logger,
        interval_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._interval_s = interval_s
        self._clock = clock
        self._last: dict[Hashable, tuple[float, int]] = {}  # key -> (logged at, not logged)

    def warning(self, key: Hashable, message: str, *args: object) -> None:
        """Log ``message % args`` at WARNING unless ``key`` was logged within the interval."""
        now = self._clock()
        logged_at, skipped = self._last.get(key, (None, 0))
        if logged_at is not None and now - logged_at < self._interval_s:
            self._last[key] = (logged_at, skipped + 1)
            return
        if len(self._last) >= _MAX_KEYS and key not in self._last:
            self._last.clear()
        suffix = f" ({skipped} more like it not logged in the last {self._interval_s:.0f} s)"
        self._logger.warning(message + "%s", *args, suffix if skipped else "")
        self._last[key] = (now, 0)
