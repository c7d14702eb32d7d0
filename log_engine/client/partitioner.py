"""Choosing a partition: murmur2 for keyed records, sticky for unkeyed ones.

Keyed records go to ``to_positive(murmur2(key)) % num_partitions`` with the
32-bit murmur2 variant Kafka's Java client uses (seed ``0x9747b28c``, the tail
bytes mixed little-endian, the hash read as a signed Java int and masked to 31
bits), so a key lands in the same partition whichever Kafka client wrote it.

Records without a key stick to one partition until the batch for it is closed,
then move to another available partition (KIP-480): batches fill up instead of
being spread one record per partition.
"""

from __future__ import annotations

import random
import struct

_MASK32 = 0xFFFFFFFF
_M = 0x5BD1E995
_SEED = 0x9747B28C


def murmur2(data: bytes) -> int:
    """The 32-bit murmur2 hash of ``data``, as an unsigned int (Java's int bits)."""
    length = len(data)
    h = (_SEED ^ length) & _MASK32
    words = length >> 2
    if words:
        for k in struct.unpack_from(f"<{words}I", data):
            k = (k * _M) & _MASK32
            k ^= k >> 24
            k = (k * _M) & _MASK32
            h = ((h * _M) & _MASK32) ^ k
    tail = length & 3
    base = length & ~3
    if tail == 3:
        h ^= data[base + 2] << 16
    if tail >= 2:
        h ^= data[base + 1] << 8
    if tail >= 1:
        h ^= data[base]
        h = (h * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return h


def to_positive(value: int) -> int:
    """Java's ``Utils.toPositive``: clear the sign bit of a 32-bit value."""
    return value & 0x7FFFFFFF


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """The partition Kafka's default partitioner picks for ``key``.

    A one-partition topic skips the hash (pure Python, ~1 µs for a short key:
    a quarter of a CDC task's thread where every table is such a topic).
    """
    if num_partitions == 1:
        return 0
    return to_positive(murmur2(key)) % num_partitions


class StickyPartitioner:
    """Per-topic sticky choice for unkeyed records.

    :meth:`partition` returns the current sticky partition of a topic;
    :meth:`on_batch_closed` moves the topic to another partition once the
    sticky one's batch is closed. Partitions with a leader are preferred.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self._sticky: dict[str, int] = {}
        self._rng = rng or random.Random()

    def partition(self, topic: str, num_partitions: int, available: list[int]) -> int:
        """The sticky partition for ``topic``, choosing one if there is none yet."""
        current = self._sticky.get(topic)
        if current is None or current >= num_partitions:
            current = self._choose(num_partitions, available, -1)
            self._sticky[topic] = current
        return current

    def on_batch_closed(
        self, topic: str, partition: int, num_partitions: int, available: list[int]
    ) -> None:
        """Switch ``topic`` away from ``partition`` if that is its sticky partition."""
        if self._sticky.get(topic) == partition:
            self._sticky[topic] = self._choose(num_partitions, available, partition)

    def _choose(self, num_partitions: int, available: list[int], previous: int) -> int:
        pool = available if available else range(num_partitions)
        if len(pool) <= 1:
            return pool[0] if pool else 0
        while True:
            choice = pool[self._rng.randrange(len(pool))]
            if choice != previous:
                return choice
