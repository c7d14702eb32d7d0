"""The ``sluice`` data source's options, named as Spark's Kafka source names them.

::

    bootstrap.servers        the log (``kafka.bootstrap.servers`` is accepted too)
    subscribe                topics, comma-separated            (exactly one of these three)
    subscribePattern         a regular expression over topic names (full match)
    assign                   JSON {"topic": [0, 1]}
    startingOffsets          earliest | latest | JSON {"t": {"0": 23, "1": -2}}  (-2 earliest,
    endingOffsets            earliest | latest | JSON (batch only)                -1 latest)
    maxOffsetsPerTrigger     streaming: at most this many records per micro-batch
    includeHeaders           true: add the ``headers`` column
    failOnDataLoss           true (default): fail the query when offsets it must read are gone
                             from the log; false: warn and read on from what is left

Data is lost when a partition's earliest offset (moved by retention or
DeleteRecords) is above an offset the query must read (an explicit
startingOffsets offset, a streaming query's checkpointed position, a range an
executor is reading), or when a partition being read was deleted.
:class:`spark_sinks.log_access.DataLoss` applies the option.

Parsing is pure Python (no pyspark), so it is unit-tested without a session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from connectors.api import ConfigError

EARLIEST = -2
LATEST = -1

#: A partition's offset spec: EARLIEST, LATEST or an absolute offset.
OffsetSpec = int
#: ``{topic: {partition: offset}}`` with ints; the checkpointed form has str partitions.
PartitionOffsets = dict[str, dict[int, int]]


@dataclass(frozen=True, slots=True)
class OffsetBound:
    """``earliest``/``latest`` for every partition, or explicit per-partition specs."""

    default: OffsetSpec
    explicit: PartitionOffsets | None = None

    def spec(self, topic: str, partition: int) -> OffsetSpec:
        if self.explicit is None:
            return self.default
        try:
            return self.explicit[topic][partition]
        except KeyError:
            raise ConfigError(
                f"offsets JSON names no offset for {topic}-{partition}; "
                "give every partition read (or use earliest/latest)"
            ) from None


@dataclass(frozen=True, slots=True)
class SourceOptions:
    """What to read and where to start/stop (see the module doc)."""

    bootstrap: str
    topics: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None
    assign: dict[str, tuple[int, ...]] | None = None
    starting: OffsetBound = OffsetBound(EARLIEST)
    ending: OffsetBound = OffsetBound(LATEST)
    max_offsets_per_trigger: int | None = None
    include_headers: bool = False
    fail_on_data_loss: bool = True

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
        """Validate Spark's (case-insensitive) option map; ConfigError names the option."""
        opts = {k.lower(): v for k, v in options.items()}
        bootstrap = opts.get("bootstrap.servers") or opts.get("kafka.bootstrap.servers")
        if not bootstrap:
            raise ConfigError("bootstrap.servers: the sluice data source needs the log's address")
        chosen = [k for k in ("subscribe", "subscribepattern", "assign") if opts.get(k)]
        if len(chosen) != 1:
            raise ConfigError("set exactly one of subscribe, subscribePattern, assign")
        topics: tuple[str, ...] = ()
        pattern = None
        assign = None
        if chosen[0] == "subscribe":
            topics = tuple(t.strip() for t in opts["subscribe"].split(",") if t.strip())
            if not topics:
                raise ConfigError("subscribe: no topic named")
        elif chosen[0] == "subscribepattern":
            try:
                pattern = re.compile(opts["subscribepattern"])
            except re.error as exc:
                raise ConfigError(
                    f"subscribePattern: not a valid regular expression: {exc}"
                ) from None
        else:
            assign = _parse_assign(opts["assign"])
        starting = parse_bound(
            "startingOffsets", opts.get("startingoffsets", "latest" if streaming else "earliest")
        )
        if streaming and "endingoffsets" in opts:
            raise ConfigError("endingOffsets: only for batch queries (spark.read)")
        ending = parse_bound("endingOffsets", opts.get("endingoffsets", "latest"))
        if ending.default == EARLIEST and ending.explicit is None:
            raise ConfigError("endingOffsets: earliest is not allowed (nothing would be read)")
        limit = opts.get("maxoffsetspertrigger")
        max_offsets = None
        if limit is not None:
            try:
                max_offsets = int(limit)
            except ValueError:
                max_offsets = 0
            if max_offsets < 1:
                raise ConfigError(
                    f"maxOffsetsPerTrigger: must be a positive integer, not {limit!r}"
                )
        headers = _parse_bool("includeHeaders", opts.get("includeheaders", "false"))
        fail_on_data_loss = _parse_bool("failOnDataLoss", opts.get("failondataloss", "true"))
        return cls(
            bootstrap=bootstrap,
            topics=topics,
            pattern=pattern,
            assign=assign,
            starting=starting,
            ending=ending,
            max_offsets_per_trigger=max_offsets,
            include_headers=headers,
            fail_on_data_loss=fail_on_data_loss,
        )


