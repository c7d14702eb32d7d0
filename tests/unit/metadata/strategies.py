"""Hypothesis strategies for metadata records, and a generator of valid record logs."""

from __future__ import annotations

import random
import uuid

from hypothesis import strategies as st

from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import (
    BROKER_RESOURCE,
    FENCE,
    FENCING_NONE,
    TOPIC_RESOURCE,
    UNFENCE,
    AccessControlEntryRecord,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    Endpoint,
    FeatureLevelRecord,
    FenceBrokerRecord,
    MetadataRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveAccessControlEntryRecord,
    RemoveTopicRecord,
    RemoveUserScramCredentialRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UserScramCredentialRecord,
)

i32 = st.integers(-(2**31), 2**31 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)
ids = st.integers(0, 2**31 - 1)
names = st.text(max_size=20)
broker_lists = st.lists(ids, max_size=5).map(tuple)

i16 = st.integers(-(2**15), 2**15 - 1)
i8 = st.integers(-(2**7), 2**7 - 1)
endpoints = st.builds(Endpoint, names, names, st.integers(0, 65535), i16)

RECORDS: st.SearchStrategy[MetadataRecord] = st.one_of(
    st.builds(
        RegisterBrokerRecord,
        ids,
        st.uuids(),
        i64,
        st.lists(endpoints, max_size=3).map(tuple),
        st.none() | names,
        st.booleans(),
        st.booleans(),
    ),
    st.builds(UnregisterBrokerRecord, ids, i64),
    st.builds(FenceBrokerRecord, ids, i64),
    st.builds(UnfenceBrokerRecord, ids, i64),
    st.builds(
        BrokerRegistrationChangeRecord, ids, i64, st.sampled_from([FENCE, FENCING_NONE, UNFENCE]),
        st.sampled_from([0, 1]),
    ),
    st.builds(TopicRecord, names, st.uuids()),
    st.builds(
        PartitionRecord, st.uuids(), ids, broker_lists, broker_lists, i32, i32, i32,
        broker_lists, broker_lists,
    ),
    st.builds(
        PartitionChangeRecord, st.uuids(), ids, st.none() | broker_lists, i32,
        st.none() | broker_lists,
    ),
    st.builds(RemoveTopicRecord, st.uuids()),
    st.builds(
        ConfigRecord, st.sampled_from([TOPIC_RESOURCE, BROKER_RESOURCE]), names, names,
        st.none() | names,
    ),
    st.builds(ProducerIdsRecord, ids, i64, i64),
    st.builds(
        AccessControlEntryRecord, st.uuids(), i8, names, i8, names, names, i8, i8,
    ),
    st.builds(RemoveAccessControlEntryRecord, st.uuids()),
    st.builds(UserScramCredentialRecord, names, i8, st.binary(), st.binary(), st.binary(), i32),
    st.builds(RemoveUserScramCredentialRecord, names, i8),
    st.builds(FeatureLevelRecord, names, i16),
    st.just(NoOpRecord()),
)


def random_log(rng: random.Random, length: int) -> list[MetadataRecord]:
    """A log of ``length`` records that each apply to the image before them."""
    image = MetadataImage.EMPTY
    log: list[MetadataRecord] = []
    epoch = 0
    while len(log) < length:
        record = _next_record(rng, image, epoch)
        if record is None:
            continue
        epoch += 1
        image = image.apply(record)
        log.append(record)
    return log


def _next_record(rng: random.Random, image: MetadataImage, epoch: int) -> MetadataRecord | None:
    kind = rng.randrange(10)
    brokers = sorted(image.registrations)
    if kind == 0 or not brokers:
        broker = rng.randrange(1, 6)
        return RegisterBrokerRecord(
            broker, uuid.UUID(int=rng.getrandbits(128)), epoch,
            (Endpoint("PLAINTEXT", "localhost", 9000 + broker),), rng.choice([None, "r1"]),
        )
    reg = image.registrations[rng.choice(brokers)]
    if kind == 1:
        return rng.choice([FenceBrokerRecord, UnfenceBrokerRecord])(reg.broker_id, reg.broker_epoch)
    if kind == 2:
        return BrokerRegistrationChangeRecord(
            reg.broker_id, reg.broker_epoch, rng.choice([FENCE, FENCING_NONE, UNFENCE]),
            rng.randrange(2),
        )
    if kind == 3 and rng.random() < 0.2:
        return UnregisterBrokerRecord(reg.broker_id, reg.broker_epoch)
    if kind == 4:
        name = f"t{rng.randrange(6)}"
        if name in image.topics:
            return None
        return TopicRecord(name, uuid.UUID(int=rng.getrandbits(128)))
    topics = sorted(image.topics)
    if kind == 5 and topics:
        topic = image.topics[rng.choice(topics)]
        replicas = tuple(rng.sample(brokers, min(len(brokers), 3)))
        return PartitionRecord(
            topic.topic_id, len(topic.partitions), replicas, replicas, replicas[0], 0, 0
        )
    if kind == 6 and topics:
        topic = image.topics[rng.choice(topics)]
        if not topic.partitions:
            return None
        state = topic.partitions[rng.choice(sorted(topic.partitions))]
        isr = tuple(rng.sample(state.replicas, rng.randrange(1, len(state.replicas) + 1)))
        return PartitionChangeRecord(
            topic.topic_id, state.partition, rng.choice([None, isr]),
            rng.choice([-2, -1, isr[0]]),
        )
    if kind == 7 and topics and rng.random() < 0.3:
        return RemoveTopicRecord(image.topics[rng.choice(topics)].topic_id)
    if kind == 8:
        resource = rng.choice([(TOPIC_RESOURCE, t) for t in topics] + [(BROKER_RESOURCE, "1")])
        return ConfigRecord(
            resource[0], resource[1], rng.choice(["retention.ms", "min.insync.replicas"]),
            rng.choice([None, str(rng.randrange(100))]),
        )
    if kind == 9:
        return ProducerIdsRecord(reg.broker_id, reg.broker_epoch, image.next_producer_id + 1000)
    return NoOpRecord()
