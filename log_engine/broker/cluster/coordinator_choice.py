"""Which broker coordinates a consumer group in a cluster: the leader of the group's
``__consumer_offsets`` partition (``abs(javaHashCode(group)) % partitions``), as in Kafka.

Every broker answers the same from its metadata image, so a group's members
meet at one coordinator; when that partition's leadership moves, so does the
group, and the new leader loads its committed offsets from its replica
(``group_ownership.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from log_engine.broker.offset_store import offsets_partition
from log_engine.broker.topics import OFFSETS_TOPIC
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage


@dataclass(frozen=True, slots=True)
class CoordinatorAnswer:
    """One FindCoordinator answer: the coordinator's id and endpoint, or an error."""

    error_code: int
    error_message: str | None = None
    node_id: int = -1
    host: str = ""
    port: int = -1


def group_coordinator(image: MetadataImage, group: str, listener: str) -> CoordinatorAnswer:
    """The leader of ``group``'s partition, with its endpoint on ``listener``."""
    topic = image.topics.get(OFFSETS_TOPIC)
    if topic is None or not topic.partitions:
        return _unavailable(f"{OFFSETS_TOPIC} does not exist yet")
    index = offsets_partition(group, len(topic.partitions))
    state = topic.partitions.get(index)
    info = image.brokers.get(state.leader) if state is not None and state.has_leader else None
    if state is None or info is None or info.fenced:
        return _unavailable(f"{OFFSETS_TOPIC}-{index} has no live leader")
    endpoint = info.endpoint(listener)
    if endpoint is None:
        return _unavailable(f"broker {info.broker_id} has no {listener} endpoint")
    return CoordinatorAnswer(ErrorCode.NONE, None, info.broker_id, endpoint.host, endpoint.port)


def _unavailable(message: str) -> CoordinatorAnswer:
    return CoordinatorAnswer(ErrorCode.COORDINATOR_NOT_AVAILABLE, message)
