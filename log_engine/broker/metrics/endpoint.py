"""The broker's ``metrics.listeners`` HTTP endpoint: prometheus_client's server in a thread.

prometheus_client's WSGI server (``start_http_server``) answers each scrape in
a thread of its own, off the broker's event loop: parsing HTTP and formatting
the text cost the loop nothing, and a slow scraper never stalls a client. The
numbers themselves are computed on the loop (:class:`BrokerCollector`). Each
broker has a registry of its own (two brokers in one process, as tests run
them, never mix their metrics); the process's CPU, memory and GC metrics are
added as the worker's ``/metrics`` adds them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    start_http_server,
)

from log_engine.broker.config import BrokerConfigError
from log_engine.broker.metrics.collector import BrokerCollector
from log_engine.broker.metrics.recorder import BrokerMetrics

if TYPE_CHECKING:
    from log_engine.broker.broker import Broker

log = logging.getLogger(__name__)


def broker_registry(broker: Broker, metrics: BrokerMetrics) -> CollectorRegistry:
    """The broker's metrics plus the Python process's, in a registry of their own."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(BrokerCollector(broker, metrics, asyncio.get_running_loop()))
    for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(collector)
    return registry


class MetricsEndpoint:
    """``GET /metrics`` on ``metrics.listeners`` (module doc); start on the broker's loop."""

    def __init__(self, broker: Broker, metrics: BrokerMetrics, host: str, port: int) -> None:
        self._broker = broker
        self._metrics = metrics
        self._host = host or "0.0.0.0"
        self._port = port
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def start(self) -> None:
        """Bind and serve; a busy port or an unknown host is a :class:`BrokerConfigError`."""
        registry = broker_registry(self._broker, self._metrics)
        try:
            self._server, self._thread = start_http_server(
                self._port, addr=self._host, registry=registry
            )
        except OSError as exc:
            raise BrokerConfigError(
                f"cannot bind metrics.listeners http://{self._host}:{self._port}: "
                f"{exc.strerror or exc}"
            ) from None
        self.port = int(self._server.server_address[1])
        log.info("metrics on http://%s:%d/metrics", self._host, self.port)

    def stop(self) -> None:
        """Stop answering (a scrape in progress may still end with an error)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
