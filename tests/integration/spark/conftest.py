"""One Spark session for the in-process Spark tests, and helpers to fill topics."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from tests.integration.spark import topics
from tests.integration.spark.topics import LogTopic
from tests.support.herders import HerderFactory


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """local[2], two shuffle partitions, no UI; the sluice format registered."""
    from spark_sinks.session import SharedSession

    session = SharedSession.acquire(
        "local[2]",
        {"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"},
    )
    yield session
    SharedSession.release()


@pytest.fixture
def topic(broker: BrokerProcess, topic_name: str) -> LogTopic:
    """The test's topic (``topic_name``), not created yet."""
    return LogTopic(broker, topic_name)


@pytest.fixture
def make_topic(broker: BrokerProcess) -> Callable[..., None]:
    """``make_topic(name, partitions=1)`` on the session broker."""
    return lambda topic, partitions=1: topics.make_topic(broker, topic, partitions)


@pytest.fixture
def produce(broker: BrokerProcess) -> Callable[..., None]:
    """``produce(topic, values, partition=, keys=, headers=)``, acknowledged on return."""
    return lambda topic, values, **kw: topics.produce(broker, topic, values, **kw)


@pytest.fixture
def make_herder(broker: BrokerProcess, tmp_path: Path) -> Iterator[HerderFactory]:
    """Herders (bundled plugins) that leave a failed query's task FAILED (no auto-restart)."""
    factory = HerderFactory(broker.bootstrap, tmp_path, **{"task.restart.enabled": "false"})
    yield factory
    factory.stop_all()
