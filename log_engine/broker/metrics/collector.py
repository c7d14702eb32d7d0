"""``GET /metrics`` of a broker: Kafka's broker metrics under the names Grafana users know.

Names are those the Prometheus JMX exporter gives Kafka's broker MBeans with
the rules of its Kafka example configuration (``lowercaseOutputName``):
``kafka.<domain>:type=<Type>,name=<Name>PerSec,<key>=<v>`` attribute ``Count``
becomes ``kafka_<domain>_<type>_<name>_total{<key>="<v>"}`` (a counter), a
gauge's ``Value`` becomes ``kafka_<domain>_<type>_<name>``, and a histogram's
percentiles become ``kafka_<domain>_<type>_<name>{quantile="0.99"}``. So
``kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=t`` is
``kafka_server_brokertopicmetrics_messagesin_total{topic="t"}``. Consumer
group lag uses kafka_exporter's names (``kafka_consumergroup_lag``). The full
list is in ``docs/metrics.md``.

Everything is computed here, at scrape time, from :class:`BrokerMetrics` and
the broker's own state (partitions, ISR, logs, committed offsets). The HTTP
server runs in threads of its own, so :meth:`BrokerCollector.collect` hands
the work to the broker's event loop and waits for it: the broker's state is
only ever read on the thread that changes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.registry import Collector

from log_engine.broker.metrics.recorder import BrokerMetrics, TopicStats
from log_engine.metadata.types import NO_LEADER

if TYPE_CHECKING:
    from log_engine.broker.broker import Broker
    from log_engine.broker.partition import Partition

SCRAPE_TIMEOUT_S = 10.0
"""How long a scrape waits for the event loop to compute the metrics."""

QUANTILES = (("0.50", 0.50), ("0.75", 0.75), ("0.95", 0.95), ("0.98", 0.98),
             ("0.99", 0.99), ("0.999", 0.999))
"""The percentiles of Kafka's request histograms, labelled as the JMX exporter labels them."""

TOPIC_METRICS = "kafka_server_brokertopicmetrics_"
REQUEST_METRICS = "kafka_network_requestmetrics_"
REPLICA_MANAGER = "kafka_server_replicamanager_"
CONTROLLER = "kafka_controller_kafkacontroller_"
LOG = "kafka_log_log_"
GROUP = "kafka_consumergroup_"
SOCKET_SERVER = "kafka_server_socket_server_metrics_"

_AUTH_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("successful_authentication", "successful_authentications", "SASL logins that succeeded."),
    ("failed_authentication", "failed_authentications", "SASL logins refused."),
    ("successful_reauthentication", "successful_reauthentications",
     "SASL re-authentications (KIP-368) that succeeded."),
    ("failed_reauthentication", "failed_reauthentications",
     "SASL re-authentications refused (wrong password, other principal or mechanism)."),
    ("expired_connections_killed", "expired_connections_killed",
     "Connections closed because their SASL session expired (connections.max.reauth.ms)."),
)

_TOPIC_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("messagesin", "messages_in", "Records appended by Produce requests (MessagesInPerSec)."),
    ("bytesin", "bytes_in", "Bytes appended by Produce requests (BytesInPerSec)."),
    ("bytesout", "bytes_out", "Bytes sent to consumers in Fetch answers (BytesOutPerSec)."),
    ("totalproducerequests", "produce_requests",
     "Partitions of Produce requests (TotalProduceRequestsPerSec)."),
    ("totalfetchrequests", "fetch_requests",
     "Partitions of Fetch requests, consumers' and followers' (TotalFetchRequestsPerSec)."),
    ("failedproducerequests", "failed_produce_requests",
     "Partitions of Produce requests answered with an error (FailedProduceRequestsPerSec)."),
    ("failedfetchrequests", "failed_fetch_requests",
     "Partitions of Fetch requests answered with an error (FailedFetchRequestsPerSec)."),
)


