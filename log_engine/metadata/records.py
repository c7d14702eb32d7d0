"""Metadata records in KRaft's shapes, and their framing: one record = one Raft entry.

Each record type is declared once with the protocol's schema DSL in ``schemas.py``
(field lists and versions as Kafka's ``metadata/src/main/resources/common/metadata/*.json``;
all flexible from v0), so a record written here reads as Kafka's and back. A record
on the wire (Kafka's ``MetadataRecordSerde``)::

    frame version : unsigned varint  (always 1)
    record type   : unsigned varint  (the record's "api key": 0 RegisterBroker, 2 Topic, ...)
    version       : unsigned varint
    body          : the flexible encoding of that version (ends with a tagged-field section)

:func:`encode_record` writes the version in each class's ``WRITE_VERSION``;
:func:`decode_record` reads every declared version and refuses trailing bytes.
In Python a record is a frozen dataclass (``MetadataRecord``); broker ids lists
are tuples, topic ids ``uuid.UUID``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Self

from log_engine.errors import EncodeError, MetadataRecordError, ProtocolDecodeError
from log_engine.metadata.schemas import (
    ACCESS_CONTROL_ENTRY,
    BROKER_REGISTRATION_CHANGE,
    CONFIG,
    FEATURE_LEVEL,
    FENCE_BROKER,
    NO_LEADER_CHANGE,
    NO_OP,
    PARTITION,
    PARTITION_CHANGE,
    PRODUCER_IDS,
    REGISTER_BROKER,
    REMOVE_ACCESS_CONTROL_ENTRY,
    REMOVE_TOPIC,
    REMOVE_USER_SCRAM_CREDENTIAL,
    TOPIC,
    UNFENCE_BROKER,
    UNREGISTER_BROKER,
    USER_SCRAM_CREDENTIAL,
)
from log_engine.metadata.types import BrokerEndpoint
from log_engine.protocol.schema import Message
from log_engine.protocol.types import Reader, Writer

FRAME_VERSION = 1
TOPIC_RESOURCE = 2
BROKER_RESOURCE = 4
"""``ConfigRecord.resource_type`` values (Kafka's ConfigResource.Type)."""

FENCE, FENCING_NONE, UNFENCE = 1, 0, -1
"""``BrokerRegistrationChangeRecord.fenced`` values."""

# ---- the Python side -------------------------------------------------------------


class _BodyRecord:
    """A record whose wire body is its dataclass fields, one key each.

    The key is the field's name unless ``WIRE_NAMES`` renames it; tuples travel
    as lists. A record with a nested body (RegisterBrokerRecord) writes its own
    ``to_body``/``from_body``.
    """

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]]
    WIRE_NAMES: ClassVar[dict[str, str]] = {}

    def to_body(self) -> dict[str, Any]:
        body = {}
        for field in fields(self):
            value = getattr(self, field.name)
            body[self.WIRE_NAMES.get(field.name, field.name)] = (
                list(value) if isinstance(value, tuple) else value
            )
        return body

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> Self:
        values = {}
        for field in fields(cls):
            value = body[cls.WIRE_NAMES.get(field.name, field.name)]
            values[field.name] = tuple(value) if isinstance(value, list) else value
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A listener as RegisterBrokerRecord carries it (with Kafka's security protocol id)."""

    name: str
    host: str
    port: int
    security_protocol: int = 0  # PLAINTEXT

    def broker_endpoint(self) -> BrokerEndpoint:
        return BrokerEndpoint(self.name, self.host, self.port)


@dataclass(frozen=True, slots=True)
class RegisterBrokerRecord:
    """A broker registered (or re-registered) with a new epoch; starts fenced."""

    MESSAGE: ClassVar[Message] = REGISTER_BROKER
    WRITE_VERSION: ClassVar[int] = 3

    broker_id: int
    incarnation_id: uuid.UUID
    broker_epoch: int
    endpoints: tuple[Endpoint, ...] = ()
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False

    def to_body(self) -> dict[str, Any]:
        return {
            "broker_id": self.broker_id,
            "incarnation_id": self.incarnation_id,
            "broker_epoch": self.broker_epoch,
            "end_points": [
                {
                    "name": e.name,
                    "host": e.host,
                    "port": e.port,
                    "security_protocol": e.security_protocol,
                }
                for e in self.endpoints
            ],
            "rack": self.rack,
            "fenced": self.fenced,
            "in_controlled_shutdown": self.in_controlled_shutdown,
        }

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> RegisterBrokerRecord:
        return cls(
            body["broker_id"],
            body["incarnation_id"],
            body["broker_epoch"],
            tuple(
                Endpoint(e["name"], e["host"], e["port"], e["security_protocol"])
                for e in body["end_points"]
            ),
            body["rack"],
            body["fenced"],
            body["in_controlled_shutdown"],
        )


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRecord(_BodyRecord):
    """A broker's registration is removed."""

    MESSAGE: ClassVar[Message] = UNREGISTER_BROKER
    WRITE_VERSION: ClassVar[int] = 0

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class _BrokerFencingRecord(_BodyRecord):
    """The body Fence- and UnfenceBrokerRecord share (Kafka names it ``id``, ``epoch``)."""

    WRITE_VERSION: ClassVar[int] = 0
    WIRE_NAMES: ClassVar[dict[str, str]] = {"broker_id": "id", "broker_epoch": "epoch"}

    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class FenceBrokerRecord(_BrokerFencingRecord):
    """The broker (at that epoch) is fenced: it may not lead nor join an ISR."""

    MESSAGE: ClassVar[Message] = FENCE_BROKER


@dataclass(frozen=True, slots=True)
class UnfenceBrokerRecord(_BrokerFencingRecord):
    """The broker (at that epoch) caught up and is unfenced."""

    MESSAGE: ClassVar[Message] = UNFENCE_BROKER


@dataclass(frozen=True, slots=True)
class BrokerRegistrationChangeRecord(_BodyRecord):
    """A change of a registration's flags: ``fenced`` is FENCE, UNFENCE or FENCING_NONE."""

    MESSAGE: ClassVar[Message] = BROKER_REGISTRATION_CHANGE
    WRITE_VERSION: ClassVar[int] = 1

    broker_id: int
    broker_epoch: int
    fenced: int = FENCING_NONE
    in_controlled_shutdown: int = 0


@dataclass(frozen=True, slots=True)
class TopicRecord(_BodyRecord):
    """A topic is created with a name and an id (its partitions follow)."""

    MESSAGE: ClassVar[Message] = TOPIC
    WRITE_VERSION: ClassVar[int] = 0

    name: str
    topic_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class PartitionRecord(_BodyRecord):
    """A partition's whole state (on creation, and in snapshots)."""

    MESSAGE: ClassVar[Message] = PARTITION
    WRITE_VERSION: ClassVar[int] = 0

    topic_id: uuid.UUID
    partition_id: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord(_BodyRecord):
    """A change of one partition: ``None`` / NO_LEADER_CHANGE for what stays.

    Applying it bumps the partition epoch, and the leader epoch when ``leader``
    is set (even to -1), as Kafka's ``PartitionRegistration.merge``.
    """

    MESSAGE: ClassVar[Message] = PARTITION_CHANGE
    WRITE_VERSION: ClassVar[int] = 0

    topic_id: uuid.UUID
    partition_id: int
    isr: tuple[int, ...] | None = None
    leader: int = NO_LEADER_CHANGE
    replicas: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class RemoveTopicRecord(_BodyRecord):
    """A topic and its partitions and configs are deleted."""

    MESSAGE: ClassVar[Message] = REMOVE_TOPIC
    WRITE_VERSION: ClassVar[int] = 0

    topic_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class ConfigRecord(_BodyRecord):
    """One config key of a resource (topic, broker) set; ``value=None`` removes it."""

    MESSAGE: ClassVar[Message] = CONFIG
    WRITE_VERSION: ClassVar[int] = 0

    resource_type: int
    resource_name: str
    name: str
    value: str | None


@dataclass(frozen=True, slots=True)
class ProducerIdsRecord(_BodyRecord):
    """A block of producer ids went to a broker; ``next_producer_id`` is the next block's start."""

    MESSAGE: ClassVar[Message] = PRODUCER_IDS
    WRITE_VERSION: ClassVar[int] = 0

    broker_id: int
    broker_epoch: int
    next_producer_id: int


@dataclass(frozen=True, slots=True)
class AccessControlEntryRecord(_BodyRecord):
    """An ACL binding is added, under a unique id (enums as Kafka's int8 codes)."""

    MESSAGE: ClassVar[Message] = ACCESS_CONTROL_ENTRY
    WRITE_VERSION: ClassVar[int] = 0
    WIRE_NAMES: ClassVar[dict[str, str]] = {"acl_id": "id"}

    acl_id: uuid.UUID
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class RemoveAccessControlEntryRecord(_BodyRecord):
    """The ACL binding with this id is removed."""

    MESSAGE: ClassVar[Message] = REMOVE_ACCESS_CONTROL_ENTRY
    WRITE_VERSION: ClassVar[int] = 0
    WIRE_NAMES: ClassVar[dict[str, str]] = {"acl_id": "id"}

    acl_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class UserScramCredentialRecord(_BodyRecord):
    """A user's SCRAM credential for one mechanism (1 SHA-256, 2 SHA-512), salted:
    salt, StoredKey, ServerKey and iterations (RFC 5802), never the password."""

    MESSAGE: ClassVar[Message] = USER_SCRAM_CREDENTIAL
    WRITE_VERSION: ClassVar[int] = 0

    name: str
    mechanism: int
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


@dataclass(frozen=True, slots=True)
class RemoveUserScramCredentialRecord(_BodyRecord):
    """A user's SCRAM credential for one mechanism is removed."""

    MESSAGE: ClassVar[Message] = REMOVE_USER_SCRAM_CREDENTIAL
    WRITE_VERSION: ClassVar[int] = 0

    name: str
    mechanism: int


@dataclass(frozen=True, slots=True)
class FeatureLevelRecord(_BodyRecord):
    """A cluster-wide feature finalized at a level (level 0 removes it)."""

    MESSAGE: ClassVar[Message] = FEATURE_LEVEL
    WRITE_VERSION: ClassVar[int] = 0

    name: str
    feature_level: int


@dataclass(frozen=True, slots=True)
class NoOpRecord(_BodyRecord):
    """Changes nothing; a new active controller appends one to learn when it is caught up."""

    MESSAGE: ClassVar[Message] = NO_OP
    WRITE_VERSION: ClassVar[int] = 0


MetadataRecord = (
    RegisterBrokerRecord
    | UnregisterBrokerRecord
    | FenceBrokerRecord
    | UnfenceBrokerRecord
    | BrokerRegistrationChangeRecord
    | TopicRecord
    | PartitionRecord
    | PartitionChangeRecord
    | RemoveTopicRecord
    | ConfigRecord
    | ProducerIdsRecord
    | AccessControlEntryRecord
    | RemoveAccessControlEntryRecord
    | UserScramCredentialRecord
    | RemoveUserScramCredentialRecord
    | FeatureLevelRecord
    | NoOpRecord
)

RECORD_TYPES: dict[int, type[MetadataRecord]] = {
    cls.MESSAGE.api_key: cls  # type: ignore[misc]
    for cls in (
        RegisterBrokerRecord,
        UnregisterBrokerRecord,
        FenceBrokerRecord,
        UnfenceBrokerRecord,
        BrokerRegistrationChangeRecord,
        TopicRecord,
        PartitionRecord,
        PartitionChangeRecord,
        RemoveTopicRecord,
        ConfigRecord,
        ProducerIdsRecord,
        AccessControlEntryRecord,
        RemoveAccessControlEntryRecord,
        UserScramCredentialRecord,
        RemoveUserScramCredentialRecord,
        FeatureLevelRecord,
        NoOpRecord,
    )
}
"""Record type (Kafka's metadata "api key") -> class."""


def encode_record(record: MetadataRecord, version: int | None = None) -> bytes:
    """Frame and encode ``record`` at ``version`` (default: its ``WRITE_VERSION``)."""
    message = record.MESSAGE
    version = record.WRITE_VERSION if version is None else version
    writer = Writer(inline=True)
    writer.uvarint(FRAME_VERSION)
    writer.uvarint(message.api_key)
    writer.uvarint(version)
    try:
        message.schema(version).write(writer, record.to_body())
    except (EncodeError, ValueError) as exc:
        raise MetadataRecordError(f"cannot encode {record!r:.200}: {exc}") from exc
    return bytes(writer.buf)


def decode_record(data: bytes | bytearray | memoryview) -> MetadataRecord:
    """Read one framed record; :class:`MetadataRecordError` for anything else."""
    reader = Reader(data)
    try:
        frame_version = reader.uvarint()
        if frame_version != FRAME_VERSION:
            raise MetadataRecordError(
                f"metadata record frame version {frame_version} (only {FRAME_VERSION} is known)"
            )
        record_type = reader.uvarint()
        version = reader.uvarint()
        cls = RECORD_TYPES.get(record_type)
        if cls is None:
            raise MetadataRecordError(f"unknown metadata record type {record_type}")
        lo, hi = cls.MESSAGE.versions
        if not lo <= version <= hi:
            raise MetadataRecordError(
                f"{cls.MESSAGE.name} version {version} is not known (versions {lo}-{hi})"
            )
        body = cls.MESSAGE.schema(version).read(reader)
    except ProtocolDecodeError as exc:
        raise MetadataRecordError(f"malformed metadata record: {exc}") from exc
    if reader.remaining:
        raise MetadataRecordError(
            f"{reader.remaining} bytes after a {cls.MESSAGE.name} v{version} record"
        )
    return cls.from_body(body)
