"""murmur2 and the partitioners: Java-client golden values and sticky behaviour."""

from __future__ import annotations

import random

import pytest

from log_engine.client.partitioner import StickyPartitioner, murmur2, partition_for_key


def _signed(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


# murmur2 as a signed Java int, for the test vectors Kafka's own client tests use.
@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (b"21", -973932308),
        (b"foobar", -790332482),
        (b"a-little-bit-long-string", -985981536),
        (b"a-little-bit-longer-string", -1486304829),
        (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        (b"", 275646681),
    ],
)
def test_murmur2_matches_the_java_client(key: bytes, expected: int) -> None:
    assert _signed(murmur2(key)) == expected


# Partitions librdkafka chose for these keys on a 4-partition topic with
# partitioner=murmur2_random (its Java-compatible partitioner), recorded against the
# mock cluster; tests/compat/test_client_mock_cluster.py repeats the check live.
GOLDEN_4_PARTITIONS = {
    b"": 1,
    b"a": 0,
    b"ab": 2,
    b"abc": 3,
    b"abcd": 0,
    b"abcde": 1,
    b"user-1": 0,
    b"user-42": 0,
    b"\x00\xff\x80\x7f": 3,
    "héllo".encode(): 2,
    b"x" * 37: 3,
    b"key-0": 1,
    b"key-1": 0,
    b"key-2": 2,
    b"key-3": 3,
    b"key-7": 3,
    b"key-10": 2,
    b"key-19": 2,
}


@pytest.mark.parametrize(("key", "partition"), GOLDEN_4_PARTITIONS.items())
def test_keyed_partition_matches_librdkafka_murmur2(key: bytes, partition: int) -> None:
    assert partition_for_key(key, 4) == partition


def test_partition_is_in_range_for_any_count() -> None:
    rng = random.Random(7)
    for _ in range(500):
        key = rng.randbytes(rng.randrange(0, 40))
        count = rng.randrange(1, 100)
        assert 0 <= partition_for_key(key, count) < count


def test_sticky_partition_stays_until_its_batch_closes() -> None:
    sticky = StickyPartitioner(random.Random(1))
    first = sticky.partition("t", 6, list(range(6)))
    assert all(sticky.partition("t", 6, list(range(6))) == first for _ in range(10))
    sticky.on_batch_closed("t", first, 6, list(range(6)))
    second = sticky.partition("t", 6, list(range(6)))
    assert second != first


def test_sticky_prefers_partitions_with_a_leader() -> None:
    sticky = StickyPartitioner(random.Random(3))
    chosen = set()
    for _ in range(30):
        current = sticky.partition("t", 5, [1, 3])
        chosen.add(current)
        sticky.on_batch_closed("t", current, 5, [1, 3])
    assert chosen == {1, 3}


def test_closing_another_partitions_batch_does_not_switch() -> None:
    sticky = StickyPartitioner(random.Random(5))
    current = sticky.partition("t", 4, [0, 1, 2, 3])
    sticky.on_batch_closed("t", (current + 1) % 4, 4, [0, 1, 2, 3])
    assert sticky.partition("t", 4, [0, 1, 2, 3]) == current
