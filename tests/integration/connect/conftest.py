"""Fixtures for the connect runtime against a real broker process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.storage.status import StatusStore
from connect_worker.worker_config import WorkerConfig
from tests.integration.connect import plugins
from tests.support.broker_process import BrokerProcess


@pytest.fixture
def registry() -> PluginRegistry:
    """The bundled plugins plus this folder's test connectors and transforms."""
    registry = PluginRegistry.load(entry_points=False)
    assert registry.register(plugins, name="runtime-test-plugins")
    return registry


@pytest.fixture
def make_herder(
    broker: BrokerProcess, registry: PluginRegistry, tmp_path: Path
) -> Iterator[Callable[..., StandaloneHerder]]:
    """Start a StandaloneHerder on the session broker (files under tmp_path); stopped at the end."""
    herders: list[StandaloneHerder] = []

    def make(status: StatusStore | None = None, **overrides: str) -> StandaloneHerder:
        props = {
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "connector.configs.file": str(tmp_path / "connectors.json"),
            "offset.flush.interval.ms": "200",
            "task.restart.backoff.initial.ms": "50",
            "task.restart.backoff.max.ms": "400",
            "key.converter": "StringConverter",
            "value.converter": "StringConverter",
            **overrides,
        }
        herder = StandaloneHerder(
            WorkerConfig.from_properties(props),
            registry,
            bootstrap=broker.bootstrap,
            status=status,
        )
        herder.start()
        herders.append(herder)
        return herder

    yield make
    for herder in herders:
        herder.stop()
