"""Kafka's ConsumerProtocol: the bytes consumers exchange through their group.

A consumer joins a group with protocol type ``consumer``; the JoinGroup
metadata of each member is a *Subscription*, and the leader hands each member
an *Assignment* through SyncGroup. Both are classic-encoded (big-endian, int16
string lengths, int32 array counts and byte lengths, -1 for null)::

    Subscription v0   version int16, topics [string], user_data nullable bytes
                      (v1+ append owned partitions, v2+ a generation id, v3+ a rack)
    Assignment v0     version int16, partitions [topic string, [partition int32]],
                      user_data nullable bytes

We write version 0 and read any version by its version-0 prefix, which every
later version keeps, so our members share a group with Java and librdkafka
consumers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from log_engine.client.classic_fields import (
    INT16,
    INT32,
    ClassicReader,
    write_bytes,
    write_int32_array,
    write_string,
)
from log_engine.client.types import TopicPartition

VERSION = 0


class ConsumerProtocolError(ValueError):
    """Subscription or assignment bytes that do not parse."""


@dataclass(frozen=True, slots=True)
class Subscription:
    """What a member asks for: topics, plus opaque assignor data."""

    topics: tuple[str, ...]
    user_data: bytes | None = None

    def encode(self) -> bytes:
        out = bytearray(INT16.pack(VERSION))
        out += INT32.pack(len(self.topics))
        for topic in self.topics:
            write_string(topic, out)
        write_bytes(self.user_data, out)
        return bytes(out)

    @staticmethod
    def decode(data: bytes) -> Subscription:
        reader = _Reader(data)
        reader.int16()  # version: later versions only append fields
        topics = tuple(reader.string() for _ in range(reader.count()))
        return Subscription(topics, reader.nullable_bytes())


@dataclass(frozen=True, slots=True)
class Assignment:
    """What the leader gives a member: partitions, plus opaque assignor data."""

    partitions: tuple[TopicPartition, ...] = field(default_factory=tuple)
    user_data: bytes | None = None

    def encode(self) -> bytes:
        by_topic: dict[str, list[int]] = {}
        for tp in self.partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        out = bytearray(INT16.pack(VERSION))
        out += INT32.pack(len(by_topic))
        for topic, partitions in by_topic.items():
            write_string(topic, out)
            write_int32_array(partitions, out)
        write_bytes(self.user_data, out)
        return bytes(out)

    @staticmethod
    def decode(data: bytes) -> Assignment:
        if not data:
            return Assignment()  # an empty SyncGroup answer: nothing assigned
        reader = _Reader(data)
        reader.int16()
        partitions: list[TopicPartition] = []
        for _ in range(reader.count()):
            topic = reader.string()
            partitions += (TopicPartition(topic, reader.int32()) for _ in range(reader.count()))
        return Assignment(tuple(partitions), reader.nullable_bytes())


class _Reader(ClassicReader):
    """Consumer protocol fields: a trailing null user data may be left out."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data, ConsumerProtocolError, "consumer protocol")

    def nullable_bytes(self) -> bytes | None:
        if self.at_end():
            return None  # some writers leave out trailing null user data
        return super().nullable_bytes()
