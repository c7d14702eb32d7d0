"""Fixtures of the MQTT tests: one Mosquitto per session, a herder on the session broker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.worker_config import WorkerConfig
from tests.support.broker_process import BrokerProcess
from tests.support.mosquitto import MosquittoServer


@pytest.fixture(scope="session")
def mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MosquittoServer]:
    """A Mosquitto shared by the MQTT tests (anonymous, password and TLS listeners)."""
    server = MosquittoServer(tmp_path_factory.mktemp("mosquitto"), with_tls=True).start()
    yield server
    server.stop()


@pytest.fixture
def mqtt_prefix(request: pytest.FixtureRequest) -> str:
    """An MQTT topic prefix unique to the test (tests share the session's Mosquitto)."""
    return "t/" + request.node.name.replace("[", "-").replace("]", "")[:60]


@pytest.fixture
def make_herder(
    broker: BrokerProcess, tmp_path: Path
) -> Iterator[Callable[..., StandaloneHerder]]:
    """Start a StandaloneHerder with the bundled plugins on the session broker."""
    herders: list[StandaloneHerder] = []

    def make(**overrides: str) -> StandaloneHerder:
        props = {
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "connector.configs.file": str(tmp_path / "connectors.json"),
            "offset.flush.interval.ms": "200",
            "task.restart.backoff.initial.ms": "50",
            "task.restart.backoff.max.ms": "400",
            **overrides,
        }
        herder = StandaloneHerder(
            WorkerConfig.from_properties(props),
            PluginRegistry.load(entry_points=False),
            bootstrap=broker.bootstrap,
        )
        herder.start()
        herders.append(herder)
        return herder

    yield make
    for herder in herders:
        herder.stop()
