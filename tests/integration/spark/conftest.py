"""One Spark session for the in-process Spark tests, and helpers to fill topics."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from log_engine.client import SyncAdmin, SyncProducer
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


def _make_topic(broker: BrokerProcess, topic: str, partitions: int = 1) -> None:
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topic(topic, partitions)


def _produce(
    broker: BrokerProcess,
    topic: str,
    values: Sequence[bytes | dict],
    *,
    partition: int | None = None,
    keys: Sequence[bytes | None] | None = None,
    headers: Sequence[tuple[str, bytes]] | None = None,
) -> None:
    """Send ``values`` (dicts as JSON) and wait until all are acknowledged."""
    with SyncProducer({"bootstrap.servers": broker.bootstrap, "acks": "all"}) as producer:
        futures = []
        for i, value in enumerate(values):
            raw = json.dumps(value).encode() if isinstance(value, dict) else value
            futures.append(
                producer.send(
                    topic,
                    raw,
                    key=keys[i] if keys else None,
                    partition=partition,
                    headers=list(headers) if headers else None,
                )
            )
        producer.flush()
        for future in futures:
            future.result(timeout=30)


@pytest.fixture
def make_topic(broker: BrokerProcess) -> Callable[..., None]:
    """``make_topic(name, partitions=1)`` on the session broker."""
    return lambda topic, partitions=1: _make_topic(broker, topic, partitions)


@pytest.fixture
def produce(broker: BrokerProcess) -> Callable[..., None]:
    """``produce(topic, values, partition=, keys=, headers=)``, acknowledged on return."""
    return lambda topic, values, **kw: _produce(broker, topic, values, **kw)


@pytest.fixture
def make_herder(broker: BrokerProcess, tmp_path: Path) -> Iterator[HerderFactory]:
    """Herders (bundled plugins) that leave a failed query's task FAILED (no auto-restart)."""
    factory = HerderFactory(broker.bootstrap, tmp_path, **{"task.restart.enabled": "false"})
    yield factory
    factory.stop_all()
