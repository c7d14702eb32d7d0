"""``__consumer_offsets`` in a cluster: a replicated topic, created through the controller
on the first FindCoordinator (as Kafka creates it).

Partitions: ``offsets.topic.num.partitions`` (50, Kafka's default). Replication
factor: ``offsets.topic.replication.factor`` (3, Kafka's default), capped at
the cluster's size with a warning: the larger of the registered brokers and,
on a node that is both broker and controller (so its voters are brokers too,
as in ``configs/cluster/``), the controller voters. As Kafka does, the topic is
not created with fewer replicas than that: while fewer brokers are unfenced,
FindCoordinator answers COORDINATOR_NOT_AVAILABLE and logs why. Configs:
``cleanup.policy=compact`` and ``segment.bytes`` from
``offsets.topic.segment.bytes``.

Once created its partition count never changes here (a group's partition is
``abs(javaHashCode(group)) % partitions``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from log_engine.broker.cluster import admin
from log_engine.broker.topics import OFFSETS_TOPIC
from log_engine.errors import ErrorCode

if TYPE_CHECKING:
    from log_engine.broker.cluster.node import ClusterNode
    from log_engine.broker.config import BrokerConfig

log = logging.getLogger(__name__)

_CREATE_TIMEOUT_MS = 10_000


class OffsetsTopic:
    """Creates ``__consumer_offsets`` once per cluster and knows its partition count."""

    def __init__(self, node: ClusterNode, config: BrokerConfig) -> None:
        self._node = node
        self._config = config
        self._creating: asyncio.Task[str | None] | None = None
        self._capped_logged = False
        self._last_refusal: str | None = None

    def partition_count(self) -> int:
        """The topic's partitions in the image (the configured count before it exists)."""
        topic = self._node.image.topics.get(OFFSETS_TOPIC)
        if topic is None or not topic.partitions:
            return self._config.offsets_topic_num_partitions
        return len(topic.partitions)

    def exists(self) -> bool:
        return OFFSETS_TOPIC in self._node.image.topics

    async def ensure(self) -> str | None:
        """Create the topic if it does not exist yet; None once it does, else why not."""
        if self.exists():
            return None
        if self._creating is None or self._creating.done():
            self._creating = asyncio.get_running_loop().create_task(self._create())
        return await asyncio.shield(self._creating)

    def replication_factor(self) -> int:
        """``offsets.topic.replication.factor`` capped at the cluster's size."""
        wanted = self._config.offsets_topic_replication_factor
        cluster = self._node.cluster
        size = len(self._node.image.registrations)
        if cluster.is_broker and cluster.is_controller:
            size = max(size, len(cluster.voters))
        factor = max(1, min(wanted, size))
        if factor < wanted and not self._capped_logged:
            self._capped_logged = True
            log.warning(
                "offsets.topic.replication.factor is %d but the cluster has %d broker(s): "
                "%s gets replication factor %d",
                wanted,
                size,
                OFFSETS_TOPIC,
                factor,
            )
        return factor

    async def _create(self) -> str | None:
        factor = self.replication_factor()
        unfenced = self._node.image.unfenced_broker_ids()
        if len(unfenced) < factor:
            why = (
                f"{OFFSETS_TOPIC} needs {factor} unfenced brokers "
                f"(offsets.topic.replication.factor), only {unfenced} are"
            )
            if why != self._last_refusal:  # clients ask again every retry.backoff.ms
                log.warning("not creating %s yet: %s", OFFSETS_TOPIC, why)
                self._last_refusal = why
            return why
        body = {
            "topics": [
                {
                    "name": OFFSETS_TOPIC,
                    "num_partitions": self._config.offsets_topic_num_partitions,
                    "replication_factor": factor,
                    "assignments": [],
                    "configs": [
                        {"name": "cleanup.policy", "value": "compact"},
                        {
                            "name": "segment.bytes",
                            "value": str(self._config.offsets_topic_segment_bytes),
                        },
                    ],
                }
            ],
            "timeout_ms": _CREATE_TIMEOUT_MS,
            "validate_only": False,
        }
        (result,) = await admin.create_topics(self._node, body, internal=True)
        code = result["error_code"]
        if code and code != ErrorCode.TOPIC_ALREADY_EXISTS:
            log.info("creating %s failed: %s", OFFSETS_TOPIC, result["error_message"])
            return f"creating {OFFSETS_TOPIC} failed: {result['error_message']}"
        if code == 0:
            log.info(
                "created %s: %d partitions, replication factor %d",
                OFFSETS_TOPIC,
                self._config.offsets_topic_num_partitions,
                factor,
            )
        return None if self.exists() else f"{OFFSETS_TOPIC} is not in the metadata yet"
