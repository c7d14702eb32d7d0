"""Windowed statistics as Kafka's metrics library keeps them: rate, average, maximum.

A :class:`WindowedStat` keeps ``num_samples`` samples of ``window_s`` seconds
each (Kafka's ``metrics.num.samples`` and ``metrics.sample.window.ms``); a
value is recorded into the current sample, and samples older than
``num_samples`` windows are forgotten. Reads combine the live samples:

- ``rate(now)``: the sum of values over the time the samples cover (at least
  ``num_samples - 1`` windows, as Kafka's ``Rate``, so a burst just after
  start-up is not reported as a huge rate);
- ``avg(now)`` and ``max(now)`` over the recorded values.

Cost: the runners record once per batch, not per record; one record is a few
attribute updates. One thread records (the task's); readers (the ``/metrics``
scrape) may see a sample being filled, which only makes a read a batch late.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SampleWindow:
    """``metrics.sample.window.ms`` and ``metrics.num.samples``, in seconds and count."""

    window_s: float = 30.0
    num_samples: int = 2


class _Sample:
    __slots__ = ("count", "max", "start", "total")

    def __init__(self, start: float) -> None:
        self.start = start
        self.count = 0
        self.total = 0.0
        self.max = float("-inf")


class WindowedStat:
    """Count, sum and maximum of recorded values over the last samples (module doc)."""

    __slots__ = ("_current", "_samples", "_window")

    def __init__(self, window: SampleWindow, now: float) -> None:
        self._window = window
        self._current = _Sample(now)
        self._samples: list[_Sample] = [self._current]

    def record(self, value: float, now: float) -> None:
        current = self._current
        if now - current.start >= self._window.window_s:
            current = self._current = _Sample(now)
            samples = self._samples
            samples.append(current)
            if len(samples) > self._window.num_samples:
                del samples[0]
        current.count += 1
        current.total += value
        if value > current.max:
            current.max = value

    def _live(self, now: float) -> list[_Sample]:
        horizon = now - self._window.window_s * self._window.num_samples
        return [s for s in list(self._samples) if s.start >= horizon]

    def rate(self, now: float) -> float:
        """Sum of the values per second over the live samples."""
        live = self._live(now)
        if not live:
            return 0.0
        elapsed = now - live[0].start
        elapsed = max(elapsed, self._window.window_s * (self._window.num_samples - 1), 1e-3)
        return sum(s.total for s in live) / elapsed

    def avg(self, now: float) -> float:
        """Average of the values recorded in the live samples (0 when none)."""
        live = self._live(now)
        count = sum(s.count for s in live)
        return sum(s.total for s in live) / count if count else 0.0

    def max(self, now: float) -> float:
        """Largest value recorded in the live samples (0 when none)."""
        values = [s.max for s in self._live(now) if s.count]
        return max(values) if values else 0.0
