"""The structural record check: the C extension and the pure-Python fallback agree."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from log_engine.errors import CorruptMessageError, MalformedRecordError, MessageTooLargeError
from log_engine.records import (
    BATCH_HEADER_SIZE,
    Compression,
    Record,
    build_batch,
    read_header,
    record_check,
)

# Not a skip: CI builds the extension (pip install -e .), and a missing one must show.
from log_engine.records import _record_check as native
from log_engine.records.compression import BoundedDecompressor, compress, decompress
from log_engine.records.record_check import Problem, check_batch_records, check_records_py

records_st = st.lists(
    st.builds(
        Record,
        st.none() | st.binary(max_size=200),
        st.none() | st.binary(max_size=300),
        st.lists(
            st.tuples(st.text(max_size=5), st.none() | st.binary(max_size=5)), max_size=3
        ).map(tuple),
        st.integers(0, 2**42),
    ),
    min_size=1,
    max_size=40,
)


def payload(records: list[Record]) -> bytes:
    return build_batch(records)[BATCH_HEADER_SIZE:]


def both(data: bytes, count: int, require_keys: bool) -> tuple[int, int]:
    answer = check_records_py(data, count, require_keys)
    assert native.check_records(data, count, require_keys) == answer
    return answer


@settings(max_examples=300, deadline=None)
@given(records_st, st.booleans())
def test_valid_records_pass_in_both(records: list[Record], require_keys: bool) -> None:
    answer = both(payload(records), len(records), require_keys)
    has_null_key = any(r.key is None for r in records)
    if require_keys and has_null_key:
        assert answer[0] == Problem.NULL_KEY
    else:
        assert answer == (0, -1)


@settings(max_examples=1500, deadline=None)
@given(records_st, st.data(), st.booleans())
def test_damaged_records_get_the_same_answer_from_both(
    records: list[Record], data: st.DataObject, require_keys: bool
) -> None:
    raw = bytearray(payload(records))
    for _ in range(data.draw(st.integers(1, 4))):
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        at = data.draw(st.integers(0, max(0, len(raw) - 1)))
        if action == "flip" and raw:
            raw[at] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del raw[at : at + data.draw(st.integers(1, 8))]
        else:
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=6))
    count = len(records) + data.draw(st.integers(-1, 1))
    both(bytes(raw), max(count, 0), require_keys)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 50), st.booleans())
def test_random_bytes_get_the_same_answer_from_both(
    raw: bytes, count: int, require_keys: bool
) -> None:
    both(raw, count, require_keys)


@pytest.mark.parametrize(
    ("data", "count", "expected"),
    [
        (b"", 1, (Problem.TRUNCATED, 0)),
        (b"\x80\x80\x80\x80\x80", 1, (Problem.BAD_VARINT, 0)),
        (b"\x80\x80\x80\x80\x10", 1, (Problem.BAD_VARINT, 0)),
        (b"\x80", 1, (Problem.TRUNCATED, 0)),
        (b"\x01", 1, (Problem.BAD_LENGTH, 0)),  # length -1
        (b"\x14\x00", 1, (Problem.BAD_LENGTH, 0)),  # length 10, 1 byte left
        (b"\x00", 1, (Problem.LENGTH_MISMATCH, 0)),  # length 0: no attributes byte
        # attributes, ts 0, delta 1 (not 0), ...
        (b"\x0c\x00\x00\x02\x01\x01\x00", 1, (Problem.OFFSET_DELTA, 0)),
        (b"\x0c\x00\x00\x00\x03\x01\x00", 1, (Problem.NEGATIVE_SIZE, 0)),  # key length -2
        (b"\x0c\x00\x00\x00\x01\x01\x01", 1, (Problem.NEGATIVE_SIZE, 0)),  # header count -1
        (b"\x10\x00\x00\x00\x01\x01\x02\x01\x00", 1, (Problem.NULL_HEADER_KEY, 0)),
        (b"\x0c\x00\x00\x00\x01\x01\x00\x00", 1, (Problem.TRAILING_BYTES, 1)),
        (b"\x0e\x00\x00\x00\x01\x01\x00\x00", 1, (Problem.LENGTH_MISMATCH, 0)),
    ],
)
def test_each_problem(data: bytes, count: int, expected: tuple[int, int]) -> None:
    assert both(data, count, False) == expected


def test_null_key_only_when_keys_are_required() -> None:
    data = payload([Record(b"k", b"v"), Record(None, b"v")])
    assert both(data, 2, False) == (0, -1)
    assert both(data, 2, True) == (Problem.NULL_KEY, 1)


def test_negative_count_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        check_records_py(b"", -1, False)
    with pytest.raises(ValueError):
        native.check_records(b"", -1, False)


@pytest.mark.parametrize("codec", list(Compression))
def test_check_batch_records_decompresses(codec: Compression) -> None:
    batch = build_batch([Record(b"k", b"v" * 50)] * 20, compression=codec)
    check_batch_records(batch, 0, read_header(batch), require_keys=True)


def test_check_batch_records_names_the_record() -> None:
    batch = build_batch([Record(b"k", b"v"), Record(None, b"v"), Record(b"k", b"v")])
    with pytest.raises(MalformedRecordError, match="record 1") as caught:
        check_batch_records(batch, 0, read_header(batch), require_keys=True)
    assert caught.value.record_index == 1 and caught.value.errno == 87


def test_undecompressable_records_are_corrupt() -> None:
    batch = bytearray(build_batch([Record(b"k", b"v" * 50)] * 20, compression=Compression.LZ4))
    batch[BATCH_HEADER_SIZE + 8 :] = b"\xff" * (len(batch) - BATCH_HEADER_SIZE - 8)
    with pytest.raises(CorruptMessageError):
        check_batch_records(bytes(batch), 0, read_header(bytes(batch)), require_keys=False)


def test_the_broker_uses_the_extension_when_built() -> None:
    assert record_check.NATIVE


@pytest.mark.parametrize("codec", [c for c in Compression if c != Compression.NONE])
def test_bounded_decompressor_matches_decompress(codec: Compression) -> None:
    reader = BoundedDecompressor(1 << 20)
    for size in (0, 1, 5000, 300_000):
        data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
        packed = compress(codec, data)
        assert bytes(reader.decompress(codec, packed)) == decompress(codec, packed) == data


@pytest.mark.parametrize("codec", [c for c in Compression if c != Compression.NONE])
@pytest.mark.parametrize("size", [(1 << 20) + 1, 20 << 20])  # past the bound; past the scratch
def test_bounded_decompressor_refuses_a_bomb(codec: Compression, size: int) -> None:
    packed = compress(codec, b"\x00" * size)
    with pytest.raises(MessageTooLargeError):
        BoundedDecompressor(1 << 20).decompress(codec, packed)


def test_bounded_decompressor_past_the_scratch_buffer_within_the_bound() -> None:
    data = b"\x01" * (12 << 20)  # more than the 8 MiB scratch buffer
    for codec in (Compression.LZ4, Compression.ZSTD):
        assert bytes(BoundedDecompressor(16 << 20).decompress(codec, compress(codec, data))) == data


@pytest.mark.parametrize("codec", [c for c in Compression if c != Compression.NONE])
def test_bounded_decompressor_refuses_broken_streams(codec: Compression) -> None:
    packed = compress(codec, b"abc" * 10_000)
    for broken in (packed[: len(packed) // 2], b"\x00garbage" * 4):
        with pytest.raises(CorruptMessageError):
            BoundedDecompressor(1 << 20).decompress(codec, broken)
