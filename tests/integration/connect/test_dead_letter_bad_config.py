"""Bad transform configs: per-field errors from validate, prefixed messages at task start.

An unknown transform type, a missing required option, a regex that does not
compile, an unknown Cast type: ``validate`` reports each under
``transforms.<alias>.<option>`` (once, without a spurious "is required"), the
transform chain raises a ConfigError carrying the same key, and a herder
refuses the config listing it (a pipeline file with it becomes a FAILED
connector with that message).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from connect_worker.herder.api import BadRequestError
from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.runtime.transform_chain import TransformChain, prefixed
from connect_worker.states import State, TargetState
from connect_worker.storage.configs import FileConfigStore, StoredConnector
from connect_worker.validation import validate_connector_config
from connect_worker.watch import apply_pipeline_file, read_pipeline_file
from connectors.api import ConfigError
from harness.wait import wait_for
from tests.integration.connect.helpers import task_state

BASE = {"name": "bad", "connector.class": "FileStreamSource", "file": "/tmp/in.txt",
        "topic": "demo", "transforms": "t"}

CASES = [
    pytest.param({"transforms.t.type": "Nope"}, "transforms.t.type",
                 "unknown transformation class 'Nope'", id="unknown-type"),
    pytest.param({"transforms.t.type": "ExtractField$Value"}, "transforms.t.field",
                 "is required and has no default", id="missing-option"),
    pytest.param({"transforms.t.type": "RegexRouter", "transforms.t.regex": "([a",
                  "transforms.t.replacement": "x"}, "transforms.t.regex",
                 "not a valid regular expression", id="bad-regex"),
    pytest.param({"transforms.t.type": "Cast$Value", "transforms.t.spec": "a:int99"},
                 "transforms.t.spec", "unknown type 'int99'", id="unknown-cast-type"),
    pytest.param({"transforms.t.type": "Filter", "transforms.t.predicate": "p",
                  "predicates": "p", "predicates.p.type": "TopicNameMatches",
                  "predicates.p.pattern": "(("}, "predicates.p.pattern",
                 "not a valid regular expression", id="bad-predicate-regex"),
]


@pytest.fixture(scope="module")
def bundled() -> PluginRegistry:
    return PluginRegistry.load(entry_points=False)


@pytest.mark.parametrize(("extra", "key", "fragment"), CASES)
def test_validate_reports_the_option_at_fault_once(
    bundled: PluginRegistry, extra: dict[str, str], key: str, fragment: str
) -> None:
    result = validate_connector_config(bundled, {**BASE, **extra})
    assert list(result.errors) == [key]
    [problem] = result.errors[key]
    assert fragment in problem
    body = result.to_json("FileStreamSource")
    by_name = {c["definition"]["name"]: c["value"]["errors"] for c in body["configs"]}
    assert by_name[key] == [problem]


@pytest.mark.parametrize(("extra", "key", "fragment"), CASES)
def test_the_chain_names_the_same_key(
    bundled: PluginRegistry, extra: dict[str, str], key: str, fragment: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        TransformChain.from_props({**BASE, **extra}, bundled)
    assert str(raised.value).startswith(f"{key}: ")
    assert fragment in str(raised.value)


def test_prefixed_messages() -> None:
    assert prefixed("transforms.t", "spec: bad; replace.null.with.default: no") == (
        "transforms.t.spec: bad; transforms.t.replace.null.with.default: no"
    )
    whole = prefixed("transforms.t", "config: nothing to insert")
    assert whole == "transforms.t: nothing to insert"
    assert prefixed("transforms.t", "something broke") == "transforms.t: something broke"


def test_a_herder_refuses_it_and_a_pipeline_file_with_it_is_failed(
    make_herder: Callable[..., StandaloneHerder], tmp_path: Path
) -> None:
    herder = make_herder()
    config = {**BASE, "transforms.t.type": "Cast$Value", "transforms.t.spec": "a:int99"}
    with pytest.raises(BadRequestError) as raised:
        herder.put_connector_config("bad", config, allow_replace=False)
    assert "transforms.t.spec: unknown type 'int99'" in str(raised.value)

    path = tmp_path / "bad.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in config.items()))
    assert not apply_pipeline_file(herder, read_pipeline_file(path))
    status = herder.connector_status("bad")
    assert status.state is State.FAILED
    assert status.trace is not None and "transforms.t.spec: unknown type 'int99'" in status.trace
    assert "Traceback" not in status.trace


def test_a_stored_config_that_no_longer_validates_fails_its_task_naming_the_key(
    make_herder: Callable[..., StandaloneHerder], tmp_path: Path
) -> None:
    config = {**BASE, "file": str(tmp_path / "in.txt"), "transforms.t.type": "Cast$Value",
              "transforms.t.spec": "a:int99"}
    FileConfigStore(tmp_path / "connectors.json").put(
        StoredConnector("bad", config, TargetState.RUNNING, "rest")
    )
    herder = make_herder(**{"task.restart.enabled": "false"})  # restores "bad" unvalidated
    wait_for(lambda: task_state(herder, "bad") is State.FAILED, "the task to fail")
    trace = herder.connector_status("bad").tasks[0].trace or ""
    assert "ConfigError: transforms.t.spec: unknown type 'int99'" in trace


def test_a_stored_config_with_a_bad_common_key_fails_the_connector_naming_it(
    make_herder: Callable[..., StandaloneHerder], tmp_path: Path
) -> None:
    config = {**BASE, "file": str(tmp_path / "in.txt"), "tasks.max": "abc",
              "transforms.t.type": "ExtractField$Value", "transforms.t.field": "f"}
    FileConfigStore(tmp_path / "connectors.json").put(
        StoredConnector("bad", config, TargetState.RUNNING, "rest")
    )
    herder = make_herder(**{"task.restart.enabled": "false"})  # restores "bad" unvalidated
    wait_for(lambda: herder.connector_status("bad").state is State.FAILED, "the connector to fail")
    status = herder.connector_status("bad")
    assert status.trace is not None and "ConfigError: tasks.max: " in status.trace
    assert status.tasks == ()
