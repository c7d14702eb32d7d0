"""``RebalanceSchedule``: when the active controller checks the preferred leaders.

With ``auto.leader.rebalance.enable`` (Kafka's auto leader rebalance), the
first ``tick`` of an active controller starts the schedule; the check
(``elections.elect_preferred``) is due one ``leader_imbalance_check_interval_ms``
later, then once every interval. A controller that stops leading starts again
from its next activation. Without it, the check is never due.
"""

from __future__ import annotations


class RebalanceSchedule:
    """The next preferred-leader check; times in milliseconds."""

    def __init__(self, enabled: bool, interval_ms: int) -> None:
        self.enabled = enabled
        self.interval_ms = interval_ms
        self._at_ms: int | None = None  # None: not started

    def due(self, now_ms: int) -> bool:
        """Whether the check is due now (then the next is one interval later); the first
        call starts the schedule."""
        if not self.enabled:
            return False
        if self._at_ms is None:
            self._at_ms = now_ms + self.interval_ms
            return False
        if now_ms < self._at_ms:
            return False
        self._at_ms = now_ms + self.interval_ms
        return True

    def next_ms(self, now_ms: int) -> int | None:
        """When :meth:`due` has something to do next (``now_ms``: start the schedule)."""
        if not self.enabled:
            return None
        return now_ms if self._at_ms is None else self._at_ms

    def clear(self) -> None:
        self._at_ms = None
