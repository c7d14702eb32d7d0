"""``MetadataImage``: the cluster's metadata as of one committed offset, immutable.

The image is what replaying the metadata log up to ``end_offset`` gives:
registered brokers (their ``RegisterBrokerRecord`` with the current fenced and
controlled-shutdown flags, and the ``BrokerInfo`` the broker side uses), topics
with their partitions (``PartitionState``), configs per resource, the
producer-id block, the ACL bindings by id and the SCRAM credentials. Applying records returns a new
image and shares every part the records did not touch (copy-on-write: a topic
that did not change is the same ``TopicImage`` object in both), so diffing two
images is cheap.

Replay rules follow Kafka's: a ``PartitionChangeRecord`` bumps the partition
epoch, and the leader epoch when it names a leader (also -1); removing a topic
removes its configs; fence / unfence / unregister must name the broker's
current epoch. A record that does not fit raises :class:`MetadataReplayError`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar

from log_engine.errors import MetadataReplayError
from log_engine.metadata.records import (
    FENCE,
    NO_LEADER_CHANGE,
    TOPIC_RESOURCE,
    UNFENCE,
    AccessControlEntryRecord,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
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
from log_engine.metadata.types import BrokerInfo, PartitionState

ConfigResource = tuple[int, str]
"""(resource type, resource name): ``(TOPIC_RESOURCE, "orders")``, ``(BROKER_RESOURCE, "1")``."""

_EMPTY: Mapping[Any, Any] = MappingProxyType({})


def _empty() -> Mapping[Any, Any]:
    return _EMPTY


def _frozen(mapping: dict[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(mapping)


@dataclass(frozen=True, slots=True)
class TopicImage:
    """One topic: its name, id and partitions by index."""

    name: str
    topic_id: uuid.UUID
    partitions: Mapping[int, PartitionState] = field(default_factory=_empty)


def broker_info(registration: RegisterBrokerRecord) -> BrokerInfo:
    """The broker side's view of a registration."""
    return BrokerInfo(
        registration.broker_id,
        registration.broker_epoch,
        tuple(e.broker_endpoint() for e in registration.endpoints),
        registration.fenced,
        registration.rack,
    )


@dataclass(frozen=True)
class MetadataImage:
    """The metadata after every committed entry below ``end_offset`` (see the module doc)."""

    EMPTY: ClassVar[MetadataImage]

    end_offset: int = 0
    registrations: Mapping[int, RegisterBrokerRecord] = field(default_factory=_empty)
    brokers: Mapping[int, BrokerInfo] = field(default_factory=_empty)
    topics: Mapping[str, TopicImage] = field(default_factory=_empty)
    topic_names: Mapping[uuid.UUID, str] = field(default_factory=_empty)
    configs: Mapping[ConfigResource, Mapping[str, str]] = field(default_factory=_empty)
    producer_ids: ProducerIdsRecord | None = None
    acls: Mapping[uuid.UUID, AccessControlEntryRecord] = field(default_factory=_empty)
    """ACL bindings by id (AccessControlEntryRecord / RemoveAccessControlEntryRecord)."""
    scram: Mapping[tuple[str, int], UserScramCredentialRecord] = field(default_factory=_empty)
    """SCRAM credentials by (user, mechanism code)."""
    features: Mapping[str, int] = field(default_factory=_empty)
    """Finalized feature levels by name (FeatureLevelRecord)."""

    # ---- reading ----------------------------------------------------------------------

    def partition(self, topic: str, index: int) -> PartitionState | None:
        image = self.topics.get(topic)
        return None if image is None else image.partitions.get(index)

    def partitions(self) -> Iterator[PartitionState]:
        """Every partition, by topic name then index."""
        for name in sorted(self.topics):
            partitions = self.topics[name].partitions
            for index in sorted(partitions):
                yield partitions[index]

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicImage | None:
        name = self.topic_names.get(topic_id)
        return None if name is None else self.topics[name]

    def topic_configs(self, topic: str) -> Mapping[str, str]:
        return self.configs.get((TOPIC_RESOURCE, topic), _EMPTY)

    def unfenced_broker_ids(self) -> list[int]:
        """Brokers that may lead and join ISRs: unfenced, not in controlled shutdown."""
        return sorted(
            b
            for b, reg in self.registrations.items()
            if not reg.fenced and not reg.in_controlled_shutdown
        )

    @property
    def next_producer_id(self) -> int:
        """The first id of the next producer-id block (0 before any was handed out)."""
        return 0 if self.producer_ids is None else self.producer_ids.next_producer_id

    # ---- applying ---------------------------------------------------------------------

    def apply(self, record: MetadataRecord, end_offset: int | None = None) -> MetadataImage:
        """This image with ``record`` applied (and ``end_offset`` moved, if given)."""
        return self.apply_all((record,), end_offset)

    def apply_all(
        self, records: Iterable[MetadataRecord], end_offset: int | None = None
    ) -> MetadataImage:
        """This image with ``records`` applied in order; ``self`` is unchanged."""
        builder = _Builder(self)
        for record in records:
            builder.apply(record)
        return builder.build(self.end_offset if end_offset is None else end_offset)

    def with_end_offset(self, end_offset: int) -> MetadataImage:
        return self if end_offset == self.end_offset else replace(self, end_offset=end_offset)


