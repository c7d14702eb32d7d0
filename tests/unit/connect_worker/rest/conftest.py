"""The REST app over a real StandaloneHerder on the session broker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.rest import create_app
from connect_worker.worker_config import WorkerConfig
from harness.broker_process import BrokerProcess


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    return PluginRegistry.load(entry_points=False)


@pytest.fixture
def herder(
    broker: BrokerProcess, registry: PluginRegistry, tmp_path: Path
) -> Iterator[StandaloneHerder]:
    config = WorkerConfig.from_properties(
        {
            "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
            "connector.configs.file": str(tmp_path / "connectors.json"),
            "offset.flush.interval.ms": "200",
        }
    )
    herder = StandaloneHerder(config, registry, bootstrap=broker.bootstrap)
    herder.start()
    yield herder
    herder.stop()


@pytest.fixture
def client(herder: StandaloneHerder, registry: PluginRegistry) -> Iterator[TestClient]:
    app = create_app(herder, registry, kafka_cluster_id="test-cluster")
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client
