"""Fixtures of the MQTT tests: one Mosquitto per session, a herder on the session broker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.mosquitto import MosquittoServer


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


