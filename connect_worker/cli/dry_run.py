"""``sluice test``: a pipeline's converters and transforms on sample records, offline.

No broker, no connector: the pipeline file's ``transforms``/``predicates`` and
converters (its own ``key.converter``/``value.converter``/``header.converter``,
else the worker's, default JsonConverter) run on records read from JSON lines,
and the results are printed as JSON lines. The connector class only says
which way the records flow.

Each input line is one record; every field but ``value`` is optional::

    {"topic": "orders", "partition": 0, "key": "k1", "value": {"id": 1},
     "headers": {"trace": "abc"}, "timestamp": 1700000000000}

(``headers`` may also be a list of ``[name, value]`` pairs, to repeat a name;
``topic`` defaults to the pipeline's ``topic``, or the first of its ``topics``.)

Source pipelines: a line is a record as the connector's task returns it from
``poll()``, so ``key``/``value``/header values are Connect data (schemaless).
Steps: transforms -> key, value and header converters (``from_connect``, what
the producer would send; a failure there is the record's error). Sink
pipelines: a line is a record as read from the log. Its ``key``/``value``/
header values become bytes first: a JSON string is taken as its UTF-8 text
(``"value": "not json"`` is the bytes ``not json``; write ``"\\"text\\""`` for a
JSON string), anything else as its JSON text. Steps: converters
(``to_connect``) -> transforms, as the sink task would receive it.

Output: one line per record that comes out, with the same fields (``key``
and ``value`` as JSON values: the transformed Connect data; ``offset`` for
sinks). A record a transform filtered is absent. A record that fails is
printed as it would go to the dead-letter queue (the input record) with
``"error": {"stage", "class", "exception", "message", "tolerated", "worker"}``,
as the pipeline's ``errors.*`` keys decide: ``tolerated`` is true only for a
bad record (a data or retriable error) under ``errors.tolerance=all``, which
the worker skips (and writes to ``errors.deadletterqueue.topic.name`` when
set); under ``errors.tolerance=none`` (the default), or for an exception no
tolerance covers (a bug, not a bad record), it is false: the worker's task
fails at that record. ``worker`` says in words what the worker would do. Every
input record is still run, to show all the problems at once, though a task
would stop at the first one.

Exit codes: 0 when every record was processed or tolerated, 3 when a record
would fail the task (each named on standard error), 2 for a bad pipeline or
input. With ``--expect EXPECTED.jsonl`` the output is compared with expected
records instead (each listing only the fields it checks, ``"error":
{"tolerated": false}`` to assert that a record fails the task): a pipeline's
unit test is a properties file, an input file and an expected file; the exit
code is 1 on a difference, each named on standard error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from connect_worker.connector_config import CommonConnectorConfig, comma_list
from connect_worker.converters.json_values import infer_json_value, to_json_value
from connect_worker.plugins import PluginRegistry
from connect_worker.runtime.conversion import ConverterDefaults, ConverterSpec, RecordConverters
from connect_worker.runtime.dead_letter import HEADER_PREFIX, failure_description
from connect_worker.runtime.error_handling import ErrorContext, ErrorSettings, Stage, StageError
from connect_worker.runtime.status import TaskId
from connect_worker.runtime.transform_chain import TransformChain
from connect_worker.worker_config import WorkerConfig
from connectors.api import ConfigError, DataError, RetriableError, SinkConnector, SourceRecord
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema
from log_engine.client import ConsumerRecord

#: At most this many input records per run (a sample, not a data set).
MAX_RECORDS = 100_000


class InputError(ValueError):
    """An input line that is not a record (names the line)."""


@dataclass(frozen=True, slots=True)
class Pipeline:
    """A pipeline's direction, converters and transform chain, built from its properties."""

    name: str
    is_sink: bool
    default_topic: str
    converters: RecordConverters
    chain: TransformChain
    errors: ErrorSettings = field(default_factory=ErrorSettings)
    dead_letter_topic: str = ""
    #: One line per input record that would fail the worker's task, as they come.
    task_failures: list[str] = field(default_factory=list)

    @classmethod
    def from_props(
        cls,
        props: Mapping[str, str],
        registry: PluginRegistry,
        worker: WorkerConfig | None = None,
    ) -> Pipeline:
        """ConfigError names the key at fault (``transforms.<alias>.<option>``...)."""
        worker = worker or WorkerConfig.from_properties({})
        try:
            connector = registry.connector_class(props.get("connector.class", "").strip())
        except ValueError as exc:
            raise ConfigError(f"connector.class: {exc}") from None
        is_sink = issubclass(connector, SinkConnector)
        topic = props.get("topic", "").strip() or next(iter(comma_list(props.get("topics"))), "")
        defaults = ConverterDefaults(
            key=ConverterSpec(worker.key_converter, worker.converter_props("key.converter")),
            value=ConverterSpec(worker.value_converter, worker.converter_props("value.converter")),
            header=ConverterSpec(
                worker.header_converter, worker.converter_props("header.converter")
            ),
        )
        errors = ErrorSettings.from_config(
            CommonConnectorConfig.from_props({"name": "pipeline", **props})
        )
        converters = RecordConverters.build(registry, props, defaults)
        chain = TransformChain.from_props(props, registry)
        return cls(
            props.get("name", "pipeline"),
            is_sink,
            topic or "test",
            converters,
            chain,
            errors,
            props.get("errors.deadletterqueue.topic.name", "").strip(),
        )

    def run(self, lines: Iterable[str]) -> Iterator[dict[str, Any]]:
        """The output records (JSON-ready dicts) of the input JSON lines, in order."""
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            if number > MAX_RECORDS:
                raise InputError(f"more than {MAX_RECORDS} input records")
            fields = _parse_line(line, number)
            out = self.run_one(fields, offset=number - 1)
            if out is not None:
                yield out

    def run_one(self, fields: Mapping[str, Any], offset: int = 0) -> dict[str, Any] | None:
        """One input record's output, its error, or None when a transform dropped it."""
        record: ConsumerRecord | SourceRecord
        try:
            record = self._consumer_record(fields, offset) if self.is_sink else (
                self._source_record(fields)
            )
        except (TypeError, ValueError) as exc:
            raise InputError(f"record {offset + 1}: {exc}") from None
        try:
            out = self._sink(record) if isinstance(record, ConsumerRecord) else (
                self._source(record)
            )
        except Exception as exc:
            failed = self._failed(fields, record, exc)
            if not failed["error"]["tolerated"]:
                self.task_failures.append(_task_failure(offset + 1, record, failed["error"]))
            return failed
        return None if out is None else _render(out)

    def close(self) -> None:
        self.chain.close()

    # -- the two directions ------------------------------------------------------------

    def _sink(self, record: ConsumerRecord) -> ConnectRecord | None:
        sink_record = self.converters.to_sink_record(record)
        try:
            return self.chain.apply(sink_record)
        except Exception as exc:
            raise StageError(Stage.TRANSFORMATION, exc) from exc

    def _source(self, record: SourceRecord) -> ConnectRecord | None:
        try:
            out = self.chain.apply(record)
        except Exception as exc:
            raise StageError(Stage.TRANSFORMATION, exc) from exc
        if out is not None:
            self.converters.to_log(out)  # what the producer would send: it must convert
        return out

    def _consumer_record(self, fields: Mapping[str, Any], offset: int) -> ConsumerRecord:
        headers = tuple((name, _to_bytes(data)) for name, data in _headers(fields))
        return ConsumerRecord(
            topic=str(fields.get("topic") or self.default_topic),
            partition=int(fields.get("partition") or 0),
            offset=int(fields.get("offset", offset)),
            timestamp=int(fields["timestamp"]) if fields.get("timestamp") is not None else -1,
            key=_to_bytes(fields.get("key")),
            value=_to_bytes(fields.get("value")),
            headers=headers,
        )

    def _source_record(self, fields: Mapping[str, Any]) -> SourceRecord:
        partition = fields.get("partition")
        timestamp = fields.get("timestamp")
        return SourceRecord(
            topic=str(fields.get("topic") or self.default_topic),
            partition=int(partition) if partition is not None else None,
            key=fields.get("key"),
            value=fields.get("value"),
            headers=tuple(_headers(fields)),
            timestamp=int(timestamp) if timestamp is not None else None,
            source_partition=fields.get("source_partition"),
            source_offset=fields.get("source_offset"),
        )

    def _failed(
        self, fields: Mapping[str, Any], record: ConsumerRecord | SourceRecord, exc: Exception
    ) -> dict[str, Any]:
        stage, cause = (exc.stage, exc.cause) if isinstance(exc, StageError) else (
            Stage.TRANSFORMATION, exc
        )
        described = failure_description(ErrorContext(TaskId(self.name, 0), stage, record, cause))
        shown = dict(fields)
        shown.setdefault("topic", record.topic)
        tolerated, worker = self._fate(cause)
        shown["error"] = {
            "stage": str(stage),
            "class": described[HEADER_PREFIX + "class.name"],
            "exception": described[HEADER_PREFIX + "exception.class.name"],
            "message": described[HEADER_PREFIX + "exception.message"],
            "tolerated": tolerated,
            "worker": worker,
        }
        return shown

    def _fate(self, cause: BaseException) -> tuple[bool, str]:
        """Whether the worker would tolerate a record failing with ``cause``, and what it does."""
        if not isinstance(cause, DataError | RetriableError):
            return False, (
                "the task fails at this record whatever errors.tolerance says: the "
                f"exception is not a bad record's ({type(cause).__name__}: a bug or an outage)"
            )
        retried = ""
        if isinstance(cause, RetriableError) and self.errors.retry_timeout_ms != 0:
            retried = f"retried for errors.retry.timeout={self.errors.retry_timeout_ms} ms, then "
        if not self.errors.tolerance_all:
            return False, (
                f"{retried}the task fails at this record (errors.tolerance=none) and, "
                "restarted, fails on it again: nothing after it is processed until the "
                "pipeline can process it or sets errors.tolerance=all"
            )
        where = (
            f"written to the dead-letter topic {self.dead_letter_topic}"
            if self.dead_letter_topic
            else "logged (no errors.deadletterqueue.topic.name)"
        )
        return True, f"{retried}skipped and {where} (errors.tolerance=all)"


