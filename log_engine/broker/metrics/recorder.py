"""What the broker counts while it serves requests: the hot-path half of its metrics.

:class:`BrokerMetrics` is plain Python counters, updated on the broker's event
loop and read by the scrape (:mod:`.collector`, which reads them on the same
loop). No prometheus_client object is touched on the data path:

- per request: one count per (API name, version) and one latency into a
  fixed-size reservoir (:data:`RESERVOIR_SIZE` latest requests per API, as
  Kafka's request histograms keep a bounded sample; the p50/p99 are computed
  from it at scrape time);
- per produced partition: messages and bytes added to its topic's counters,
  once per partition of a Produce request (never per record);
- per fetched partition: bytes out, once per partition of a Fetch answer;
- ISR shrinks and expands of partitions this broker leads; bytes the replica
  fetchers append (replication bytes in).

Request names are Kafka's (``ApiKeys.name``: ``Produce``, ``ListOffsets``...);
a Fetch also counts as ``FetchConsumer`` or ``FetchFollower``, as Kafka's
request metrics do.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from log_engine.protocol import ApiKey

RESERVOIR_SIZE = 1028
"""Latencies kept per API (the size of the Yammer histograms' reservoir Kafka uses)."""

_FETCH = int(ApiKey.FETCH)
FETCH_CONSUMER = "FetchConsumer"
FETCH_FOLLOWER = "FetchFollower"

REQUEST_NAMES: dict[int, str] = {
    int(key): "".join(word.capitalize() for word in key.name.split("_")) for key in ApiKey
}
"""API key -> Kafka's request name (``OFFSET_FOR_LEADER_EPOCH`` -> ``OffsetForLeaderEpoch``)."""


class TopicStats:
    """Kafka's ``BrokerTopicMetrics`` of one topic, as running totals."""

    __slots__ = (
        "bytes_in",
        "bytes_out",
        "failed_fetch_requests",
        "failed_produce_requests",
        "fetch_requests",
        "messages_in",
        "produce_requests",
    )

    def __init__(self) -> None:
        self.messages_in = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.produce_requests = 0
        self.fetch_requests = 0
        self.failed_produce_requests = 0
        self.failed_fetch_requests = 0


class RequestStats:
    """One API's request count per version, total time and latest latencies (ms)."""

    __slots__ = ("by_version", "recent_ms", "time_ms_sum")

    def __init__(self) -> None:
        self.by_version: dict[int, int] = {}
        self.time_ms_sum = 0.0
        self.recent_ms: deque[float] = deque(maxlen=RESERVOIR_SIZE)

    def record(self, version: int, time_ms: float) -> None:
        by_version = self.by_version
        by_version[version] = by_version.get(version, 0) + 1
        self.time_ms_sum += time_ms
        self.recent_ms.append(time_ms)

    @property
    def count(self) -> int:
        return sum(self.by_version.values())

    def quantile(self, q: float) -> float:
        """The ``q`` quantile (nearest rank) of the latest latencies; 0 when none."""
        recent = sorted(self.recent_ms)
        if not recent:
            return 0.0
        rank = min(len(recent) - 1, max(0, int(q * len(recent) + 0.5) - 1))
        return recent[rank]


class BrokerMetrics:
    """The broker's running counters (module doc); one per broker."""

    def __init__(self) -> None:
        self.topics: dict[str, TopicStats] = {}
        self.requests: dict[str, RequestStats] = {}
        self._by_key: dict[int, RequestStats] = {}  # the same objects by API key (hot path)
        self.isr_shrinks = 0
        self.isr_expands = 0
        self.replication_bytes_out = 0
        self.replication_bytes_in = 0  # the replica fetchers add what they append

    def topic(self, name: str) -> TopicStats:
        stats = self.topics.get(name)
        if stats is None:
            stats = self.topics[name] = TopicStats()
        return stats

    def _request(self, name: str) -> RequestStats:
        stats = self.requests.get(name)
        if stats is None:
            stats = self.requests[name] = RequestStats()
        return stats

    def request_done(self, api_key: int, version: int, body: Any, seconds: float) -> None:
        """A request was answered ``seconds`` after its frame was read."""
        time_ms = seconds * 1000.0
        stats = self._by_key.get(api_key)
        if stats is None:
            stats = self._by_key[api_key] = self._request(REQUEST_NAMES.get(api_key, str(api_key)))
        by_version = stats.by_version
        by_version[version] = by_version.get(version, 0) + 1
        stats.time_ms_sum += time_ms
        stats.recent_ms.append(time_ms)
        if api_key == _FETCH:
            follower = body.get("replica_id", -1) >= 0
            self._request(FETCH_FOLLOWER if follower else FETCH_CONSUMER).record(version, time_ms)

    def appended(self, topic: str, records: int, size_bytes: int) -> None:
        """A produced partition's batches were appended (``records`` of ``size_bytes``)."""
        stats = self.topic(topic)
        stats.messages_in += records
        stats.bytes_in += size_bytes

    def produce_answered(self, topic: str, partitions: list[dict[str, Any]]) -> None:
        """One topic of a Produce answer: a request per partition, failed when it has an error."""
        stats = self.topic(topic)
        stats.produce_requests += len(partitions)
        for partition in partitions:
            if partition["error_code"]:
                stats.failed_produce_requests += 1

    def fetch_answered(self, responses: list[dict[str, Any]], from_follower: bool) -> None:
        """A Fetch answer: bytes out per topic (a follower's count as replication bytes)."""
        for topic in responses:
            partitions = topic["partitions"]
            stats = self.topic(topic["topic"])
            stats.fetch_requests += len(partitions)
            size = 0
            for partition in partitions:
                if partition["error_code"]:
                    stats.failed_fetch_requests += 1
                for piece in partition["records"] or ():
                    size += piece.size
            if from_follower:
                self.replication_bytes_out += size
            else:
                stats.bytes_out += size

    def isr_changed(self, before: int, after: int) -> None:
        """The ISR of a partition this broker leads went from ``before`` to ``after`` members."""
        if after < before:
            self.isr_shrinks += 1
        elif after > before:
            self.isr_expands += 1
