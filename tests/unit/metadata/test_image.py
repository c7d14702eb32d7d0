"""The metadata image: replay rules, copy-on-write, snapshots (image -> snapshot -> image)."""

from __future__ import annotations

import random
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from log_engine.errors import MetadataRecordError, MetadataReplayError
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import (
    FENCE,
    TOPIC_RESOURCE,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    Endpoint,
    FenceBrokerRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from log_engine.metadata.snapshot import encode_snapshot, load_snapshot
from log_engine.metadata.types import NO_LEADER, BrokerEndpoint, BrokerInfo, PartitionState
from tests.unit.metadata.strategies import random_log

TOPIC_ID = uuid.UUID(int=7)


def registered(*broker_ids: int) -> MetadataImage:
    return MetadataImage.EMPTY.apply_all(
        RegisterBrokerRecord(b, uuid.UUID(int=b), 10 + b, (Endpoint("PLAINTEXT", "h", 9000 + b),))
        for b in broker_ids
    )


def with_partition(image: MetadataImage) -> MetadataImage:
    return image.apply_all(
        [TopicRecord("orders", TOPIC_ID), PartitionRecord(TOPIC_ID, 0, (1, 2, 3), (1, 2, 3), 1)]
    )


def test_registration_gives_broker_info_fenced_until_unfenced() -> None:
    image = registered(1)
    assert image.brokers[1] == BrokerInfo(1, 11, (BrokerEndpoint("PLAINTEXT", "h", 9001),))
    assert image.brokers[1].fenced
    image = image.apply(UnfenceBrokerRecord(1, 11))
    assert not image.brokers[1].fenced
    assert image.unfenced_broker_ids() == [1]
    image = image.apply(FenceBrokerRecord(1, 11))
    assert image.brokers[1].fenced


def test_fence_of_another_epoch_is_a_replay_error() -> None:
    with pytest.raises(MetadataReplayError, match="broker 1 has epoch 11, not 5"):
        registered(1).apply(FenceBrokerRecord(1, 5))
    with pytest.raises(MetadataReplayError, match="broker 9 is not registered"):
        registered(1).apply(UnregisterBrokerRecord(9, 1))


def test_controlled_shutdown_flag_and_re_registration_clears_it() -> None:
    image = registered(1).apply(BrokerRegistrationChangeRecord(1, 11, in_controlled_shutdown=1))
    assert image.registrations[1].in_controlled_shutdown
    assert image.unfenced_broker_ids() == []
    image = image.apply(BrokerRegistrationChangeRecord(1, 11, fenced=FENCE))
    assert image.registrations[1].in_controlled_shutdown and image.brokers[1].fenced
    image = image.apply(RegisterBrokerRecord(1, uuid.UUID(int=99), 50))
    assert not image.registrations[1].in_controlled_shutdown
    assert image.brokers[1].epoch == 50


def test_partition_change_bumps_epochs_as_kafka() -> None:
    image = with_partition(registered(1, 2, 3))
    state = image.partition("orders", 0)
    assert state == PartitionState("orders", 0, 1, 0, 0, (1, 2, 3), (1, 2, 3), TOPIC_ID.bytes)
    # ISR only: the partition epoch moves, the leader epoch stays
    image = image.apply(PartitionChangeRecord(TOPIC_ID, 0, isr=(1, 2)))
    state = image.partition("orders", 0)
    assert (state.leader, state.leader_epoch, state.partition_epoch, state.isr) == (1, 0, 1, (1, 2))
    # a new leader (even none) moves the leader epoch too
    image = image.apply(PartitionChangeRecord(TOPIC_ID, 0, leader=NO_LEADER))
    state = image.partition("orders", 0)
    assert (state.leader, state.leader_epoch, state.partition_epoch) == (NO_LEADER, 1, 2)
    assert not state.has_leader


def test_apply_shares_untouched_parts() -> None:
    before = with_partition(registered(1, 2, 3)).apply(TopicRecord("other", uuid.UUID(int=8)))
    after = before.apply(PartitionChangeRecord(TOPIC_ID, 0, isr=(1,)), end_offset=9)
    assert after.topics["other"] is before.topics["other"]
    assert after.registrations is before.registrations
    assert before.partition("orders", 0).isr == (1, 2, 3)  # the old image is unchanged
    assert after.end_offset == 9


def test_remove_topic_removes_partitions_and_configs() -> None:
    image = with_partition(registered(1, 2, 3)).apply_all(
        [ConfigRecord(TOPIC_RESOURCE, "orders", "retention.ms", "5")]
    )
    assert image.topic_configs("orders") == {"retention.ms": "5"}
    image = image.apply(RemoveTopicRecord(TOPIC_ID))
    assert image.topics == {} and image.topic_names == {} and image.configs == {}


def test_config_value_none_deletes_the_key() -> None:
    image = MetadataImage.EMPTY.apply_all(
        [
            ConfigRecord(4, "1", "a", "1"),
            ConfigRecord(4, "1", "b", "2"),
            ConfigRecord(4, "1", "a", None),
        ]
    )
    assert image.configs == {(4, "1"): {"b": "2"}}


def test_partition_of_an_unknown_topic_is_a_replay_error() -> None:
    with pytest.raises(MetadataReplayError, match="no topic with id"):
        MetadataImage.EMPTY.apply(PartitionRecord(TOPIC_ID, 0, (1,), (1,), 1))
    with pytest.raises(MetadataReplayError, match="exists already"):
        with_partition(registered(1)).apply(TopicRecord("orders", uuid.UUID(int=1)))


def test_producer_ids_never_go_backwards() -> None:
    image = MetadataImage.EMPTY.apply(ProducerIdsRecord(1, 1, 1000))
    assert image.next_producer_id == 1000
    with pytest.raises(MetadataReplayError, match="goes backwards"):
        image.apply(ProducerIdsRecord(1, 1, 10))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), length=st.integers(0, 120))
def test_image_to_snapshot_to_image_is_identity(seed: int, length: int) -> None:
    image = MetadataImage.EMPTY.apply_all(random_log(random.Random(seed), length), length)
    payload = encode_snapshot(image)
    assert load_snapshot(payload, length) == image
    assert encode_snapshot(load_snapshot(payload, length)) == payload


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32), length=st.integers(1, 120), data=st.data())
def test_replaying_from_any_snapshot_point_gives_the_same_image(
    seed: int, length: int, data: st.DataObject
) -> None:
    log = random_log(random.Random(seed), length)
    whole = MetadataImage.EMPTY.apply_all(log, length)
    cut = data.draw(st.integers(0, length))
    at_cut = MetadataImage.EMPTY.apply_all(log[:cut], cut)
    restored = load_snapshot(encode_snapshot(at_cut), cut)
    assert restored.apply_all(log[cut:], length) == whole


def test_damaged_snapshot_is_a_clear_error() -> None:
    payload = encode_snapshot(with_partition(registered(1, 2, 3)))
    with pytest.raises(MetadataRecordError, match="damaged metadata snapshot"):
        load_snapshot(payload[:-3], 5)