def run_dry_run(
    pipeline_file: Path,
    input_file: Path | None,
    out: IO[str],
    worker_config: Path | None = None,
    expect_file: Path | None = None,
) -> int:
    """``sluice test``: the exit code of the module doc (0, 1, 2 or 3)."""
    import sys

    from connect_worker.properties import load_properties

    props = load_properties(pipeline_file)
    props.setdefault("name", pipeline_file.stem)
    worker = WorkerConfig.from_properties(load_properties(worker_config) if worker_config else {})
    registry = PluginRegistry.load(plugin_path=worker.plugin_path)
    try:
        pipeline = Pipeline.from_props(props, registry, worker)
    except ConfigError as exc:
        print(f"sluice test: {pipeline_file}: {exc}", file=sys.stderr)
        return 2
    produced = []
    try:
        try:
            with input_file.open(encoding="utf-8") if input_file else _stdin() as lines:
                for record in pipeline.run(lines):
                    produced.append(record)
                    out.write(json.dumps(record, separators=(", ", ": ")) + "\n")
        except InputError as exc:
            raise InputError(f"{input_file or '<stdin>'}: {exc}") from None
        expected = _expected(expect_file) if expect_file else None
    except InputError as exc:
        print(f"sluice test: {exc}", file=sys.stderr)
        return 2
    finally:
        pipeline.close()
    for problem in pipeline.task_failures:
        print(f"sluice test: {problem}", file=sys.stderr)
    if expected is None:
        return 3 if pipeline.task_failures else 0
    problems = mismatches(expected, produced)
    for problem in problems:
        print(f"sluice test: {expect_file}: {problem}", file=sys.stderr)
    return 1 if problems else 0


