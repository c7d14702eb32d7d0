"""The dead-letter queue end to end over a real broker, through the StandaloneHerder.

Sinks: a record the value converter cannot read (invalid JSON) or ``put``
refuses goes to the dead-letter topic byte for byte, with Kafka's
``__connect.errors.*`` context headers, while the good records reach the
sink; with ``errors.tolerance=none`` the task is FAILED naming the reason.
Sources (beyond Kafka Connect): a record a transform refuses goes to the
dead-letter topic with its source partition and offset.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence

import pytest

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.runtime.error_handling import ErrorHandler, ErrorSettings, Stage
from connect_worker.runtime.status import TaskId
from connect_worker.states import State
from connectors.api import DataError, RetriableError, SinkRecord, hookimpl
from connectors.api.records import ConnectRecord
from harness.broker_process import BrokerProcess
from harness.wait import wait_for
from log_engine.client import ConsumerRecord, SyncProducer
from tests.integration.connect import plugins
from tests.integration.connect.helpers import task_state
from tests.integration.connect.plugins import sink_values
from tests.support.log_reading import read_all
from transforms.api import Transformation

MakeHerder = Callable[..., StandaloneHerder]
E = "__connect.errors."


class PickySinkTask(plugins.MemorySinkTask):
    """MemorySink that refuses (DataError) any batch holding a value starting with 'bad'."""

    def put(self, records: Sequence[SinkRecord]) -> None:
        if any(str(r.value).startswith("bad") for r in records):
            raise DataError("this sink refuses values starting with 'bad'")
        super().put(records)


class PickySink(plugins.MemorySink):
    aliases = ("PickySink",)

    @classmethod
    def task_class(cls) -> type:
        return PickySinkTask


class FlakyTransform(Transformation):
    """RetriableError for values starting with 'flaky' (``times`` times each; -1: always)."""

    aliases = ("FlakyTransform",)
    attempts: dict[str, int] = {}

    def configure(self, props: Mapping[str, str]) -> None:
        self.times = int(props.get("times", "-1"))

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        value = str(record.value)
        if value.startswith("flaky"):
            seen = self.attempts[value] = self.attempts.get(value, 0) + 1
            if self.times < 0 or seen <= self.times:
                raise RetriableError(f"{value}: busy (attempt {seen})")
        return record


class _TestPlugins:
    @hookimpl
    def sluice_connectors(self) -> list[type]:
        return [PickySink]

    @hookimpl
    def sluice_transforms(self) -> list[type]:
        return [FlakyTransform]


def produce(broker: BrokerProcess, topic: str, records: list[tuple[bytes, bytes, list]]) -> None:
    with SyncProducer({"bootstrap.servers": broker.bootstrap}) as producer:
        for key, value, headers in records:
            producer.send(topic, value, key, headers or None, 0).result(30)


def topic_exists(herder: StandaloneHerder, topic: str) -> bool:
    return topic in herder._worker.topics.list_topics()


def dead_letters_to(dlq: str) -> dict[str, str]:
    """Tolerate every error; send the failed records, with context headers, to ``dlq``."""
    return {
        "errors.tolerance": "all",
        "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true",
    }


def context_headers(record: ConsumerRecord) -> dict[str, str]:
    """A dead letter's headers as text, by name."""
    return {name: (data or b"").decode() for name, data in record.headers}


def sequence_source(topic: str, dlq: str, count: int, bad_every: int) -> dict[str, str]:
    """SequenceSource writing ``count`` values to ``topic``, every ``bad_every``-th a dict."""
    return {
        "connector.class": "SequenceSource",
        "topic": topic,
        "count": str(count),
        "bad.every": str(bad_every),
        **dead_letters_to(dlq),
    }


def json_sink(topic: str, dlq: str, **extra: str) -> dict[str, str]:
    return {
        "connector.class": "MemorySink",
        "topics": topic,
        "value.converter": "JsonConverter",
        "value.converter.schemas.enable": "false",
        **dead_letters_to(dlq),
        **extra,
    }


def test_a_poison_record_goes_to_the_dlq_with_context_headers(
    make_herder: MakeHerder, broker: BrokerProcess, topic_name: str
) -> None:
    dlq, sink = f"{topic_name}-dlq", f"{topic_name}-sink"
    produce(broker, topic_name, [
        (b"k0", b'{"n": 0}', []),
        (b"k1", b"not json {", [("trace-id", b"abc")]),
        (b"k2", b'{"n": 2}', []),
    ])
    herder = make_herder()
    herder.put_connector_config(sink, json_sink(topic_name, dlq), allow_replace=False)
    wait_for(lambda: len(sink_values(sink)) >= 2, "the good records")
    [dead] = read_all(broker, dlq, 1)
    assert sink_values(sink) == [{"n": 0}, {"n": 2}]
    assert task_state(herder, sink) is State.RUNNING

    assert (dead.key, dead.value) == (b"k1", b"not json {")
    headers = context_headers(dead)
    assert dead.headers[0] == ("trace-id", b"abc")  # the original headers come first
    assert headers[E + "topic"] == topic_name
    assert headers[E + "partition"] == "0"
    assert headers[E + "offset"] == "1"
    assert headers[E + "connector.name"] == sink
    assert headers[E + "task.id"] == "0"
    assert headers[E + "stage"] == "VALUE_CONVERTER"
    assert headers[E + "class.name"].endswith("JsonConverter")
    assert headers[E + "exception.class.name"] == "connectors.api.errors.DataError"
    assert headers[E + "exception.message"]
    assert "Traceback" in headers[E + "exception.stacktrace"]


