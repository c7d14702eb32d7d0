"""Where a group lives in a cluster: its ``__consumer_offsets`` partition (Kafka's hash)
and that partition's leader as the coordinator FindCoordinator names."""

from __future__ import annotations

import uuid

from log_engine.broker.cluster.coordinator_choice import group_coordinator
from log_engine.broker.offset_store import offsets_partition
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import (
    Endpoint,
    FenceBrokerRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)

OFFSETS_ID = uuid.UUID(int=5)


def test_a_group_goes_to_javas_string_hash_mod_partitions() -> None:
    # Java: "test".hashCode() == 3556498, "hello".hashCode() == 99162322, "Aa" and "BB"
    # both 2112; "polygenelubricants".hashCode() == Integer.MIN_VALUE (Kafka's Utils.abs
    # makes it 0)
    assert offsets_partition("test", 50) == 3556498 % 50
    assert offsets_partition("hello", 50) == 99162322 % 50
    assert offsets_partition("Aa", 1000) == offsets_partition("BB", 1000) == 112
    assert offsets_partition("polygenelubricants", 50) == 0
    assert offsets_partition("", 50) == 0


def _cluster(leader: int) -> MetadataImage:
    image = MetadataImage.EMPTY
    for b in (1, 2, 3):
        image = image.apply(
            RegisterBrokerRecord(
                b,
                uuid.UUID(int=b),
                10 + b,
                (Endpoint("PLAINTEXT", "h", 9000 + b), Endpoint("SSL", "h", 9100 + b)),
            )
        )
        image = image.apply(UnfenceBrokerRecord(b, 10 + b))
    return image.apply_all(
        [
            TopicRecord("__consumer_offsets", OFFSETS_ID),
            PartitionRecord(OFFSETS_ID, 0, (1, 2, 3), (1, 2, 3), leader),
        ]
    )


def test_the_coordinator_is_the_partition_leader_on_the_request_listener() -> None:
    image = _cluster(leader=2)
    answer = group_coordinator(image, "g", "PLAINTEXT")
    assert (answer.error_code, answer.node_id, answer.host, answer.port) == (0, 2, "h", 9002)
    assert group_coordinator(image, "g", "SSL").port == 9102


def test_no_topic_or_no_live_leader_is_coordinator_not_available() -> None:
    answer = group_coordinator(MetadataImage.EMPTY, "g", "PLAINTEXT")
    assert answer.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert answer.error_message == "__consumer_offsets does not exist yet"
    fenced = _cluster(leader=2).apply(FenceBrokerRecord(2, 12))
    answer = group_coordinator(fenced, "g", "PLAINTEXT")
    assert answer.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert answer.error_message == "__consumer_offsets-0 has no live leader"