def _task_failure(
    number: int, record: ConsumerRecord | SourceRecord, error: Mapping[str, Any]
) -> str:
    """The stderr line for input record ``number`` that would fail the task."""
    where = record.topic
    if record.partition is not None:
        where += f"-{record.partition}"
    if isinstance(record, ConsumerRecord):
        where += f"@{record.offset}"
    return (
        f"record {number} ({where}) would fail the task: {error['stage']}: "
        f"{error['exception']}: {error['message']}; {error['worker']}"
    )


def mismatches(expected: list[dict[str, Any]], produced: list[dict[str, Any]]) -> list[str]:
    """How ``produced`` differs from ``expected`` (empty: it matches).

    An expected record lists only the fields it cares about (and only the
    ``error`` fields it cares about); the fields it lists must be equal.
    """
    problems = []
    if len(expected) != len(produced):
        problems.append(f"expected {len(expected)} record(s), got {len(produced)}")
    for index, (want, got) in enumerate(zip(expected, produced, strict=False), start=1):
        for field_name, value in want.items():
            actual = got.get(field_name)
            if field_name == "error" and isinstance(value, dict) and isinstance(actual, dict):
                actual = {k: actual.get(k) for k in value}
            if actual != value:
                problems.append(
                    f"record {index}: {field_name}: expected {json.dumps(value)}, "
                    f"got {json.dumps(got.get(field_name))}"
                )
    return problems


