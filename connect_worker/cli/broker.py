"""The broker the ``sluice`` command starts: ``sluice broker`` (a broker process)
and the embedded single-node broker of ``sluice standalone``.

The only module of ``connect_worker`` that imports the broker itself
(``log_engine.broker``); everything else reaches a broker through
``log_engine.client``, as it would reach any Kafka cluster.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import Sequence

from connect_worker.properties import load_properties
from connect_worker.worker_config import WorkerConfig
from log_engine.broker.broker import Broker, run_broker
from log_engine.broker.config import BrokerConfig, BrokerConfigError
from log_engine.client import LoopThread

__all__ = ["BrokerConfigError", "EmbeddedBroker", "run_broker_command"]

EMBEDDED_PREFIX = "embedded.broker."
_BROKER_START_TIMEOUT_S = 600.0  # log recovery of a large data dir takes a while


def run_broker_command(args: argparse.Namespace) -> int:
    """The body of ``sluice broker``: serve until SIGINT or SIGTERM."""
    props = load_properties(args.config) if args.config else {}
    props.update(_parse_overrides(args.override))
    _serve(BrokerConfig.from_properties(props))
    return 0


def _parse_overrides(pairs: Sequence[str]) -> dict[str, str]:
    overrides = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise BrokerConfigError(f"--override {pair!r} is not KEY=VALUE")
        overrides[key.strip()] = value.strip()
    return overrides


def _serve(config: BrokerConfig) -> None:
    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_broker(config, stop)

    asyncio.run(serve())


class EmbeddedBroker:
    """A single-node broker running on a loop thread of its own, in this process."""

    def __init__(self, props: dict[str, str]) -> None:
        self.config = BrokerConfig.from_properties(props)
        self._loop: LoopThread | None = None
        self._broker: Broker | None = None

    @classmethod
    def from_worker_properties(cls, worker: dict[str, str], config: WorkerConfig) -> EmbeddedBroker:
        """Broker settings: ``embedded.broker.<key>`` entries, with standalone's defaults."""
        props = {
            "group.initial.rebalance.delay.ms": "0",
            "offsets.topic.num.partitions": "1",
        }
        props.update(
            {
                k[len(EMBEDDED_PREFIX) :]: v
                for k, v in worker.items()
                if k.startswith(EMBEDDED_PREFIX)
            }
        )
        props["listeners"] = config.embedded_broker_listeners
        props["log.dirs"] = str(config.embedded_broker_log_dirs)
        return cls(props)

    @property
    def cluster_id(self) -> str | None:
        return self._broker.cluster_id if self._broker else None

    def start(self) -> str:
        """Start and return the bootstrap address (``host:port``)."""
        self._loop = LoopThread("sluice-embedded-broker")
        self._broker = self._loop.run(self._start(), _BROKER_START_TIMEOUT_S)
        address = self._broker.advertised
        return f"{address.host}:{address.port}"

    async def _start(self) -> Broker:
        broker = Broker(self.config)
        await broker.start()
        return broker

    def stop(self) -> None:
        if self._loop is None:
            return
        try:
            if self._broker is not None:
                self._loop.run(self._broker.stop(), 60)
        finally:
            self._loop.stop()
            self._loop = None
            self._broker = None
