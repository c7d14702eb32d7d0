"""Source and sink tasks through the herder: records, offsets, pause, failures, restarts."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from connect_worker.herder.api import BadRequestError, ConflictError
from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.states import State, TargetState
from connect_worker.storage.status import MemoryStatusStore, StateRecord
from harness.wait import wait_for
from tests.integration.connect import plugins
from tests.integration.connect.helpers import task_state
from tests.integration.connect.plugins import sink_config, sink_values, source_config

MakeHerder = Callable[..., StandaloneHerder]


class RecordingStatus(MemoryStatusStore):
    """A status store that also keeps every task state reported, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.history: list[tuple[str, int, State, str | None]] = []

    def put_task(self, name: str, task_id: int, record: StateRecord) -> None:
        self.history.append((name, task_id, record.state, record.trace))
        super().put_task(name, task_id, record)


def test_records_flow_and_offsets_are_stored(
    make_herder: MakeHerder, topic_name: str, tmp_path: Path
) -> None:
    herder = make_herder()
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder.put_connector_config(sink, sink_config(topic_name), allow_replace=False)
    herder.put_connector_config(src, source_config(topic_name, 250), allow_replace=False)
    wait_for(lambda: len(sink_values(sink)) >= 250, "250 records in the sink")
    assert sink_values(sink) == [f"v-{n}" for n in range(250)]
    wait_for(
        lambda: (
            herder.connector_offsets(src)
            == [{"partition": {"sequence": src}, "offset": {"n": 250}}]
        ),
        "the source offset",
    )
    assert plugins.SOURCE_COMMITS.get(src, 0) >= 1  # task.commit() after offsets were stored
    log = plugins.SINKS[sink]
    assert log.opened
    # flush() before each commit, on the sink's own timer (it may lag the source's)
    wait_for(lambda: bool(log.flushed), "a sink flush")
    herder.stop()
    assert [plugins.TopicPartition(topic_name, 0)] == log.closed  # close() at stop
    stored = json.loads((tmp_path / "connect.offsets").read_text())
    assert stored[f'["{src}",{{"sequence":"{src}"}}]'] == {"n": 250}


def test_restart_resumes_without_loss_or_duplicates(
    make_herder: MakeHerder, topic_name: str
) -> None:
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder = make_herder()
    herder.put_connector_config(sink, sink_config(topic_name), allow_replace=False)
    herder.put_connector_config(src, source_config(topic_name, 100), allow_replace=False)
    wait_for(lambda: len(sink_values(sink)) >= 100, "the first 100 records")
    herder.stop()
    again = make_herder()
    again.put_connector_config(src, source_config(topic_name, 300), allow_replace=True)
    wait_for(lambda: len(sink_values(sink)) >= 300, "300 records after the restart")
    assert sink_values(sink) == [f"v-{n}" for n in range(300)]


def test_pause_stops_the_flow_and_resume_restarts_it(
    make_herder: MakeHerder, topic_name: str
) -> None:
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder = make_herder()
    herder.put_connector_config(sink, sink_config(topic_name), allow_replace=False)
    herder.put_connector_config(
        src, source_config(topic_name, 1_000_000, batch="5"), allow_replace=False
    )
    wait_for(lambda: len(sink_values(sink)) > 0, "the first records")
    herder.set_target_state(src, TargetState.PAUSED)
    status = herder.connector_status(src)
    assert status.state is State.PAUSED
    assert [t.state for t in status.tasks] == [State.PAUSED]
    wait_for(
        lambda: herder.connector_offsets(src) and len(sink_values(sink)) == _offset(herder, src),
        "the sink to catch up with the paused source",
    )
    paused_at = len(sink_values(sink))
    herder.set_target_state(src, TargetState.RUNNING)
    assert task_state(herder, src) is State.RUNNING
    wait_for(lambda: len(sink_values(sink)) > paused_at + 50, "records after resume")
    assert sink_values(sink)[: paused_at + 50] == [f"v-{n}" for n in range(paused_at + 50)]


def _offset(herder: StandaloneHerder, name: str) -> int:
    offsets = herder.connector_offsets(name)  # none until the first offset flush
    return int(offsets[0]["offset"]["n"]) if offsets else -1