def _parse_bool(name: str, text: str) -> bool:
    word = text.strip().lower()
    if word not in ("true", "false"):
        raise ConfigError(f"{name}: true or false, not {text!r}")
    return word == "true"


def parse_bound(name: str, text: str) -> OffsetBound:
    """``earliest``, ``latest`` or ``{"topic": {"0": 23, "1": -2}}``."""
    word = text.strip().lower()
    if word == "earliest":
        return OffsetBound(EARLIEST)
    if word == "latest":
        return OffsetBound(LATEST)
    try:
        raw = json.loads(text)
        explicit = {
            str(topic): {int(p): int(o) for p, o in parts.items()} for topic, parts in raw.items()
        }
    except (ValueError, AttributeError, TypeError):
        raise ConfigError(
            f'{name}: earliest, latest or JSON like {{"topic": {{"0": 23, "1": -2}}}}, not {text!r}'
        ) from None
    for topic, parts in explicit.items():
        for partition, offset in parts.items():
            if offset < EARLIEST:
                raise ConfigError(f"{name}: offset {offset} for {topic}-{partition} is invalid")
    return OffsetBound(LATEST, explicit)


def _parse_assign(text: str) -> dict[str, tuple[int, ...]]:
    try:
        raw = json.loads(text)
        assign = {str(t): tuple(int(p) for p in parts) for t, parts in raw.items()}
    except (ValueError, AttributeError, TypeError):
        raise ConfigError(f'assign: JSON like {{"topic": [0, 1]}}, not {text!r}') from None
    if not assign or not any(assign.values()):
        raise ConfigError("assign: no partition named")
    return assign


def to_checkpoint(offsets: PartitionOffsets) -> dict[str, dict[str, int]]:
    """The JSON-friendly form Spark keeps in its checkpoint (partition keys as strings)."""
    return {
        t: {str(p): o for p, o in sorted(parts.items())} for t, parts in sorted(offsets.items())
    }


def from_checkpoint(offsets: Mapping[str, Mapping[str, int]]) -> PartitionOffsets:
    return {t: {int(p): int(o) for p, o in parts.items()} for t, parts in offsets.items()}


def limit_offsets(
    start: Mapping[str, Mapping[int, int]],
    latest: Mapping[str, Mapping[int, int]],
    max_rows: int | None,
) -> PartitionOffsets:
    """End offsets at most ``max_rows`` past ``start`` in total, shared by backlog size.

    Never behind ``start`` (a partition whose log end is below ``start``, e.g.
    after retention, keeps ``start``). Each partition gets its proportional
    share, rounded down; what rounding leaves goes to partitions in order.
    """
    end: PartitionOffsets = {t: dict(parts) for t, parts in start.items()}
    backlog = {
        (t, p): max(0, offset - start.get(t, {}).get(p, offset))
        for t, parts in latest.items()
        for p, offset in parts.items()
    }
    total = sum(backlog.values())
    if max_rows is None or total <= max_rows:
        grant = backlog
    else:
        grant = {key: n * max_rows // total for key, n in backlog.items()}
        left = max_rows - sum(grant.values())
        for key in sorted(backlog):
            extra = min(left, backlog[key] - grant[key])
            grant[key] += extra
            left -= extra
    for (topic, partition), n in grant.items():
        begin = start.get(topic, {}).get(partition)
        if begin is None:
            begin = latest[topic][partition] - backlog[(topic, partition)]
        end.setdefault(topic, {})[partition] = begin + n
    return end
