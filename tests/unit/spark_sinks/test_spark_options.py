"""The sluice data source's options and read limits (pure Python, no Spark)."""

from __future__ import annotations

import pytest

from connectors.api import ConfigError
from spark_sinks.options import (
    EARLIEST,
    LATEST,
    SourceOptions,
    from_checkpoint,
    limit_offsets,
    to_checkpoint,
)

BASE = {"bootstrap.servers": "h:1"}


def test_defaults_follow_spark_kafka_batch_and_streaming() -> None:
    batch = SourceOptions.parse({**BASE, "subscribe": "a, b"}, streaming=False)
    assert batch.topics == ("a", "b")
    assert batch.starting.default == EARLIEST and batch.ending.default == LATEST
    stream = SourceOptions.parse({**BASE, "subscribe": "a"}, streaming=True)
    assert stream.starting.default == LATEST


def test_option_names_are_case_insensitive_and_json_offsets_parse() -> None:
    opts = SourceOptions.parse(
        {
            "kafka.bootstrap.servers": "h:1",
            "ASSIGN": '{"t": [0, 1]}',
            "startingoffsets": '{"t": {"0": 23, "1": -2}}',
            "maxOffsetsPerTrigger": "100",
            "includeHeaders": "TRUE",
        },
        streaming=True,
    )
    assert opts.assign == {"t": (0, 1)}
    assert opts.starting.spec("t", 0) == 23 and opts.starting.spec("t", 1) == EARLIEST
    assert opts.max_offsets_per_trigger == 100 and opts.include_headers


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"subscribe": "a"}, "bootstrap.servers"),
        ({**BASE}, "exactly one of subscribe"),
        ({**BASE, "subscribe": "a", "assign": '{"a": [0]}'}, "exactly one of subscribe"),
        ({**BASE, "subscribePattern": "("}, "subscribePattern"),
        ({**BASE, "assign": "[1]"}, "assign"),
        ({**BASE, "subscribe": "a", "startingOffsets": "{bad"}, "startingOffsets"),
        ({**BASE, "subscribe": "a", "startingOffsets": '{"a": {"0": -3}}'}, "startingOffsets"),
        ({**BASE, "subscribe": "a", "endingOffsets": "earliest"}, "endingOffsets"),
        ({**BASE, "subscribe": "a", "maxOffsetsPerTrigger": "0"}, "maxOffsetsPerTrigger"),
        ({**BASE, "subscribe": "a", "includeHeaders": "yes"}, "includeHeaders"),
    ],
)
def test_bad_options_name_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SourceOptions.parse(options, streaming=False)


def test_partition_missing_from_json_offsets_is_an_error() -> None:
    opts = SourceOptions.parse(
        {**BASE, "subscribe": "a", "startingOffsets": '{"a": {"0": 1}}'}, streaming=False
    )
    with pytest.raises(ConfigError, match="a-1"):
        opts.starting.spec("a", 1)


def test_checkpoint_form_round_trips() -> None:
    offsets = {"t": {1: 5, 0: 7}}
    assert to_checkpoint(offsets) == {"t": {"0": 7, "1": 5}}
    assert from_checkpoint(to_checkpoint(offsets)) == offsets


def test_limit_offsets_shares_the_limit_by_backlog_and_never_exceeds_it() -> None:
    start = {"t": {0: 0, 1: 10}}
    latest = {"t": {0: 90, 1: 20}}
    assert limit_offsets(start, latest, None) == latest
    end = limit_offsets(start, latest, 50)
    assert end == {"t": {0: 45, 1: 15}}
    end = limit_offsets(start, latest, 7)
    assert sum(end["t"][p] - start["t"][p] for p in (0, 1)) == 7
    assert limit_offsets(start, latest, 1000) == latest


def test_limit_offsets_always_advances_and_never_goes_back() -> None:
    start = {"t": {0: 0, 1: 0, 2: 50}}
    latest = {"t": {0: 1, 1: 1, 2: 40}}  # partition 2: log end below start (retention)
    end = limit_offsets(start, latest, 1)
    assert end["t"][2] == 50
    assert end["t"][0] + end["t"][1] == 1
