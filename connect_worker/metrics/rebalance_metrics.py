"""``connect-worker-rebalance-metrics``: a distributed worker's rebalances, as Kafka Connect's.

:class:`WorkerGroupMember` (``connect_worker.distributed.membership``) marks a
rebalance started when it sends a JoinGroup (the first join included) and
completed when an assignment arrives that did not fail; the collector renders
the attributes with the worker's naming scheme (``docs/metrics.md``), each
``kafka_connect_connect_worker_rebalance_metrics_`` + the attribute with ``_``:

- ``completed-rebalances-total`` (counter); ``rebalancing`` (1 from JoinGroup
  to assignment); ``epoch`` (the group generation of the last assignment);
- ``leader-name`` and ``connect-protocol``, strings: one series of value 1
  with the string as label (``leader_name{leader_name="<leader's URL>"} 1``);
- ``rebalance-avg-time-ms``, ``rebalance-max-time-ms`` over the sample
  window; ``time-since-last-rebalance-ms`` (+Inf before the first, as Kafka's).

Written on the member's event loop, read by the scrape: plain attributes, as
the task metrics are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from connect_worker.metrics.stats import SampleWindow, WindowedStat

if TYPE_CHECKING:
    from connect_worker.metrics.collector import _Families

PREFIX = "kafka_connect_connect_worker_rebalance_metrics_"


class RebalanceMetrics:
    """One distributed worker's rebalance history (module doc)."""

    def __init__(self, window: SampleWindow, now: float) -> None:
        self.connect_protocol = ""
        self.leader_name = ""
        self.epoch = -1
        self.completed_total = 0
        self.rebalancing = False
        self._started_at: float | None = None
        self.time_ms = WindowedStat(window, now)
        self.last_completed_at: float | None = None

    def started(self, now: float) -> None:
        """A JoinGroup is being sent (a rebalance already under way goes on)."""
        if not self.rebalancing:
            self.rebalancing = True
            self._started_at = now

    def completed(self, protocol: str, leader_url: str, generation: int, now: float) -> None:
        """An assignment for ``generation`` arrived and did not fail."""
        if self._started_at is not None:
            self.time_ms.record((now - self._started_at) * 1000, now)
        self._started_at = None
        self.rebalancing = False
        self.completed_total += 1
        self.epoch = generation
        self.leader_name = leader_url
        self.connect_protocol = protocol
        self.last_completed_at = now

    def render(self, out: _Families, now: float) -> None:
        """Add the attributes to a scrape's families."""
        out.add(PREFIX + "completed_rebalances_total", "Rebalances this worker completed.",
                [], [], self.completed_total)
        out.add(PREFIX + "rebalancing", "1 while a rebalance is under way, else 0.",
                [], [], 1 if self.rebalancing else 0)
        out.add(PREFIX + "epoch", "The group generation of the last assignment.",
                [], [], self.epoch)
        if self.leader_name:
            out.add(PREFIX + "leader_name", "The group leader's URL (value 1).",
                    ["leader_name"], [self.leader_name], 1)
        if self.connect_protocol:
            out.add(PREFIX + "connect_protocol", "The Connect protocol in use (value 1).",
                    ["connect_protocol"], [self.connect_protocol], 1)
        out.add(PREFIX + "rebalance_avg_time_ms", "Average rebalance time (ms).",
                [], [], self.time_ms.avg(now))
        out.add(PREFIX + "rebalance_max_time_ms", "Longest rebalance (ms).",
                [], [], self.time_ms.max(now))
        since = float("inf") if self.last_completed_at is None else (
            (now - self.last_completed_at) * 1000
        )
        out.add(PREFIX + "time_since_last_rebalance_ms",
                "Time since the last completed rebalance (ms; +Inf before the first).",
                [], [], since)
