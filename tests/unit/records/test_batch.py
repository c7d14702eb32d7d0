"""RecordBatch v2: hypothesis round trips, kafka-python cross-reads, bad input."""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from log_engine.errors import (
    CorruptMessageError,
    CrcMismatchError,
    InvalidMagicError,
    TruncatedBatchError,
)
from log_engine.records import (
    Compression,
    Record,
    TimestampType,
    build_batch,
    decode_batch,
    iter_batches,
    read_header,
    stamp_base_offset,
    stamp_leader_epoch,
    stamp_log_append_time,
    validate_batch,
)

_BASE_TS = 1_700_000_000_000
_nullable = st.none() | st.binary(max_size=64)
_headers = st.lists(
    st.tuples(st.sampled_from(["a", "b", "trace-id", "ü"]), _nullable), max_size=4
).map(tuple)
_records = st.lists(
    st.builds(
        Record,
        key=_nullable,
        value=_nullable,
        headers=_headers,
        timestamp=st.integers(_BASE_TS - 10**6, _BASE_TS + 10**6),
    ),
    min_size=1,
    max_size=12,
)
_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_settings
@given(_records, st.sampled_from(list(Compression)), st.integers(0, 2**40))
def test_build_decode_round_trip(records: list[Record], codec: Compression, base: int) -> None:
    data = build_batch(records, base_offset=base, compression=codec)
    header, decoded = decode_batch(data)
    assert header.compression == codec and header.records_count == len(records)
    assert header.size == len(data) and header.base_offset == base
    assert header.max_timestamp == max(r.timestamp for r in records)
    assert [(r.key, r.value, r.headers, r.timestamp, r.offset) for r in decoded] == [
        (r.key, r.value, r.headers, r.timestamp, base + i) for i, r in enumerate(records)
    ]


@_settings
@given(_records, st.sampled_from(list(Compression)))
def test_kafka_python_reads_our_batches(records: list[Record], codec: Compression) -> None:
    data = build_batch(
        records, base_offset=7, compression=codec, producer_id=3, producer_epoch=1, base_sequence=5
    )
    batch = DefaultRecordBatch(bytearray(data))
    assert batch.validate_crc()
    assert (batch.base_offset, batch.producer_id, batch.base_sequence) == (7, 3, 5)
    got = [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch]
    assert got == [
        (7 + i, r.timestamp, r.key, r.value, list(r.headers)) for i, r in enumerate(records)
    ]


def _kafka_python_builder(codec: Compression) -> DefaultRecordBatchBuilder:
    """kafka-python's v2 batch builder: no transaction, no idempotence, room for anything."""
    return DefaultRecordBatchBuilder(
        magic=2,
        compression_type=int(codec),
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 24,
    )


@_settings
@given(_records, st.sampled_from(list(Compression)))
def test_we_read_kafka_python_batches(records: list[Record], codec: Compression) -> None:
    builder = _kafka_python_builder(codec)
    for i, r in enumerate(records):
        builder.append(i, timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers))
    data = bytes(builder.build())
    header, decoded = decode_batch(data)
    assert header.compression in (codec, Compression.NONE)  # kafka-python skips useless codecs
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in decoded] == [
        (i, r.timestamp, r.key, r.value, r.headers) for i, r in enumerate(records)
    ]


@pytest.mark.parametrize("codec", list(Compression))
def test_we_read_compressed_kafka_python_batches(codec: Compression) -> None:
    builder = _kafka_python_builder(codec)
    for i in range(200):
        builder.append(
            i, timestamp=_BASE_TS + i, key=b"key-%d" % (i % 7), value=b"x" * 300, headers=[]
        )
    header, decoded = decode_batch(bytes(builder.build()))
    assert header.compression == codec and len(decoded) == 200
    assert decoded[-1] == Record(b"key-3", b"x" * 300, (), _BASE_TS + 199, 199)


def test_keep_offsets_preserves_gaps() -> None:
    records = [Record(b"a", b"1", offset=10), Record(b"b", None, offset=14)]
    header, decoded = decode_batch(build_batch(records, base_offset=10, keep_offsets=True))
    assert header.last_offset == 14 and [r.offset for r in decoded] == [10, 14]


def test_stamping_outside_the_crc_keeps_it_valid() -> None:
    data = bytearray(build_batch([Record(b"k", b"v", timestamp=_BASE_TS)] * 3))
    stamp_base_offset(data, 0, 1234)
    stamp_leader_epoch(data, 0, 9)
    header = validate_batch(data)
    assert (header.base_offset, header.partition_leader_epoch) == (1234, 9)
    stamp_log_append_time(data, 0, _BASE_TS + 99)
    header, records = decode_batch(data)
    assert header.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert {r.timestamp for r in records} == {_BASE_TS + 99}


def _good() -> bytearray:
    return bytearray(build_batch([Record(b"key", b"value" * 10, timestamp=_BASE_TS)] * 2))


def test_bad_crc() -> None:
    data = _good()
    data[-1] ^= 0x01
    with pytest.raises(CrcMismatchError):
        validate_batch(data)
    read_header(data)  # the header alone is still readable