MetadataImage.EMPTY = MetadataImage()


class _Builder:
    """Applies records to copies of the image's maps, copying each map on first write."""

    def __init__(self, image: MetadataImage) -> None:
        self.base = image
        self.registrations: Mapping[int, RegisterBrokerRecord] = image.registrations
        self.brokers: Mapping[int, BrokerInfo] = image.brokers
        self.topics: Mapping[str, TopicImage] = image.topics
        self.topic_names: Mapping[uuid.UUID, str] = image.topic_names
        self.configs: Mapping[ConfigResource, Mapping[str, str]] = image.configs
        self.producer_ids = image.producer_ids
        self.acls: Mapping[uuid.UUID, AccessControlEntryRecord] = image.acls
        self.scram: Mapping[tuple[str, int], UserScramCredentialRecord] = image.scram
        self.features: Mapping[str, int] = image.features
        self._copied: set[str] = set()
        self._topics_copied: set[str] = set()  # topics whose partition map is our own

    def _own(self, name: str) -> dict[Any, Any]:
        if name not in self._copied:
            setattr(self, name, dict(getattr(self, name)))
            self._copied.add(name)
        mapping: dict[Any, Any] = getattr(self, name)
        return mapping

    def build(self, end_offset: int) -> MetadataImage:
        base = self.base
        if not self._copied and self.producer_ids is base.producer_ids:
            return base.with_end_offset(end_offset)
        topics = self.topics
        if self._topics_copied:
            topics = {
                name: replace(t, partitions=_frozen(dict(t.partitions)))
                if name in self._topics_copied
                else t
                for name, t in topics.items()
            }

        def freeze(name: str, value: Mapping[Any, Any]) -> Mapping[Any, Any]:
            return _frozen(value) if name in self._copied else value  # type: ignore[arg-type]

        return MetadataImage(
            end_offset,
            freeze("registrations", self.registrations),
            freeze("brokers", self.brokers),
            freeze("topics", topics),
            freeze("topic_names", self.topic_names),
            freeze("configs", self.configs),
            self.producer_ids,
            freeze("acls", self.acls),
            freeze("scram", self.scram),
            freeze("features", self.features),
        )

    # ---- one method per record type ------------------------------------------------------

    def apply(self, record: MetadataRecord) -> None:
        handler = _HANDLERS.get(type(record))
        if handler is None:
            raise MetadataReplayError(f"no replay rule for {type(record).__name__}")
        handler(self, record)

    def _set_registration(self, registration: RegisterBrokerRecord) -> None:
        self._own("registrations")[registration.broker_id] = registration
        self._own("brokers")[registration.broker_id] = broker_info(registration)

    def _registration(self, broker_id: int, epoch: int, what: str) -> RegisterBrokerRecord:
        current = self.registrations.get(broker_id)
        if current is None:
            raise MetadataReplayError(f"{what}: broker {broker_id} is not registered")
        if current.broker_epoch != epoch:
            raise MetadataReplayError(
                f"{what}: broker {broker_id} has epoch {current.broker_epoch}, not {epoch}"
            )
        return current

    def register_broker(self, record: RegisterBrokerRecord) -> None:
        self._set_registration(record)

    def unregister_broker(self, record: UnregisterBrokerRecord) -> None:
        self._registration(record.broker_id, record.broker_epoch, "UnregisterBrokerRecord")
        del self._own("registrations")[record.broker_id]
        del self._own("brokers")[record.broker_id]

    def fence_broker(self, record: FenceBrokerRecord) -> None:
        current = self._registration(record.broker_id, record.broker_epoch, "FenceBrokerRecord")
        self._set_registration(replace(current, fenced=True))

    def unfence_broker(self, record: UnfenceBrokerRecord) -> None:
        current = self._registration(record.broker_id, record.broker_epoch, "UnfenceBrokerRecord")
        self._set_registration(replace(current, fenced=False))

    def change_registration(self, record: BrokerRegistrationChangeRecord) -> None:
        current = self._registration(
            record.broker_id, record.broker_epoch, "BrokerRegistrationChangeRecord"
        )
        fenced = {FENCE: True, UNFENCE: False}.get(record.fenced, current.fenced)
        shutdown = current.in_controlled_shutdown or record.in_controlled_shutdown == 1
        self._set_registration(replace(current, fenced=fenced, in_controlled_shutdown=shutdown))

    def add_topic(self, record: TopicRecord) -> None:
        if record.name in self.topics:
            raise MetadataReplayError(f"TopicRecord: topic {record.name!r} exists already")
        if record.topic_id in self.topic_names:
            raise MetadataReplayError(f"TopicRecord: topic id {record.topic_id} is in use")
        self._own("topics")[record.name] = TopicImage(record.name, record.topic_id)
        self._own("topic_names")[record.topic_id] = record.name

    def _topic(self, topic_id: uuid.UUID, what: str) -> str:
        name = self.topic_names.get(topic_id)
        if name is None:
            raise MetadataReplayError(f"{what}: no topic with id {topic_id}")
        return name

    def _set_partition(self, name: str, state: PartitionState) -> None:
        topics = self._own("topics")
        topic: TopicImage = topics[name]
        if name not in self._topics_copied:
            topic = replace(topic, partitions=dict(topic.partitions))
            topics[name] = topic
            self._topics_copied.add(name)
        topic.partitions[state.partition] = state  # type: ignore[index]

    def add_partition(self, record: PartitionRecord) -> None:
        name = self._topic(record.topic_id, "PartitionRecord")
        state = PartitionState(
            name,
            record.partition_id,
            record.leader,
            record.leader_epoch,
            record.partition_epoch,
            record.replicas,
            record.isr,
            record.topic_id.bytes,
        )
        self._set_partition(name, state)

    def change_partition(self, record: PartitionChangeRecord) -> None:
        name = self._topic(record.topic_id, "PartitionChangeRecord")
        current = self.topics[name].partitions.get(record.partition_id)
        if current is None:
            raise MetadataReplayError(
                f"PartitionChangeRecord: topic {name!r} has no partition {record.partition_id}"
            )
        leader, leader_epoch = current.leader, current.leader_epoch
        if record.leader != NO_LEADER_CHANGE:
            leader, leader_epoch = record.leader, leader_epoch + 1
        self._set_partition(
            name,
            replace(
                current,
                leader=leader,
                leader_epoch=leader_epoch,
                partition_epoch=current.partition_epoch + 1,
                replicas=current.replicas if record.replicas is None else record.replicas,
                isr=current.isr if record.isr is None else record.isr,
            ),
        )

    def remove_topic(self, record: RemoveTopicRecord) -> None:
        name = self._topic(record.topic_id, "RemoveTopicRecord")
        del self._own("topics")[name]
        del self._own("topic_names")[record.topic_id]
        self._topics_copied.discard(name)
        if (TOPIC_RESOURCE, name) in self.configs:
            del self._own("configs")[(TOPIC_RESOURCE, name)]

    def set_config(self, record: ConfigRecord) -> None:
        key = (record.resource_type, record.resource_name)
        values = dict(self.configs.get(key, _EMPTY))
        if record.value is None:
            values.pop(record.name, None)
        else:
            values[record.name] = record.value
        configs = self._own("configs")
        if values:
            configs[key] = _frozen(values)
        else:
            configs.pop(key, None)

    def set_producer_ids(self, record: ProducerIdsRecord) -> None:
        if record.next_producer_id < (
            0 if self.producer_ids is None else self.producer_ids.next_producer_id
        ):
            raise MetadataReplayError(
                f"ProducerIdsRecord: next producer id {record.next_producer_id} goes backwards"
            )
        self.producer_ids = record

    def add_acl(self, record: AccessControlEntryRecord) -> None:
        if record.acl_id in self.acls:
            raise MetadataReplayError(f"AccessControlEntryRecord: id {record.acl_id} exists")
        self._own("acls")[record.acl_id] = record

    def remove_acl(self, record: RemoveAccessControlEntryRecord) -> None:
        if record.acl_id not in self.acls:
            raise MetadataReplayError(
                f"RemoveAccessControlEntryRecord: no ACL with id {record.acl_id}"
            )
        del self._own("acls")[record.acl_id]

    def set_scram(self, record: UserScramCredentialRecord) -> None:
        self._own("scram")[(record.name, record.mechanism)] = record

    def remove_scram(self, record: RemoveUserScramCredentialRecord) -> None:
        key = (record.name, record.mechanism)
        if key not in self.scram:
            raise MetadataReplayError(
                f"RemoveUserScramCredentialRecord: user {record.name!r} has no credential "
                f"for mechanism {record.mechanism}"
            )
        del self._own("scram")[key]

    def set_feature_level(self, record: FeatureLevelRecord) -> None:
        if record.feature_level == 0:
            self._own("features").pop(record.name, None)
        else:
            self._own("features")[record.name] = record.feature_level

    def no_op(self, record: NoOpRecord) -> None:
        pass


_HANDLERS: dict[type, Any] = {
    RegisterBrokerRecord: _Builder.register_broker,
    UnregisterBrokerRecord: _Builder.unregister_broker,
    FenceBrokerRecord: _Builder.fence_broker,
    UnfenceBrokerRecord: _Builder.unfence_broker,
    BrokerRegistrationChangeRecord: _Builder.change_registration,
    TopicRecord: _Builder.add_topic,
    PartitionRecord: _Builder.add_partition,
    PartitionChangeRecord: _Builder.change_partition,
    RemoveTopicRecord: _Builder.remove_topic,
    ConfigRecord: _Builder.set_config,
    ProducerIdsRecord: _Builder.set_producer_ids,
    AccessControlEntryRecord: _Builder.add_acl,
    RemoveAccessControlEntryRecord: _Builder.remove_acl,
    UserScramCredentialRecord: _Builder.set_scram,
    RemoveUserScramCredentialRecord: _Builder.remove_scram,
    FeatureLevelRecord: _Builder.set_feature_level,
    NoOpRecord: _Builder.no_op,
}
