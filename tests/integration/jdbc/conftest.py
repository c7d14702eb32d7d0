"""Fixtures for the JDBC connectors through an in-process runtime on the session broker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from tests.support.herders import HerderFactory


@pytest.fixture
def make_herder(broker: BrokerProcess, tmp_path: Path) -> Iterator[HerderFactory]:
    """Herders (bundled plugins) with JsonConverter and schemas, as a JDBC pipeline uses."""
    factory = HerderFactory(
        broker.bootstrap,
        tmp_path,
        **{"key.converter": "JsonConverter", "value.converter": "JsonConverter"},
    )
    yield factory
    factory.stop_all()
