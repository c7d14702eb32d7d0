"""Filling the Spark tests' topics on the session broker."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.broker_process import BrokerProcess
from log_engine.client import SyncAdmin, SyncProducer


def make_topic(broker: BrokerProcess, topic: str, partitions: int = 1) -> None:
    with SyncAdmin({"bootstrap.servers": broker.bootstrap}) as admin:
        admin.create_topic(topic, partitions)


def produce(
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


@dataclass(frozen=True)
class LogTopic:
    """The test's topic on the session broker: create it, then fill it."""

    broker: BrokerProcess
    name: str

    def create(self, partitions: int = 1) -> None:
        make_topic(self.broker, self.name, partitions)

    def produce(self, values: Sequence[bytes | dict], **kw: Any) -> None:
        """As ``produce`` (partition=, keys=, headers=), to this topic."""
        produce(self.broker, self.name, values, **kw)