def test_wrong_magic() -> None:
    data = _good()
    data[16] = 1
    with pytest.raises(InvalidMagicError):
        read_header(data)


@pytest.mark.parametrize("length", [0, 10, 48])
def test_impossible_batch_length(length: int) -> None:
    data = _good()
    struct.pack_into(">i", data, 8, length)
    with pytest.raises(CorruptMessageError):
        validate_batch(data)


def test_negative_record_count() -> None:
    data = _good()
    struct.pack_into(">i", data, 57, -1)
    with pytest.raises(CorruptMessageError):
        read_header(data)


@pytest.mark.parametrize("cut", [1, 30, 61])
def test_truncated_body_or_header(cut: int) -> None:
    data = _good()
    with pytest.raises(TruncatedBatchError):
        validate_batch(data[:-cut] if cut < len(data) else data[:10])
    with pytest.raises(TruncatedBatchError):
        list(iter_batches(bytes(data) + bytes(data[:-cut])))


def test_record_length_past_the_batch() -> None:
    records_start = 61
    data = _good()
    data[records_start] = 0x7E  # record length 63: runs past the batch
    from crc32c import crc32c

    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    with pytest.raises(CorruptMessageError):
        decode_batch(data)


def test_garbage_compressed_payload() -> None:
    data = bytearray(build_batch([Record(b"k", b"v" * 100)], compression=Compression.ZSTD))
    data[70:80] = b"\x00" * 10
    from crc32c import crc32c

    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))
    with pytest.raises(CorruptMessageError):
        decode_batch(data)


# decode_batch decodes common records inline and hands any other record to
# _decode_record; these check both paths agree, on odd and malformed input too.

_wide_records = st.lists(
    st.builds(
        Record,
        key=st.none() | st.binary(max_size=80),
        value=st.none() | st.binary(max_size=200),
        headers=st.just(()) | _headers,
        timestamp=st.integers(_BASE_TS - 10**10, _BASE_TS + 10**10),
    ),
    min_size=1,
    max_size=80,  # past 64 records the offset deltas take two bytes
)


def _decode_record_by_record(data: bytes) -> tuple[object, list[Record]]:
    """The reference: every record through the general per-record decoder."""
    from log_engine.records.batch import BATCH_HEADER_SIZE, _decode_record, _read_complete

    header = _read_complete(data, 0)
    body = bytes(data[BATCH_HEADER_SIZE : header.size])
    log_append = header.timestamp_type == TimestampType.LOG_APPEND_TIME
    records, cursor = [], 0
    for _ in range(header.records_count):
        record, cursor = _decode_record(body, cursor, header, log_append)
        records.append(record)
    if cursor != len(body):
        raise CorruptMessageError("trailing bytes")
    return header, records


def _outcome(decode, data: bytes) -> tuple[str, object]:
    try:
        return "ok", decode(data)[1]
    except (CorruptMessageError, IndexError) as exc:
        return "error", type(exc)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(_wide_records, st.sampled_from(list(TimestampType)), st.integers(0, 2**40))
def test_inline_decode_matches_the_general_decoder(
    records: list[Record], ts_type: TimestampType, base: int
) -> None:
    data = build_batch(records, base_offset=base, timestamp_type=ts_type, now_ms=_BASE_TS)
    _, decoded = decode_batch(data)
    assert decoded == _decode_record_by_record(data)[1]
    assert [r.offset for r in decoded] == [base + i for i in range(len(records))]
    if ts_type == TimestampType.CREATE_TIME:
        assert [(r.key, r.value, r.headers, r.timestamp) for r in decoded] == [
            (r.key, r.value, r.headers, r.timestamp) for r in records
        ]
    assert all(type(r) is Record for r in decoded)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.builds(
            Record, key=_nullable, value=st.binary(max_size=150), timestamp=st.just(_BASE_TS)
        ),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=3),
)
def test_inline_decode_of_corrupt_records_matches_the_general_decoder(
    records: list[Record], edits: list[tuple[int, int]]
) -> None:
    from log_engine.records.batch import BATCH_HEADER_SIZE

    data = bytearray(build_batch(records))
    for where, byte in edits:
        data[BATCH_HEADER_SIZE + where % (len(data) - BATCH_HEADER_SIZE)] = byte
    fast = _outcome(lambda d: decode_batch(d, verify_crc=False), bytes(data))
    assert fast == _outcome(_decode_record_by_record, bytes(data))


def test_inline_decode_of_long_values_and_many_records() -> None:
    records = [
        Record(b"k" * (i % 70), b"v" * size, timestamp=_BASE_TS + i * 1000)
        for i, size in enumerate([8190, 8191, 8192, 20000, 0, 63, 64, 100] * 40)
    ]
    data = build_batch(records, base_offset=5)
    _, decoded = decode_batch(data)
    assert decoded == _decode_record_by_record(data)[1]
    assert [(r.key, r.value, r.timestamp, r.offset) for r in decoded] == [
        (r.key, r.value, r.timestamp, 5 + i) for i, r in enumerate(records)
    ]
