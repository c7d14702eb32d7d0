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

import struct
from dataclasses import dataclass, field

from log_engine.client.types import TopicPartition

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
VERSION = 0


class ConsumerProtocolError(ValueError):
    """Subscription or assignment bytes that do not parse."""


@dataclass(frozen=True, slots=True)
class Subscription:
    """What a member asks for: topics, plus opaque assignor data."""

    topics: tuple[str, ...]
    user_data: bytes | None = None

    def encode(self) -> bytes:
        out = bytearray(_INT16.pack(VERSION))
        out += _INT32.pack(len(self.topics))
        for topic in self.topics:
            _write_string(topic, out)
        _write_bytes(self.user_data, out)
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
        out = bytearray(_INT16.pack(VERSION))
        out += _INT32.pack(len(by_topic))
        for topic, partitions in by_topic.items():
            _write_string(topic, out)
            out += _INT32.pack(len(partitions))
            for partition in partitions:
                out += _INT32.pack(partition)
        _write_bytes(self.user_data, out)
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


def _write_string(text: str, out: bytearray) -> None:
    encoded = text.encode()
    out += _INT16.pack(len(encoded))
    out += encoded


def _write_bytes(data: bytes | None, out: bytearray) -> None:
    if data is None:
        out += _INT32.pack(-1)
    else:
        out += _INT32.pack(len(data))
        out += data


class _Reader:
    """Reads classic-encoded fields, failing with :class:`ConsumerProtocolError`."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def _take(self, size: int) -> bytes:
        end = self._pos + size
        if size < 0 or end > len(self._data):
            raise ConsumerProtocolError(
                f"consumer protocol data truncated at byte {self._pos} (needs {size} more)"
            )
        chunk = self._data[self._pos : end]
        self._pos = end
        return chunk

    def int16(self) -> int:
        return int(_INT16.unpack(self._take(2))[0])

    def int32(self) -> int:
        return int(_INT32.unpack(self._take(4))[0])

    def count(self) -> int:
        count = self.int32()
        return max(count, 0)  # a null array reads as empty

    def string(self) -> str:
        length = self.int16()
        if length < 0:
            raise ConsumerProtocolError("null topic name in consumer protocol data")
        return self._take(length).decode()

    def nullable_bytes(self) -> bytes | None:
        if self._pos == len(self._data):
            return None  # some writers leave out trailing null user data
        length = self.int32()
        return None if length < 0 else self._take(length)
