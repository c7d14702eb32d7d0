"""Fetch response handling and record decoding (no network: responses built by hand)."""

from __future__ import annotations

import struct

import pytest

from log_engine.client.cluster import Cluster
from log_engine.client.config import ConsumerConfig
from log_engine.client.fetcher import Fetcher, next_fetch_offset
from log_engine.client.subscription import SubscriptionState
from log_engine.client.types import ConsumerRecord
from log_engine.client.types import TopicPartition as TP
from log_engine.records import Compression, Record, build_batch

TOPIC_PARTITION = TP("t", 0)


def _batch(base: int, count: int, **kwargs: object) -> bytes:
    records = [Record(None, b"v%d" % (base + i), timestamp=1000 + i) for i in range(count)]
    return build_batch(records, base_offset=base, **kwargs)  # type: ignore[arg-type]


def _control(base: int, producer_id: int, commit: bool) -> bytes:
    key = struct.pack(">hh", 0, 1 if commit else 0)
    return build_batch(
        [Record(key, b"\x00\x00\x00\x00\x00\x00", timestamp=1)],
        base_offset=base,
        producer_id=producer_id,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )


def _fetcher(position: int, **overrides: str) -> tuple[Fetcher, SubscriptionState]:
    config = ConsumerConfig.from_mapping({"bootstrap.servers": "h:1", **overrides})
    subs = SubscriptionState("earliest")
    subs.assign_manually([TOPIC_PARTITION])
    subs.state(TOPIC_PARTITION).seek(position)
    return Fetcher(config, Cluster(config), subs), subs


def _deliver(fetcher: Fetcher, subs: SubscriptionState, records: bytes, **part: object) -> None:
    state = subs.state(TOPIC_PARTITION)
    response = {
        "partition_index": 0,
        "error_code": 0,
        "high_watermark": 100,
        "records": memoryview(records),
        **part,
    }
    fetcher._handle_partition(TOPIC_PARTITION, response, state.epoch, state.fetch_offset)


def test_next_fetch_offset_ignores_a_trailing_partial_batch() -> None:
    data = _batch(0, 3) + _batch(3, 2)
    assert next_fetch_offset(data) == 5
    assert next_fetch_offset(data + _batch(5, 4)[:30]) == 5
    assert next_fetch_offset(_batch(5, 4)[:-1]) is None
    assert next_fetch_offset(b"") is None


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.ZSTD])
def test_records_below_the_position_are_skipped(codec: Compression) -> None:
    fetcher, subs = _fetcher(position=2)
    _deliver(fetcher, subs, _batch(0, 5, compression=codec) + _batch(5, 2)[:40])
    records = fetcher.drain(100)
    assert [r.offset for r in records] == [2, 3, 4]
    assert records[0].value == b"v2" and records[0].timestamp == 1002
    assert subs.state(TOPIC_PARTITION).position == 5
    assert subs.state(TOPIC_PARTITION).fetch_offset == 5


def test_drained_records_are_consumer_records() -> None:
    fetcher, subs = _fetcher(position=0)
    _deliver(fetcher, subs, _batch(0, 2))
    records = fetcher.drain(10)
    assert all(type(r) is ConsumerRecord for r in records)
    assert records[1] == ConsumerRecord("t", 0, 1, 1001, None, b"v1", ())
    assert (records[1].topic, records[1].partition, records[1].headers) == ("t", 0, ())


def test_max_records_splits_a_batch_across_polls() -> None:
    fetcher, subs = _fetcher(position=0)
    _deliver(fetcher, subs, _batch(0, 5))
    assert [r.offset for r in fetcher.drain(2)] == [0, 1]
    assert subs.state(TOPIC_PARTITION).position == 2
    assert [r.offset for r in fetcher.drain(10)] == [2, 3, 4]
    assert fetcher.drain(10) == []
    assert not fetcher.data_ready.is_set()


def test_control_batches_are_hidden_but_advance_the_position() -> None:
    fetcher, subs = _fetcher(position=0)
    _deliver(fetcher, subs, _batch(0, 2) + _control(2, 9, commit=True))
    assert [r.offset for r in fetcher.drain(10)] == [0, 1]
    assert subs.state(TOPIC_PARTITION).position == 3


def test_read_committed_drops_aborted_transactions() -> None:
    fetcher, subs = _fetcher(position=0, **{"isolation.level": "read_committed"})
    txn = {"producer_id": 9, "producer_epoch": 0, "is_transactional": True}
    data = (
        _batch(0, 2, **txn)
        + _control(2, 9, commit=False)
        + _batch(3, 2, **txn)
        + _control(5, 9, commit=True)
    )
    _deliver(fetcher, subs, data, aborted_transactions=[{"producer_id": 9, "first_offset": 0}])
    assert [r.offset for r in fetcher.drain(10)] == [3, 4]
    assert subs.state(TOPIC_PARTITION).position == 6


def test_a_response_for_an_old_position_is_dropped() -> None:
    fetcher, subs = _fetcher(position=0)
    state = subs.state(TOPIC_PARTITION)
    epoch, offset = state.epoch, state.fetch_offset
    state.seek(10)
    response = {"partition_index": 0, "error_code": 0, "high_watermark": 5}
    fetcher._handle_partition(TOPIC_PARTITION, {**response, "records": _batch(0, 3)}, epoch, offset)
    assert fetcher.drain(10) == []


def test_out_of_range_schedules_a_reset() -> None:
    fetcher, subs = _fetcher(position=50)
    _deliver(fetcher, subs, b"", error_code=1)
    state = subs.state(TOPIC_PARTITION)
    assert state.position is None and state.reset_to == "earliest"


def test_paused_partitions_keep_their_data_for_later() -> None:
    fetcher, subs = _fetcher(position=0)
    _deliver(fetcher, subs, _batch(0, 2))
    subs.state(TOPIC_PARTITION).paused = True
    assert fetcher.drain(10) == []
    subs.state(TOPIC_PARTITION).paused = False
    assert [r.offset for r in fetcher.drain(10)] == [0, 1]


def test_other_errors_are_raised_by_the_next_drain() -> None:
    fetcher, subs = _fetcher(position=0)
    _deliver(fetcher, subs, b"", error_code=29)
    with pytest.raises(Exception, match="TOPIC_AUTHORIZATION_FAILED"):
        fetcher.drain(10)