def test_a_failing_task_is_failed_with_its_trace_then_restarts(
    make_herder: MakeHerder, topic_name: str
) -> None:
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    status = RecordingStatus()
    herder = make_herder(status)
    herder.put_connector_config(sink, sink_config(topic_name), allow_replace=False)
    herder.put_connector_config(
        src, source_config(topic_name, 50, **{"fail.poll.times": "2"}), allow_replace=False
    )
    wait_for(lambda: len(sink_values(sink)) >= 50, "all records despite two failures")
    states = [(s, t) for n, _, s, t in status.history if n == src]
    assert [s for s, _ in states] == [
        State.UNASSIGNED,
        State.RUNNING,
        State.FAILED,
        State.RESTARTING,
        State.RUNNING,
        State.FAILED,
        State.RESTARTING,
        State.RUNNING,
    ]
    failed_trace = states[2][1]
    assert failed_trace is not None and "planned failure 1" in failed_trace
    assert "Traceback" in failed_trace
    assert states[3][1] == failed_trace  # RESTARTING still shows why
    assert states[4][1] is None  # RUNNING again: trace cleared
    assert herder.connector_status(src).tasks[0].trace is None


def test_without_auto_restart_a_failed_task_stays_failed(
    make_herder: MakeHerder, topic_name: str
) -> None:
    src = f"{topic_name}-src"
    herder = make_herder(**{"task.restart.enabled": "false"})
    herder.put_connector_config(
        src, source_config(topic_name, 10, **{"fail.poll.times": "1"}), allow_replace=False
    )
    wait_for(lambda: task_state(herder, src) is State.FAILED, "the task to fail")
    task = herder.connector_status(src).tasks[0]
    assert task.trace is not None and "ConnectError: planned failure 1" in task.trace
    assert herder.connector_status(src).state is State.RUNNING  # the connector itself is fine
    herder.restart_task(src, 0)  # the manual restart still works
    wait_for(lambda: task_state(herder, src) is State.RUNNING, "the restarted task")


def test_a_sink_retriable_error_redelivers_the_same_batch(
    make_herder: MakeHerder, topic_name: str
) -> None:
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder = make_herder()
    herder.put_connector_config(src, source_config(topic_name, 40), allow_replace=False)
    wait_for(lambda: herder.connector_offsets(src), "the source to write")
    herder.put_connector_config(
        sink, sink_config(topic_name, **{"fail.put.retriable": "2"}), allow_replace=False
    )
    wait_for(lambda: len(sink_values(sink)) >= 40, "all records in the sink")
    log = plugins.SINKS[sink]
    assert log.puts[0] == log.puts[1] == log.puts[2]  # the refused batch, twice more
    assert sink_values(sink) == [f"v-{n}" for n in range(40)]
    assert task_state(herder, sink) is State.RUNNING


def test_bad_records_fail_the_task_or_are_skipped(make_herder: MakeHerder, topic_name: str) -> None:
    herder = make_herder(**{"task.restart.enabled": "false"})
    strict, lenient, sink = f"{topic_name}-strict", f"{topic_name}-lenient", f"{topic_name}-sink"
    bad = {"bad.every": "10", "transforms": "reject", "transforms.reject.type": "RejectDicts"}
    herder.put_connector_config(strict, source_config(topic_name, 30, **bad), allow_replace=False)
    wait_for(lambda: task_state(herder, strict) is State.FAILED, "the strict task to fail")
    trace = herder.connector_status(strict).tasks[0].trace or ""
    assert "Tolerance exceeded" in trace and "TRANSFORMATION" in trace
    herder.delete_connector(strict)

    other_topic = f"{topic_name}-2"
    herder.put_connector_config(sink, sink_config(other_topic), allow_replace=False)
    herder.put_connector_config(
        lenient,
        source_config(other_topic, 30, **bad, **{"errors.tolerance": "all"}),
        allow_replace=False,
    )
    expected = [f"v-{n}" for n in range(30) if n % 10]
    wait_for(lambda: len(sink_values(sink)) >= len(expected), "the good records")
    assert sink_values(sink) == expected
    wait_for(lambda: _offset(herder, lenient) == 30, "offsets past the skipped records")


