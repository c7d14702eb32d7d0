"""Bulk conversion gives exactly what record-by-record conversion gives, or steps aside."""

from __future__ import annotations

from typing import Any

import pytest

from connect_worker.converters import (
    ByteArrayConverter,
    JsonConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from connect_worker.runtime.conversion import (
    RecordConverters,
    build_sink_records,
)
from connect_worker.runtime.error_handling import StageError
from connectors.api import Converter, DataError, SinkRecord, SourceRecord
from connectors.api.records import TimestampType
from connectors.api.schema import STRING
from log_engine.client import ConsumerRecord


def _converters(key: Converter, value: Converter, **value_props: str) -> RecordConverters:
    key.configure({}, True)
    value.configure(value_props, False)
    header = SimpleHeaderConverter()
    header.configure({})
    return RecordConverters(key, value, header)


def _source(n: int, **changes: Any) -> SourceRecord:
    fields: dict[str, Any] = {
        "topic": "t",
        "value": f"line {n} é",
        "value_schema": STRING,
        "source_partition": {"f": "x"},
        "source_offset": {"position": n},
    }
    fields.update(changes)
    return SourceRecord(**fields)


@pytest.mark.parametrize(
    "make",
    [
        lambda: _converters(StringConverter(), StringConverter()),
        lambda: _converters(StringConverter(), JsonConverter(), **{"schemas.enable": "true"}),
        lambda: _converters(JsonConverter(), JsonConverter(), **{"schemas.enable": "false"}),
    ],
    ids=["string", "json-schemas", "json-plain"],
)
def test_to_log_many_matches_to_log(make: Any) -> None:
    converters: RecordConverters = make()
    records = [_source(n) for n in range(5)]
    records.append(_source(5, key="k", partition=1, timestamp=1234))
    records.append(_source(6, value=None, value_schema=None))
    columns = converters.to_log_many(records)
    assert columns is not None and columns.topic == "t"
    singles = [converters.to_log(r) for r in records]
    assert columns.values == [value for _, value, _ in singles]
    assert columns.keys == [key for key, _, _ in singles]
    assert columns.partitions == [None] * 5 + [1, None]
    assert columns.timestamps == [None] * 5 + [1234, None]


def test_to_log_many_leaves_out_what_every_record_lacks() -> None:
    converters = _converters(StringConverter(), StringConverter())
    columns = converters.to_log_many([_source(n) for n in range(3)])
    assert columns is not None
    assert columns.keys is None and columns.partitions is None and columns.timestamps is None


def test_a_batch_of_tombstones_keeps_its_null_values() -> None:
    converters = _converters(StringConverter(), StringConverter())
    columns = converters.to_log_many([_source(n, value=None, value_schema=None) for n in range(3)])
    assert columns is not None and columns.values == [None, None, None]


@pytest.mark.parametrize(
    "odd_one",
    [
        _source(9, topic="other"),  # a second topic
        _source(9, headers=(("h", object()),)),  # a header no converter can write
        _source(9, value=b"\xff", value_schema=None),  # fine for String... but see below
    ],
    ids=["topics", "bad-header", "bytes"],
)
def test_to_log_many_steps_aside_for_batches_it_does_not_take(odd_one: SourceRecord) -> None:
    converters = _converters(StringConverter(), ByteArrayConverter())
    records = [_source(n, value=b"ok", value_schema=None) for n in range(3)] + [odd_one]
    if odd_one.value == b"\xff":  # ByteArrayConverter takes bytes: the batch is fine
        assert converters.to_log_many(records) is not None
    else:
        assert converters.to_log_many(records) is None


def test_a_value_that_fails_to_convert_sends_the_batch_record_by_record() -> None:
    converters = _converters(StringConverter(), ByteArrayConverter())
    records = [_source(0, value=b"ok", value_schema=None), _source(1, value="text")]
    assert converters.to_log_many(records) is None
    with pytest.raises(StageError, match=r"VALUE_CONVERTER: DataError: .*takes bytes, not str"):
        converters.to_log(records[1])  # what the per-record path then reports


def test_string_converter_many_falls_back_to_each_value_rules() -> None:
    converter = StringConverter()
    converter.configure({"converter.encoding": "ascii"}, False)
    schemas = [None] * 4
    assert converter.from_connect_many("t", schemas, ["a", None, b"b", 7]) == [
        b"a", None, b"b", b"7",
    ]
    with pytest.raises(DataError, match="cannot encode as ascii"):
        converter.from_connect_many("t", [None], ["é"])
    assert converter.to_connect_many("t", [b"a", None])[1] == ["a", None]
    with pytest.raises(DataError, match="not ascii text"):
        converter.to_connect_many("t", [b"\xff"])


def _consumed(n: int, **changes: Any) -> ConsumerRecord:
    fields: dict[str, Any] = {
        "topic": "t", "partition": 2, "offset": 100 + n, "timestamp": 5000 + n,
        "key": None, "value": f"v{n}".encode(), "headers": (),
    }
    fields.update(changes)
    return ConsumerRecord(**fields)


@pytest.mark.parametrize(
    "make",
    [
        lambda: _converters(StringConverter(), StringConverter()),
        lambda: _converters(ByteArrayConverter(), ByteArrayConverter()),
        lambda: _converters(StringConverter(), JsonConverter(), **{"schemas.enable": "false"}),
    ],
    ids=["string", "bytes", "json"],
)
def test_to_sink_records_matches_to_sink_record(make: Any) -> None:
    converters: RecordConverters = make()
    run = [_consumed(n) for n in range(4)] + [_consumed(4, key=b"7", timestamp=-1)]
    if isinstance(converters.value, JsonConverter):
        run = [r._replace(value=b'{"n": %d}' % r.offset) for r in run]
    bulk = converters.to_sink_records(run)
    assert bulk == [converters.to_sink_record(r) for r in run]
    assert bulk is not None and bulk[4].timestamp is None


def test_to_sink_records_steps_aside_for_headers_and_bad_values() -> None:
    converters = _converters(StringConverter(), JsonConverter(), **{"schemas.enable": "false"})
    assert converters.to_sink_records([_consumed(0, headers=(("h", b"v"),))]) is None
    assert converters.to_sink_records([_consumed(0, value=b"not json")]) is None


def test_sink_records_built_by_slots_equal_the_keyword_constructor() -> None:
    columns = (["k", None], ["v", b"w"], [STRING, None], [None, STRING], [9, None], [42, 43])
    built = build_sink_records("t", 1, (("h", 1),), TimestampType.LOG_APPEND_TIME, *columns)
    names = ("key", "value", "key_schema", "value_schema", "timestamp", "kafka_offset")
    assert built == [
        SinkRecord(topic="t", partition=1, headers=(("h", 1),),
                   timestamp_type=TimestampType.LOG_APPEND_TIME,
                   **dict(zip(names, row, strict=True)))
        for row in zip(*columns, strict=True)
    ]
    assert built[0] == SinkRecord(
        topic="t", partition=1, key="k", value="v", key_schema=STRING, headers=(("h", 1),),
        timestamp=9, kafka_offset=42, timestamp_type=TimestampType.LOG_APPEND_TIME,
    )
    assert built[1].value == b"w" and built[1].kafka_offset == 43
    with pytest.raises(AttributeError):
        built[0].value = "changed"  # type: ignore[misc]  # still immutable


def test_headers_are_converted_per_record_in_the_bulk_path() -> None:
    converters = _converters(StringConverter(), StringConverter())
    records = [
        _source(0, headers=(("mqtt.qos", 1), ("mqtt.retained", False))),
        _source(1),
        _source(2, headers=(("mqtt.qos", 0), ("note", "é"))),
    ]
    columns = converters.to_log_many(records)
    assert columns is not None and columns.headers is not None
    assert columns.headers == [converters.to_log(r)[2] or None for r in records]
    assert columns.headers[1] is None
    assert converters.to_log_many([_source(0)]).headers is None  # type: ignore[union-attr]