class BrokerCollector(Collector):
    """Renders one broker's metrics (module doc); registered in :func:`broker_registry`."""

    def __init__(self, broker: Broker, metrics: BrokerMetrics,
                 loop: asyncio.AbstractEventLoop) -> None:
        self._broker = broker
        self._metrics = metrics
        self._loop = loop

    def collect(self) -> Iterable[Metric]:
        future = asyncio.run_coroutine_threadsafe(self._collect_on_loop(), self._loop)
        return future.result(SCRAPE_TIMEOUT_S)

    async def _collect_on_loop(self) -> list[Metric]:
        return self.families()

    def families(self) -> list[Metric]:
        """Every family, computed now; call on the broker's event loop."""
        out: list[Metric] = []
        out += self._topic_families()
        out += self._request_families()
        if self._serving():
            partitions = self._partitions()
            out += self._replica_families(partitions)
            out += self._log_families(partitions)
            out += self._group_families()
        out += self._controller_families()
        out += self._socket_server_families()
        return out

    # -- socket-server-metrics (SASL listeners) ------------------------------------------

    def _socket_server_families(self) -> list[Metric]:
        servers = list(self._broker.servers.values())
        if self._broker.controller_server is not None:
            servers.append(self._broker.controller_server)
        secured = [
            (s.listener_name, s.security)
            for s in servers
            if s.security is not None and s.security.sasl
        ]
        families: list[Metric] = []
        for suffix, attribute, doc in _AUTH_COUNTERS:
            family = CounterMetricFamily(SOCKET_SERVER + suffix, doc, labels=["listener"])
            for name, security in secured:
                family.add_metric([name], getattr(security.stats, attribute))
            families.append(family)
        return families

    def _serving(self) -> bool:
        """Whether this node has partition logs to read (a broker, and started)."""
        return self._broker.serves_clients and hasattr(self._broker, "offsets")

    # -- BrokerTopicMetrics ------------------------------------------------------------

    def _topic_families(self) -> list[Metric]:
        existing = set(self._broker.topics.topics()) if self._serving() else set()
        stats = list(self._metrics.topics.items())
        families: list[Metric] = []
        for suffix, attribute, doc in _TOPIC_COUNTERS:
            family = CounterMetricFamily(TOPIC_METRICS + suffix, doc, labels=["topic"])
            family.add_sample(
                family.name + "_total", {}, float(sum(getattr(s, attribute) for _, s in stats))
            )
            for topic, topic_stats in stats:
                if topic in existing:
                    family.add_metric([topic], _value(topic_stats, attribute))
            families.append(family)
        replication_out = CounterMetricFamily(
            TOPIC_METRICS + "replicationbytesout",
            "Bytes sent to follower replicas in Fetch answers (ReplicationBytesOutPerSec).",
        )
        replication_out.add_metric([], self._metrics.replication_bytes_out)
        replication_in = CounterMetricFamily(
            TOPIC_METRICS + "replicationbytesin",
            "Bytes appended from leaders by this broker's replica fetchers "
            "(ReplicationBytesInPerSec).",
        )
        replication_in.add_metric([], self._metrics.replication_bytes_in)
        families += [replication_out, replication_in]
        return families

    # -- RequestMetrics -----------------------------------------------------------------

    def _request_families(self) -> list[Metric]:
        requests = CounterMetricFamily(
            REQUEST_METRICS + "requests",
            "Requests answered, per API and version (RequestsPerSec).",
            labels=["request", "version"],
        )
        total_time = SummaryMetricFamily(
            REQUEST_METRICS + "totaltimems",
            "Time from a request's arrival to its answer sent, ms (TotalTimeMs); quantiles "
            "over the latest requests of each API.",
            labels=["request"],
        )
        for name, stats in sorted(self._metrics.requests.items()):
            for version, count in sorted(stats.by_version.items()):
                requests.add_metric([name, str(version)], count)
            for label, q in QUANTILES:
                total_time.add_sample(
                    total_time.name, {"request": name, "quantile": label}, stats.quantile(q)
                )
            total_time.add_metric([name], stats.count, stats.time_ms_sum)
        return [requests, total_time]

    # -- ReplicaManager -----------------------------------------------------------------

    def _partitions(self) -> list[Partition]:
        """The partitions with a replica on this broker (single node: all of them)."""
        topics = self._broker.topics
        return [
            partition
            for topic in list(topics.topics())
            for partition in topics.partitions(topic)
            if self._hosted(partition)
        ]

    def _replica_families(self, partitions: list[Partition]) -> list[Metric]:
        leaders = [p for p in partitions if p.is_leader]
        under_replicated = under_min_isr = at_min_isr = 0
        per_partition = GaugeMetricFamily(
            "kafka_cluster_partition_underreplicated",
            "1 when the partition (led here) has an ISR smaller than its replicas "
            "(kafka.cluster:type=Partition,name=UnderReplicated).",
            labels=["topic", "partition"],
        )
        for partition in leaders:
            if partition.state is None:
                continue  # a single node's partition has one replica: never under-replicated
            isr = partition.isr_size
            min_isr = partition.log.config.min_insync_replicas
            lagging = isr < len(partition.state.replicas)
            per_partition.add_metric([partition.topic, str(partition.index)], int(lagging))
            under_replicated += lagging
            under_min_isr += isr < min_isr
            at_min_isr += isr == min_isr
        metrics = self._metrics
        return [
            _gauge(REPLICA_MANAGER + "partitioncount",
                   "Partitions with a replica on this broker.", len(partitions)),
            _gauge(REPLICA_MANAGER + "leadercount",
                   "Partitions this broker leads.", len(leaders)),
            _gauge(REPLICA_MANAGER + "underreplicatedpartitions",
                   "Partitions this broker leads whose ISR is smaller than their replicas.",
                   under_replicated),
            _gauge(REPLICA_MANAGER + "underminisrpartitioncount",
                   "Partitions this broker leads whose ISR is below min.insync.replicas.",
                   under_min_isr),
            _gauge(REPLICA_MANAGER + "atminisrpartitioncount",
                   "Partitions this broker leads whose ISR is at min.insync.replicas.",
                   at_min_isr),
            _counter(REPLICA_MANAGER + "isrshrinks",
                     "ISR shrinks of partitions this broker leads (IsrShrinksPerSec).",
                     metrics.isr_shrinks),
            _counter(REPLICA_MANAGER + "isrexpands",
                     "ISR expansions of partitions this broker leads (IsrExpandsPerSec).",
                     metrics.isr_expands),
            per_partition,
        ]

    # -- KafkaController ----------------------------------------------------------------

    def _controller_families(self) -> list[Metric]:
        """Kafka's active controller reports these; every other node reports 0."""
        node = self._broker.cluster_node
        active = offline = partitions = topics = 0
        if node is None:
            active = 1  # a single node decides alone
        elif node.controller is not None and node.controller.controller.is_leader:
            active = 1
            image = node.listener.image
            for state in image.partitions():
                partitions += 1
                offline += state.leader == NO_LEADER
            topics = len(image.topics)
        if node is None and self._serving():
            counts = self._broker.topics.topics()
            topics, partitions = len(counts), sum(counts.values())
        return [
            _gauge(CONTROLLER + "activecontrollercount",
                   "1 on the active controller, else 0.", active),
            _gauge(CONTROLLER + "offlinepartitionscount",
                   "Partitions without a leader (active controller only).", offline),
            _gauge(CONTROLLER + "globalpartitioncount",
                   "Partitions in the cluster (active controller only).", partitions),
            _gauge(CONTROLLER + "globaltopiccount",
                   "Topics in the cluster (active controller only).", topics),
        ]

    # -- Log ----------------------------------------------------------------------------

    def _log_families(self, partitions: list[Partition]) -> list[Metric]:
        labels = ["topic", "partition"]
        size = GaugeMetricFamily(LOG + "size", "Bytes of the partition's log segments.",
                                 labels=labels)
        start = GaugeMetricFamily(LOG + "logstartoffset", "The log's first offset.",
                                  labels=labels)
        end = GaugeMetricFamily(LOG + "logendoffset", "The offset the next record gets.",
                                labels=labels)
        segments = GaugeMetricFamily(LOG + "numlogsegments", "Segments of the log.",
                                     labels=labels)
        for partition in partitions:
            values = [partition.topic, str(partition.index)]
            log = partition.log
            live = log.segments
            size.add_metric(values, sum(segment.size for segment in live))
            start.add_metric(values, log.log_start_offset)
            end.add_metric(values, log.log_end_offset)
            segments.add_metric(values, len(live))
        return [size, start, end, segments]

    # -- consumer groups (kafka_exporter's names) --------------------------------------

    def _group_families(self) -> list[Metric]:
        labels = ["consumergroup", "topic", "partition"]
        current = GaugeMetricFamily(
            GROUP + "current_offset", "The group's committed offset.", labels=labels
        )
        lag = GaugeMetricFamily(
            GROUP + "lag", "High watermark minus the group's committed offset.", labels=labels
        )
        lag_sum = GaugeMetricFamily(
            GROUP + "lag_sum", "The group's lag summed over the topic's partitions.",
            labels=["consumergroup", "topic"],
        )
        topics = self._broker.topics
        offsets = self._broker.offsets
        for group in offsets.groups():
            sums: dict[str, int] = {}
            for (topic, index), committed in sorted(offsets.fetch(group).items()):
                partition = topics.partition(topic, index)
                if partition is None or committed.offset < 0 or not self._hosted(partition):
                    continue
                behind = max(partition.high_watermark - committed.offset, 0)
                current.add_metric([group, topic, str(index)], committed.offset)
                lag.add_metric([group, topic, str(index)], behind)
                sums[topic] = sums.get(topic, 0) + behind
            for topic, total in sums.items():
                lag_sum.add_metric([group, topic], total)
        return [current, lag, lag_sum]


    def _hosted(self, partition: Partition) -> bool:
        return partition.state is None or self._broker.node_id in partition.state.replicas


def _value(stats: TopicStats, attribute: str) -> float:
    return float(getattr(stats, attribute))


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


def _counter(name: str, doc: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, value=value)