def test_without_context_headers_only_the_original_record(
    make_herder: MakeHerder, broker: BrokerProcess, topic_name: str
) -> None:
    dlq, sink = f"{topic_name}-dlq", f"{topic_name}-sink"
    produce(broker, topic_name, [(b"k", b"{{", [("h", b"1")]), (b"k", b"[1]", [])])
    herder = make_herder()
    no_headers = {"errors.deadletterqueue.context.headers.enable": "false"}
    config = json_sink(topic_name, dlq, **no_headers)
    herder.put_connector_config(sink, config, allow_replace=False)
    wait_for(lambda: sink_values(sink) == [[1]], "the good record")
    [dead] = read_all(broker, dlq, 1)
    assert (dead.key, dead.value, list(dead.headers)) == (b"k", b"{{", [("h", b"1")])


def test_tolerance_none_fails_the_task_with_the_reason(
    make_herder: MakeHerder, broker: BrokerProcess, topic_name: str
) -> None:
    sink = f"{topic_name}-sink"
    produce(broker, topic_name, [(b"k", b"not json", [])])
    herder = make_herder(**{"task.restart.enabled": "false"})
    config = json_sink(topic_name, f"{topic_name}-dlq", **{"errors.tolerance": "none"})
    herder.put_connector_config(sink, config, allow_replace=False)
    wait_for(lambda: task_state(herder, sink) is State.FAILED, "the task to fail")
    trace = herder.connector_status(sink).tasks[0].trace or ""
    assert "Tolerance exceeded" in trace and "VALUE_CONVERTER" in trace
    assert not topic_exists(herder, f"{topic_name}-dlq")


def test_records_put_refuses_go_to_the_dlq_and_the_rest_is_delivered(
    make_herder: MakeHerder, registry: PluginRegistry, broker: BrokerProcess, topic_name: str
) -> None:
    assert registry.register(_TestPlugins(), name="dlq-test-plugins")
    dlq, sink = f"{topic_name}-dlq", f"{topic_name}-sink"
    produce(broker, topic_name, [(b"k", v.encode(), []) for v in ("a", "bad-b", "c")])
    herder = make_herder()
    config = {
        "connector.class": "PickySink",
        "topics": topic_name,
        **dead_letters_to(dlq),
    }
    herder.put_connector_config(sink, config, allow_replace=False)
    wait_for(lambda: len(sink_values(sink)) >= 2, "the good records")
    [dead] = read_all(broker, dlq, 1)
    assert sorted(sink_values(sink)) == ["a", "c"]
    headers = context_headers(dead)
    assert dead.value == b"bad-b"  # written back through the sink's StringConverter
    assert headers[E + "stage"] == "TASK_PUT"
    assert headers[E + "offset"] == "1"
    assert headers[E + "class.name"].endswith("PickySinkTask")


def test_a_source_record_a_transform_refuses_goes_to_the_dlq(
    make_herder: MakeHerder, broker: BrokerProcess, topic_name: str
) -> None:
    dlq, src = f"{topic_name}-dlq", f"{topic_name}-src"
    herder = make_herder()
    # values 0, 4 and 8 are dicts, which RejectDicts refuses
    config = sequence_source(topic_name, dlq, count=10, bad_every=4)
    config.update({"transforms": "reject", "transforms.reject.type": "RejectDicts"})
    herder.put_connector_config(src, config, allow_replace=False)
    good = read_all(broker, topic_name, 7)
    dead = read_all(broker, dlq, 3)
    assert [r.value for r in good] == [f"v-{n}".encode() for n in (1, 2, 3, 5, 6, 7, 9)]
    assert [r.key for r in dead] == [b"k-0", b"k-4", b"k-8"]
    headers = context_headers(dead[1])
    assert headers[E + "stage"] == "TRANSFORMATION"
    assert headers[E + "topic"] == topic_name
    assert headers[E + "class.name"].endswith("RejectDicts")
    assert json.loads(headers[E + "source.partition"]) == {"sequence": src}
    assert json.loads(headers[E + "source.offset"]) == {"n": 5}
    assert "cannot handle" in headers[E + "exception.message"]
    wait_for(lambda: herder.connector_offsets(src), "the source's offsets")
    assert task_state(herder, src) is State.RUNNING