def test_stopped_connectors_offsets_can_be_altered_and_reset(
    make_herder: MakeHerder, topic_name: str
) -> None:
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder = make_herder()
    herder.put_connector_config(sink, sink_config(topic_name), allow_replace=False)
    herder.put_connector_config(src, source_config(topic_name, 20), allow_replace=False)
    wait_for(lambda: len(sink_values(sink)) >= 20, "20 records")
    wait_for(lambda: _offset(herder, src) == 20, "the source offset")
    with pytest.raises(ConflictError):
        herder.alter_connector_offsets(src, [])
    herder.set_target_state(src, TargetState.STOPPED)
    status = herder.connector_status(src)
    assert (status.state, status.tasks) == (State.STOPPED, ())
    assert herder.connector_info(src).tasks == ()
    herder.alter_connector_offsets(src, [{"partition": {"sequence": src}, "offset": {"n": 15}}])
    assert _offset(herder, src) == 15
    with pytest.raises(BadRequestError):
        herder.alter_connector_offsets(src, [{"partition": "nope", "offset": {}}])
    herder.set_target_state(src, TargetState.RUNNING)  # replays 15..19
    wait_for(lambda: len(sink_values(sink)) >= 25, "the replayed records")
    assert sink_values(sink)[20:] == [f"v-{n}" for n in range(15, 20)]
    herder.set_target_state(src, TargetState.STOPPED)
    herder.reset_connector_offsets(src)
    assert herder.connector_offsets(src) == []

    wait_for(
        lambda: (
            herder.connector_offsets(sink)
            and herder.connector_offsets(sink)[0]["offset"]["kafka_offset"] == 25
        ),
        "the sink's committed offset",
    )
    herder.set_target_state(sink, TargetState.STOPPED)
    partition = {"kafka_topic": topic_name, "kafka_partition": 0}
    herder.alter_connector_offsets(sink, [{"partition": partition, "offset": {"kafka_offset": 3}}])
    assert herder.connector_offsets(sink) == [
        {"partition": partition, "offset": {"kafka_offset": 3}}
    ]
    herder.reset_connector_offsets(sink)
    assert herder.connector_offsets(sink) == [
        {"partition": partition, "offset": {"kafka_offset": 0}}
    ]


def test_invalid_configs_are_refused_with_every_problem(make_herder: MakeHerder) -> None:
    herder = make_herder()
    with pytest.raises(BadRequestError) as caught:
        herder.put_connector_config(
            "bad",
            {"connector.class": "SequenceSource", "tasks.max": "abc", "errors.tolerance": "x"},
            allow_replace=False,
        )
    message = str(caught.value)
    assert "tasks.max" in message and "errors.tolerance" in message
    assert herder.connectors() == []
    with pytest.raises(BadRequestError, match="doesn't match"):
        herder.put_connector_config("a", {"name": "b", "connector.class": "X"}, allow_replace=True)


def test_failed_placeholder_then_a_fixed_config(make_herder: MakeHerder, topic_name: str) -> None:
    herder = make_herder()
    name = f"{topic_name}-src"
    herder.put_failed_connector(name, {"connector.class": "Nope"}, ["connector.class: unknown"])
    status = herder.connector_status(name)
    assert (status.state, status.trace, status.tasks) == (
        State.FAILED,
        "connector.class: unknown",
        (),
    )
    assert name in herder.connectors()
    with pytest.raises(ConflictError):
        herder.set_target_state(name, TargetState.PAUSED)
    _, created = herder.put_connector_config(
        name, source_config(topic_name, 5), allow_replace=True, source="file"
    )
    assert not created
    wait_for(lambda: task_state(herder, name) is State.RUNNING, "the fixed connector")
    assert herder.connector_status(name).trace is None


def test_a_config_change_restarts_tasks_with_the_new_config(
    make_herder: MakeHerder, topic_name: str
) -> None:
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder = make_herder()
    herder.put_connector_config(sink, sink_config(topic_name), allow_replace=False)
    herder.put_connector_config(src, source_config(topic_name, 10), allow_replace=False)
    wait_for(lambda: len(sink_values(sink)) >= 10, "10 records")
    info = herder.patch_connector_config(src, {"count": "30", "batch": None})
    assert info.config["count"] == "30" and "batch" not in info.config
    assert herder.task_configs(src)[0]["count"] == "30"
    wait_for(lambda: len(sink_values(sink)) >= 30, "30 records")
    assert sink_values(sink) == [f"v-{n}" for n in range(30)]


