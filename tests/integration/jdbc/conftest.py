"""Fixtures for the JDBC connectors through an in-process runtime on the session broker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.worker_config import WorkerConfig
from tests.support.broker_process import BrokerProcess


@pytest.fixture
def make_herder(
    broker: BrokerProcess, tmp_path: Path
) -> Iterator[Callable[..., StandaloneHerder]]:
    """Start a StandaloneHerder (bundled plugins) on the session broker; stopped at the end.

    Converters default to JsonConverter with schemas, as a JDBC pipeline would use.
    """
    herders: list[StandaloneHerder] = []
    registry = PluginRegistry.load(entry_points=False)

    def make(**overrides: str) -> StandaloneHerder:
        props = {
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "connector.configs.file": str(tmp_path / "connectors.json"),
            "offset.flush.interval.ms": "200",
            "task.restart.backoff.initial.ms": "50",
            "task.restart.backoff.max.ms": "400",
            "key.converter": "JsonConverter",
            "value.converter": "JsonConverter",
            **overrides,
        }
        herder = StandaloneHerder(
            WorkerConfig.from_properties(props), registry, bootstrap=broker.bootstrap
        )
        herder.start()
        herders.append(herder)
        return herder

    yield make
    for herder in herders:
        herder.stop()
