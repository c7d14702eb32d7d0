"""The example third-party plugin installs with pip and is found through its entry point."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_worker.plugins import PluginRegistry, UnknownPluginError
from connect_worker.validation import validate_connector_config
from tests.support.plugin_harness import DictOffsetReader, SourceContext

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "sluice-example-plugin"


def _can_build_without_isolation() -> bool:
    """setuptools builds wheels alone from 70.1 on; before that it needs ``wheel``."""
    import setuptools

    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """pip-install the example into a folder of its own and put it on sys.path."""
    target = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet",
               "--disable-pip-version-check", "--target", str(target), str(EXAMPLE)]
    if _can_build_without_isolation():
        command.insert(5, "--no-build-isolation")
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"pip install failed:\n{done.stdout}\n{done.stderr}"
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    yield target
    sys.path.remove(str(target))
    for name in [n for n in sys.modules if n.startswith("sluice_example_plugin")]:
        del sys.modules[name]


@pytest.mark.slow
def test_entry_point_registers_the_counter_source(installed: Path) -> None:
    registry = PluginRegistry.load()
    cls = registry.connector_class("CounterSource")
    assert cls.__module__ == "sluice_example_plugin.counter"
    assert registry.connector_class("sluice_example_plugin.counter.CounterSourceConnector") is cls
    assert any(d.cls is cls for d in registry.plugins("source"))
    with pytest.raises(UnknownPluginError):
        PluginRegistry.load(entry_points=False).connector_class("CounterSource")
    props = {"name": "count", "connector.class": "CounterSource", "topic": "numbers",
             "interval.ms": "0"}
    assert validate_connector_config(registry, props).ok
    bad = validate_connector_config(registry, {**props, "interval.ms": "-5"})
    assert "interval.ms" in bad.errors


@pytest.mark.slow
def test_the_installed_counter_runs_and_resumes(installed: Path) -> None:
    registry = PluginRegistry.load()
    connector = registry.connector_class("CounterSource")()
    props = {"name": "count", "connector.class": "CounterSource", "topic": "numbers",
             "interval.ms": "0", "start": "10"}
    connector.start(props)
    [task_props] = connector.task_configs(3)
    reader = DictOffsetReader()
    values = []
    for _ in range(2):  # a restart continues from the stored offset
        task = connector.task_class()()
        task.initialize(SourceContext(reader))
        task.start(task_props)
        records = [r for _ in range(3) for r in task.poll()]
        reader.commit(records)
        values.extend(r.value for r in records)
        task.stop()
    assert values == [10, 11, 12, 13, 14, 15]


def test_plugin_path_with_the_example_sources() -> None:
    """No install at all: the example's src/ folder on plugin.path."""
    try:
        registry = PluginRegistry.load([EXAMPLE / "src"], entry_points=False)
        assert not registry.errors, registry.errors
        cls = registry.connector_class("CounterSource")
        assert cls.__module__ == "sluice_example_plugin.counter"
    finally:
        sys.path.remove(str((EXAMPLE / "src").resolve()))
        for name in [n for n in sys.modules if n.startswith("sluice_example_plugin")]:
            del sys.modules[name]
