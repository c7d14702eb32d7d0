"""Fixtures for the connect runtime against a real broker process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_worker.plugins import PluginRegistry
from harness.broker_process import BrokerProcess
from tests.integration.connect import plugins
from tests.support.herders import HerderFactory


@pytest.fixture
def registry() -> PluginRegistry:
    """The bundled plugins plus this folder's test connectors and transforms."""
    registry = PluginRegistry.load(entry_points=False)
    assert registry.register(plugins, name="runtime-test-plugins")
    return registry


@pytest.fixture
def make_herder(
    broker: BrokerProcess, registry: PluginRegistry, tmp_path: Path
) -> Iterator[HerderFactory]:
    """Herders with this folder's test plugins and String converters; stopped at the end."""
    factory = HerderFactory(
        broker.bootstrap,
        tmp_path,
        registry,
        **{"key.converter": "StringConverter", "value.converter": "StringConverter"},
    )
    yield factory
    factory.stop_all()