def _expected(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{path}: line {number}: not JSON: {exc}") from None
            if not isinstance(record, dict):
                raise InputError(f"{path}: line {number}: a record is a JSON object")
            records.append(record)
    return records


def _stdin() -> IO[str]:
    import os
    import sys

    return os.fdopen(os.dup(sys.stdin.fileno()), encoding="utf-8")


def _parse_line(line: str, number: int) -> dict[str, Any]:
    try:
        fields = json.loads(line)
    except ValueError as exc:
        raise InputError(f"line {number}: not JSON: {exc}") from None
    if not isinstance(fields, dict):
        raise InputError(f"line {number}: a record is a JSON object, not {type(fields).__name__}")
    unknown = set(fields) - {
        "topic", "partition", "offset", "key", "value", "headers", "timestamp",
        "source_partition", "source_offset",
    }
    if unknown:
        raise InputError(f"line {number}: unknown field(s) {', '.join(sorted(unknown))}")
    return fields


def _headers(fields: Mapping[str, Any]) -> list[tuple[str, Any]]:
    headers = fields.get("headers") or {}
    if isinstance(headers, dict):
        return [(str(name), data) for name, data in headers.items()]
    if isinstance(headers, list) and all(
        isinstance(pair, list) and len(pair) == 2 for pair in headers
    ):
        return [(str(name), data) for name, data in headers]
    raise ValueError("headers: an object, or a list of [name, value] pairs")


def _to_bytes(data: Any) -> bytes | None:
    """A sink input value as the log's bytes: strings as their text, else JSON text."""
    if data is None:
        return None
    if isinstance(data, str):
        return data.encode("utf-8")
    return json.dumps(data).encode("utf-8")


def _render(record: ConnectRecord) -> dict[str, Any]:
    rendered: dict[str, Any] = {
        "topic": record.topic,
        "partition": record.partition,
        "key": _json_data(record.key_schema, record.key),
        "value": _json_data(record.value_schema, record.value),
        "headers": _render_headers(record.headers),
        "timestamp": record.timestamp,
    }
    offset = getattr(record, "kafka_offset", None)
    if isinstance(offset, int) and offset >= 0:
        rendered["offset"] = offset
    return rendered


def _render_headers(headers: Iterable[tuple[str, Any]]) -> dict[str, Any] | list[list[Any]]:
    """An object, or ``[name, value]`` pairs when a name repeats (both are valid input)."""
    pairs = [[name, _json_data(None, data)] for name, data in headers]
    names = [name for name, _ in pairs]
    return dict(pairs) if len(set(names)) == len(names) else pairs


def _json_data(schema: Schema | None, data: Any) -> Any:
    try:
        return infer_json_value(data) if schema is None else to_json_value(schema, data)
    except DataError:
        return repr(data)
