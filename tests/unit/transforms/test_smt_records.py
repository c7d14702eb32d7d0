"""The cheap record copies transforms use instead of ``ConnectRecord.replace``."""

from __future__ import annotations

from dataclasses import dataclass

from connectors.api import SinkRecord, SourceRecord
from connectors.api.records import ConnectRecord
from connectors.api.schema import STRING
from transforms._records import with_changes, with_key, with_topic, with_value

SOURCE = SourceRecord(
    topic="t",
    partition=1,
    key="k",
    value={"a": 1},
    headers=(("h", 1),),
    timestamp=5,
    source_partition={"file": "x"},
    source_offset={"position": 9},
)
SINK = SinkRecord(topic="t", partition=0, key="k", value="v", kafka_offset=7)


@dataclass(frozen=True, kw_only=True)  # no slots: must fall back to replace()
class DictRecord(ConnectRecord):
    extra: int = 0


def test_copies_equal_replace_for_every_record_class() -> None:
    for record in (SOURCE, SINK, DictRecord(topic="t", value=1, extra=3)):
        assert with_value(record, "new", STRING) == record.replace(value="new", value_schema=STRING)
        assert with_key(record, 3, None) == record.replace(key=3, key_schema=None)
        assert with_topic(record, "u") == record.replace(topic="u")
        assert with_changes(record, ("headers",), ((),)) == record.replace(headers=())
        assert type(with_value(record, 1, None)) is type(record)


def test_the_original_is_untouched() -> None:
    copy = with_value(SOURCE, None, None)
    assert copy is not SOURCE
    assert (SOURCE.value, copy.value, copy.source_offset) == ({"a": 1}, None, {"position": 9})