def test_restart_and_delete(make_herder: MakeHerder, topic_name: str) -> None:
    src = f"{topic_name}-src"
    herder = make_herder()
    herder.put_connector_config(src, source_config(topic_name, 10), allow_replace=False)
    wait_for(lambda: task_state(herder, src) is State.RUNNING, "the task")
    status = herder.restart_connector(src, include_tasks=True)
    assert status.state is State.RESTARTING and status.tasks[0].state is State.RESTARTING
    wait_for(lambda: task_state(herder, src) is State.RUNNING, "the restarted task")
    assert herder.connector_status(src).state is State.RUNNING
    herder.set_target_state(src, TargetState.STOPPED)
    assert herder.restart_connector(src, include_tasks=True).state is State.STOPPED  # no-op
    herder.delete_connector(src)
    assert herder.connectors() == []


def test_keys_nothing_reads_are_logged_when_the_connector_starts(
    make_herder: MakeHerder, topic_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    herder = make_herder()
    sink = f"{topic_name}-sink"
    with caplog.at_level(logging.WARNING, logger="connect_worker.runtime.worker"):
        herder.put_connector_config(
            sink, sink_config(topic_name, **{"consumer.override.max.poll.records": "10",
                                             "frobnicate.level": "3"}),
            allow_replace=False,
        )
        wait_for(lambda: task_state(herder, sink) is State.RUNNING, "the sink running")
    warnings = [r.getMessage() for r in caplog.records if "nothing reads" in r.getMessage()]
    assert warnings == [
        f"connector {sink}: keys nothing reads, ignored (as Kafka Connect ignores unknown "
        "keys): frobnicate.level"
    ]


def test_a_task_failing_the_same_way_logs_its_trace_once_then_short_lines(
    make_herder: MakeHerder, topic_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    src = f"{topic_name}-src"
    status = RecordingStatus()
    herder = make_herder(status)
    bad = {"bad.every": "10", "transforms": "reject", "transforms.reject.type": "RejectDicts"}
    caplog.set_level(logging.INFO, logger="connect_worker.runtime.task_thread")
    herder.put_connector_config(src, source_config(topic_name, 30, **bad), allow_replace=False)

    def failures() -> int:
        return sum(1 for n, _, s, _ in status.history if n == src and s is State.FAILED)

    wait_for(lambda: failures() >= 4, "four failed attempts")
    herder.delete_connector(src)
    records = [r for r in caplog.records if r.name.endswith("task_thread")]
    full_traces = [r for r in records if r.exc_info or "Traceback" in r.getMessage()]
    assert len(full_traces) == 1  # the full trace once
    failed_lines = [r.getMessage() for r in records if f"task {src}-0 failed" in r.getMessage()]
    assert len(failed_lines) >= 4
    assert "Traceback" in failed_lines[0]
    for n, line in enumerate(failed_lines[1:], start=2):
        assert f"failed again (attempt {n})" in line and "same error as before" in line
        assert "restarting in" in line and f"at record {topic_name}" in line
        assert "\n" not in line
    traces = [t for n, _, s, t in status.history if n == src and s is State.FAILED]
    assert all(t is not None and "Tolerance exceeded" in t for t in traces)  # status keeps it


def test_a_sink_failing_on_one_record_names_it_and_the_way_out_once(
    make_herder: MakeHerder, topic_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 14: the record's topic, partition and offset and the cause, in one line, once."""
    src, sink = f"{topic_name}-src", f"{topic_name}-sink"
    herder = make_herder()
    caplog.set_level(logging.INFO, logger="connect_worker.runtime.task_thread")
    text = {"value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    herder.put_connector_config(src, source_config(topic_name, 3, **text), allow_replace=False)
    json_values = {
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    }
    herder.put_connector_config(sink, sink_config(topic_name, **json_values), allow_replace=False)
    failed_lines = lambda: [  # noqa: E731
        r.getMessage() for r in caplog.records if f"task {sink}-0 failed" in r.getMessage()
    ]
    wait_for(lambda: len(failed_lines()) >= 3, "three failed attempts of the sink")
    herder.delete_connector(sink)
    first, *repeats = failed_lines()
    headline = first.splitlines()[0]
    where = f"at record {topic_name}-0@0 (topic {topic_name}, partition 0, offset 0)"
    assert where in headline, headline
    assert "VALUE_CONVERTER failed: DataError" in headline
    assert "every restart" in headline and "errors.tolerance=all" in headline
    for line in repeats:
        assert f"at record {topic_name}-0@0" in line and "\n" not in line
        assert "errors.tolerance=all" not in line  # the way out is said once
