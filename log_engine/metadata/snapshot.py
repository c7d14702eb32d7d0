"""Snapshots of the metadata image: the records that rebuild it, in one payload.

A snapshot payload is the image written as records (KIP-630: a snapshot is
the log compacted to its state), each framed as in the log and prefixed by its
length::

    repeated: length : unsigned varint   (bytes of the record that follows)
              record : a framed metadata record (see ``records.py``)

Order: broker registrations (with their current fenced and controlled-shutdown
flags), then per topic its TopicRecord, its ConfigRecords and one
PartitionRecord per partition (with its current epochs), then the other
resources' configs, then the ProducerIdsRecord, then one AccessControlEntryRecord
per ACL, then one UserScramCredentialRecord per user and mechanism. Replaying the payload from an
empty image gives an image equal to the one written; the snapshot's end offset
(its Raft id) becomes the image's ``end_offset``.
"""

from __future__ import annotations

import uuid

from log_engine.errors import MetadataRecordError, ProtocolDecodeError
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import (
    TOPIC_RESOURCE,
    ConfigRecord,
    FeatureLevelRecord,
    MetadataRecord,
    PartitionRecord,
    TopicRecord,
    decode_record,
    encode_record,
)
from log_engine.protocol.types import Reader, uvarint_bytes


def image_records(image: MetadataImage) -> list[MetadataRecord]:
    """The records that rebuild ``image`` from an empty one, in replay order."""
    records: list[MetadataRecord] = [
        FeatureLevelRecord(name, image.features[name]) for name in sorted(image.features)
    ]
    records.extend(image.registrations[b] for b in sorted(image.registrations))
    for name in sorted(image.topics):
        topic = image.topics[name]
        records.append(TopicRecord(name, topic.topic_id))
        records.extend(_configs(image, (TOPIC_RESOURCE, name)))
        for index in sorted(topic.partitions):
            state = topic.partitions[index]
            records.append(
                PartitionRecord(
                    uuid.UUID(bytes=state.topic_id),
                    index,
                    state.replicas,
                    state.isr,
                    state.leader,
                    state.leader_epoch,
                    state.partition_epoch,
                )
            )
    for resource in sorted(image.configs):
        if resource[0] != TOPIC_RESOURCE:
            records.extend(_configs(image, resource))
    if image.producer_ids is not None:
        records.append(image.producer_ids)
    records.extend(image.acls[acl_id] for acl_id in sorted(image.acls))
    records.extend(image.scram[key] for key in sorted(image.scram))
    return records


def _configs(image: MetadataImage, resource: tuple[int, str]) -> list[ConfigRecord]:
    values = image.configs.get(resource, {})
    return [ConfigRecord(resource[0], resource[1], k, values[k]) for k in sorted(values)]


def encode_snapshot(image: MetadataImage) -> bytes:
    """The snapshot payload of ``image`` (see the module doc)."""
    out = bytearray()
    for record in image_records(image):
        data = encode_record(record)
        out += uvarint_bytes(len(data))
        out += data
    return bytes(out)


def decode_snapshot_records(payload: bytes | bytearray | memoryview) -> list[MetadataRecord]:
    """The records of a snapshot payload; :class:`MetadataRecordError` if it is damaged."""
    reader = Reader(payload)
    records: list[MetadataRecord] = []
    try:
        while reader.remaining:
            size = reader.uvarint()
            start = reader.skip(size)
            records.append(decode_record(reader.buf[start : start + size]))
    except ProtocolDecodeError as exc:
        raise MetadataRecordError(f"damaged metadata snapshot: {exc}") from exc
    return records


def load_snapshot(payload: bytes | bytearray | memoryview, end_offset: int) -> MetadataImage:
    """The image a snapshot payload holds, as of ``end_offset``."""
    return MetadataImage.EMPTY.apply_all(decode_snapshot_records(payload), end_offset)
