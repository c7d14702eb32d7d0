"""Exponential backoff with jitter, for retries and automatic task restarts."""

from __future__ import annotations

import random


class ExponentialBackoff:
    """Delays that double from ``initial_ms`` up to ``max_ms``, each +/- ``jitter``.

    Call :meth:`next_delay_s` before each retry and :meth:`reset` once the
    operation succeeded. Jitter keeps tasks that failed together from retrying
    in lockstep.
    """

    def __init__(self, initial_ms: int, max_ms: int, *, jitter: float = 0.2) -> None:
        if initial_ms <= 0 or max_ms < initial_ms:
            raise ValueError(f"bad backoff bounds: initial {initial_ms} ms, max {max_ms} ms")
        self.initial_ms = initial_ms
        self.max_ms = max_ms
        self._jitter = jitter
        self._attempts = 0

    @property
    def attempts(self) -> int:
        """Retries since the last :meth:`reset`."""
        return self._attempts

    def next_delay_s(self) -> float:
        """The delay before the next attempt, in seconds."""
        base_ms = float(min(self.max_ms, self.initial_ms * 2 ** min(self._attempts, 62)))
        self._attempts += 1
        spread = base_ms * self._jitter
        jittered_ms = min(float(self.max_ms), base_ms + random.uniform(-spread, spread))
        return max(0.0, jittered_ms / 1000)

    def reset(self) -> None:
        self._attempts = 0