def test_retriable_failures_are_retried_then_dead_lettered(
    make_herder: MakeHerder, registry: PluginRegistry, broker: BrokerProcess, topic_name: str
) -> None:
    assert registry.register(_TestPlugins(), name="dlq-test-plugins")
    dlq, sink = f"{topic_name}-dlq", f"{topic_name}-sink"
    values_in = ("a", f"flaky-{topic_name}-once", f"flaky-{topic_name}-always", "b")
    produce(broker, topic_name, [(b"k", v.encode(), []) for v in values_in])
    herder = make_herder()
    config = {
        "connector.class": "MemorySink",
        "topics": topic_name,
        "transforms": "flaky,flakyOnce",
        "transforms.flaky.type": "FlakyTransform",
        "transforms.flaky.predicate": "always",
        "transforms.flakyOnce.type": "FlakyTransform",
        "transforms.flakyOnce.times": "2",
        "transforms.flakyOnce.predicate": "always",
        "transforms.flakyOnce.negate": "true",
        "predicates": "always",
        "predicates.always.type": "ValueStartsWith",
        "predicates.always.prefix": f"flaky-{topic_name}-always",
        "errors.retry.timeout": "600",
        "errors.retry.delay.max.ms": "50",
        **dead_letters_to(dlq),
    }
    herder.put_connector_config(sink, config, allow_replace=False)
    wait_for(lambda: len(sink_values(sink)) >= 3, "the good and the recovered records")
    [dead] = read_all(broker, dlq, 1)
    assert sink_values(sink) == ["a", f"flaky-{topic_name}-once", "b"]
    assert FlakyTransform.attempts[f"flaky-{topic_name}-once"] == 3  # failed twice, then passed
    assert FlakyTransform.attempts[f"flaky-{topic_name}-always"] > 2  # retried until timeout
    assert dead.value == f"flaky-{topic_name}-always".encode()
    headers = context_headers(dead)
    assert headers[E + "exception.class.name"] == "connectors.api.errors.RetriableError"


def test_a_source_record_the_converter_refuses_goes_to_the_dlq(
    make_herder: MakeHerder, broker: BrokerProcess, topic_name: str
) -> None:
    dlq, src = f"{topic_name}-dlq", f"{topic_name}-src"
    herder = make_herder()
    # values 0 and 2 are dicts: JsonConverter writes them, but no key is bytes: all three fail
    config = sequence_source(topic_name, dlq, count=3, bad_every=2)
    config.update(
        {
            "value.converter": "JsonConverter",
            "value.converter.schemas.enable": "false",
            "key.converter": "ByteArrayConverter",
        }
    )
    herder.put_connector_config(src, config, allow_replace=False)
    dead = read_all(broker, dlq, 3)
    assert [json.loads(r.value or b"null") for r in dead] == [{"bad": 0}, "v-1", {"bad": 2}]
    assert [r.key for r in dead] == [b'"k-0"', b'"k-1"', b'"k-2"']  # the key as JSON text
    headers = context_headers(dead[0])
    assert headers[E + "stage"] == "KEY_CONVERTER"
    assert headers[E + "class.name"].endswith("ByteArrayConverter")
    assert json.loads(headers[E + "source.offset"]) == {"n": 1}
    assert task_state(herder, src) is State.RUNNING


def test_a_dlq_that_cannot_be_written_fails_the_task(
    make_herder: MakeHerder, broker: BrokerProcess, topic_name: str
) -> None:
    sink = f"{topic_name}-sink"
    produce(broker, topic_name, [(b"k", b"not json", [])])
    herder = make_herder(**{"task.restart.enabled": "false"})
    config = json_sink(topic_name, "no spaces allowed in topic names!")
    herder.put_connector_config(sink, config, allow_replace=False)
    wait_for(lambda: task_state(herder, sink) is State.FAILED, "the task to fail")
    trace = herder.connector_status(sink).tasks[0].trace or ""
    assert "DeadLetterQueueError" in trace and "VALUE_CONVERTER" in trace
    assert herder.connector_offsets(sink) == []  # the poison record will be read again


def test_without_dlq_or_errors_log_a_skipped_record_is_still_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handler = ErrorHandler(TaskId("c", 0), ErrorSettings(tolerance_all=True))
    with caplog.at_level(logging.WARNING, "connect_worker.runtime.error_handling"):
        handler.tolerate(Stage.VALUE_CONVERTER, "the record", DataError("bad bytes"))
    assert "VALUE_CONVERTER" in caplog.text and "bad bytes" in caplog.text
    assert "the record" not in caplog.text  # its content only with errors.log.include.messages
