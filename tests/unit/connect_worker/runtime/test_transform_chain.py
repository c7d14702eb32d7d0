"""The transform chain: order, predicates (negate), drops, config errors; error handling."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import pytest

from connect_worker.plugins import PluginRegistry
from connect_worker.runtime.error_handling import (
    ErrorContext,
    ErrorHandler,
    ErrorSettings,
    Stage,
    StageError,
    ToleranceExceededError,
)
from connect_worker.runtime.status import TaskId
from connect_worker.runtime.transform_chain import TransformChain
from connectors.api import ConfigError, ConnectRecord, DataError, RetriableError, hookimpl
from transforms.api import Predicate, Transformation


class Append(Transformation):
    """Appends ``suffix`` to string values."""

    aliases = ("Append",)
    closed = 0

    def configure(self, props: Mapping[str, str]) -> None:
        self.suffix = props["suffix"]

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        return record.replace(value=f"{record.value}{self.suffix}")

    def close(self) -> None:
        Append.closed += 1


class DropAll(Transformation):
    aliases = ("DropAll",)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        return None


class Startswith(Predicate):
    aliases = ("Startswith",)

    def configure(self, props: Mapping[str, str]) -> None:
        self.prefix = props["prefix"]

    def test(self, record: ConnectRecord) -> bool:
        return str(record.value).startswith(self.prefix)


@hookimpl
def sluice_transforms() -> list[type]:
    return [Append, DropAll]


@hookimpl
def sluice_predicates() -> list[type]:
    return [Startswith]


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    registry = PluginRegistry()
    assert registry.register(sys.modules[__name__], name="chain-test-plugins")
    return registry


def rec(value: Any) -> ConnectRecord:
    return ConnectRecord(topic="t", value=value)


def test_empty_chain_is_falsy_and_identity(registry: PluginRegistry) -> None:
    chain = TransformChain.from_props({}, registry)
    assert not chain
    record = rec("x")
    assert chain.apply(record) is record


def test_transforms_run_in_order_with_their_options(registry: PluginRegistry) -> None:
    chain = TransformChain.from_props(
        {
            "transforms": "a, b",
            "transforms.a.type": "Append",
            "transforms.a.suffix": "-1",
            "transforms.b.type": "Append",
            "transforms.b.suffix": "-2",
        },
        registry,
    )
    assert chain.aliases == ("a", "b")
    out = chain.apply(rec("x"))
    assert out is not None and out.value == "x-1-2"


@pytest.mark.parametrize(("negate", "expected"), [("false", ["ax!", "b"]), ("true", ["a", "b!"])])
def test_predicate_guards_a_transform(
    registry: PluginRegistry, negate: str, expected: list[str]
) -> None:
    chain = TransformChain.from_props(
        {
            "transforms": "bang",
            "transforms.bang.type": "Append",
            "transforms.bang.suffix": "!",
            "transforms.bang.predicate": "isA",
            "transforms.bang.negate": negate,
            "predicates": "isA",
            "predicates.isA.type": "Startswith",
            "predicates.isA.prefix": "a",
        },
        registry,
    )
    inputs = ["ax", "b"] if negate == "false" else ["a", "b"]
    outputs = [chain.apply(rec(v)) for v in inputs]
    assert [o.value for o in outputs if o is not None] == expected


def test_a_drop_ends_the_chain(registry: PluginRegistry) -> None:
    chain = TransformChain.from_props(
        {
            "transforms": "drop,after",
            "transforms.drop.type": "DropAll",
            "transforms.after.type": "Append",
            "transforms.after.suffix": "?",
        },
        registry,
    )
    assert chain.apply(rec("x")) is None


@pytest.mark.parametrize(
    ("props", "key"),
    [
        ({"transforms": "a"}, "transforms.a.type"),
        ({"transforms": "a", "transforms.a.type": "Nope"}, "transforms.a.type"),
        (
            {"transforms": "a", "transforms.a.type": "DropAll", "transforms.a.predicate": "p"},
            "transforms.a.predicate",
        ),
        ({"predicates": "p", "predicates.p.type": "Append"}, "predicates.p.type"),
    ],
)
def test_config_errors_name_the_key(
    registry: PluginRegistry, props: dict[str, str], key: str
) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        TransformChain.from_props(props, registry)


def test_a_failed_build_closes_what_was_configured(registry: PluginRegistry) -> None:
    before = Append.closed
    with pytest.raises(ConfigError):
        TransformChain.from_props(
            {
                "transforms": "ok,bad",
                "transforms.ok.type": "Append",
                "transforms.ok.suffix": "",
                "transforms.bad.type": "Nope",
            },
            registry,
        )
    assert Append.closed == before + 1


# -- error handling -------------------------------------------------------------------------


class Reporter:
    def __init__(self) -> None:
        self.seen: list[ErrorContext] = []

    def report(self, context: ErrorContext) -> None:
        self.seen.append(context)


def handler(reporter: Reporter | None = None, **settings: Any) -> ErrorHandler:
    return ErrorHandler(TaskId("c", 0), ErrorSettings(**settings), [reporter] if reporter else [])


def bad(record: Any) -> Any:
    raise StageError(Stage.VALUE_CONVERTER, DataError("not JSON"))


def test_tolerance_none_fails_on_a_bad_record() -> None:
    with pytest.raises(ToleranceExceededError, match="VALUE_CONVERTER"):
        handler().recover(bad, "r", StageError(Stage.VALUE_CONVERTER, DataError("not JSON")))


def test_tolerance_all_skips_and_reports() -> None:
    reporter = Reporter()
    errors = handler(reporter, tolerance_all=True)
    error = StageError(Stage.VALUE_CONVERTER, DataError("not JSON"))
    assert errors.recover(bad, "r", error) is None
    assert errors.skipped == 1
    assert [(c.stage, c.record) for c in reporter.seen] == [(Stage.VALUE_CONVERTER, "r")]


def test_other_exceptions_are_never_tolerated() -> None:
    error = StageError(Stage.TRANSFORMATION, KeyError("bug"))
    with pytest.raises(StageError):
        handler(tolerance_all=True).recover(bad, "r", error)


def test_retriable_errors_are_retried_within_the_timeout() -> None:
    attempts = []

    def flaky(record: Any) -> Any:
        attempts.append(record)
        if len(attempts) < 3:
            raise StageError(Stage.TRANSFORMATION, RetriableError("busy"))
        return "ok"

    errors = handler(retry_timeout_ms=-1, retry_delay_max_ms=1)
    first = StageError(Stage.TRANSFORMATION, RetriableError("busy"))
    assert errors.recover(flaky, "r", first) == "ok"
    assert len(attempts) == 3


def test_retriable_without_retry_timeout_counts_as_bad() -> None:
    error = StageError(Stage.TRANSFORMATION, RetriableError("busy"))
    assert handler(tolerance_all=True).recover(bad, "r", error) is None
    with pytest.raises(ToleranceExceededError):
        handler().recover(bad, "r", error)


def test_the_bundled_smts_and_predicates_chain() -> None:
    from connectors.api import SourceRecord

    chain = TransformChain.from_props(
        {
            "transforms": "route,drop",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "copy-$1",
            "transforms.drop.type": "Filter",
            "transforms.drop.predicate": "isTombstone",
            "predicates": "isTombstone",
            "predicates.isTombstone.type": "RecordIsTombstone",
        },
        PluginRegistry.load(entry_points=False),
    )
    routed = chain.apply(SourceRecord(topic="a", value="x", source_offset={"n": 1}))
    assert isinstance(routed, SourceRecord)
    assert (routed.topic, routed.source_offset) == ("copy-a", {"n": 1})
    assert chain.apply(SourceRecord(topic="a", value=None)) is None
