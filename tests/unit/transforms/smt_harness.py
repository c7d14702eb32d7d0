"""Transform tests the Benthos way: a properties snippet, input records, expected records.

A snippet is either a connector's transform section::

    transforms=tag
    transforms.tag.type=InsertField$Value
    transforms.tag.static.field=source
    transforms.tag.static.value=db1

(with ``predicates=...`` and ``predicate``/``negate`` as Kafka Connect reads
them), or just one transform's options given with its class. Types resolve
through the classes' ``aliases`` and dotted paths, as the plugin registry
resolves them. The chain here is the test's own: ten lines, so a transform's
tests do not depend on the runtime.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from connect_worker.properties import parse_properties
from connectors.api import ConnectRecord, SinkRecord, SourceRecord
from transforms.api import Predicate, Transformation
from transforms.plugin import PREDICATES, TRANSFORMS


def _by_name(classes: Iterable[type]) -> dict[str, type]:
    names: dict[str, type] = {}
    for cls in classes:
        names[f"{cls.__module__}.{cls.__qualname__}"] = cls
        for alias in cls.aliases:
            names[alias] = cls
    return names


TRANSFORM_NAMES = _by_name(TRANSFORMS)
PREDICATE_NAMES = _by_name(PREDICATES)


def _options(props: dict[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


def _names(props: dict[str, str], key: str) -> list[str]:
    return [name.strip() for name in props.get(key, "").split(",") if name.strip()]


class Chain:
    """The transforms of a snippet, applied in order with their predicates."""

    def __init__(self, snippet: str) -> None:
        props = parse_properties(snippet)
        predicates: dict[str, Predicate] = {}
        for alias in _names(props, "predicates"):
            options = _options(props, f"predicates.{alias}.")
            predicates[alias] = configured(PREDICATE_NAMES[options.pop("type")], options)
        self.steps: list[tuple[Transformation, Predicate | None, bool]] = []
        for alias in _names(props, "transforms"):
            options = _options(props, f"transforms.{alias}.")
            cls = TRANSFORM_NAMES[options.pop("type")]
            predicate = predicates[options.pop("predicate")] if "predicate" in options else None
            negate = options.pop("negate", "false").lower() == "true"
            self.steps.append((configured(cls, options), predicate, negate))

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        current: ConnectRecord | None = record
        for transform, predicate, negate in self.steps:
            if current is None:
                break
            if predicate is not None and predicate.test(current) == negate:
                continue
            current = transform.apply(current)
        return current


def configured(cls: type, options: str | dict[str, str]) -> Any:
    """An instance of ``cls`` configured with ``options`` (a snippet or a dict)."""
    plugin = cls()
    plugin.configure(parse_properties(options) if isinstance(options, str) else options)
    return plugin


def run(
    snippet: str | dict[str, str], records: Iterable[ConnectRecord], cls: type | None = None
) -> list[ConnectRecord]:
    """The records a snippet's chain (or ``cls`` with the snippet as options) outputs."""
    if cls is None:
        assert isinstance(snippet, str)
        chain = Chain(snippet)
        outputs = [chain.apply(record) for record in records]
    else:
        transform = configured(cls, snippet)
        outputs = [transform.apply(record) for record in records]
    return [record for record in outputs if record is not None]


def check(
    snippet: str | dict[str, str],
    records: Iterable[ConnectRecord],
    expected: Iterable[ConnectRecord],
    cls: type | None = None,
) -> None:
    """Assert that the snippet turns ``records`` into exactly ``expected``."""
    assert run(snippet, records, cls) == list(expected)


def rec(value: Any = None, **fields: Any) -> SourceRecord:
    """A source record on topic ``t`` (override with keyword arguments)."""
    fields.setdefault("topic", "t")
    return SourceRecord(value=value, **fields)


def sink_rec(value: Any = None, **fields: Any) -> SinkRecord:
    """A sink record on topic ``t``, partition 0, offset 42."""
    fields.setdefault("topic", "t")
    fields.setdefault("partition", 0)
    fields.setdefault("kafka_offset", 42)
    return SinkRecord(value=value, **fields)
