"""Shared fixtures: one broker process per session, plus fresh ones on demand."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.broker_process import BrokerProcess


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A broker shared by the session's tests; tests use topics of their own."""
    process = BrokerProcess(tmp_path_factory.mktemp("session") / "data").start()
    yield process
    assert process.stop() == 0, process.log_text()


@pytest.fixture
def fresh_broker(tmp_path: Path) -> Iterator[Callable[..., BrokerProcess]]:
    """Start a broker of the test's own (for restarts, crashes and odd settings)."""
    started: list[BrokerProcess] = []

    def start(**overrides: str) -> BrokerProcess:
        process = BrokerProcess(tmp_path / f"data{len(started)}", **overrides).start()
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A topic name unique to the test."""
    return "t-" + request.node.name.replace("[", "-").replace("]", "").replace("_", "-")[:60]
