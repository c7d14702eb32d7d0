"""``ControllerChannel``: a broker's requests to the active controller.

The active controller is the quorum's leader (every node follows the quorum as
a voter or an observer, so ``quorum.leader`` names it); its address is its
entry in ``controller.quorum.voters`` (the controller listener). A request
answered NOT_CONTROLLER, or lost to a broken connection or a timeout, is sent
again, to whoever leads then, until ``timeout_ms`` has passed; the last answer
(or a NOT_CONTROLLER answer) is returned, never an exception for those.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from log_engine.broker.cluster_config import ClusterConfig
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.client.errors import KafkaError
from log_engine.client.security import describe_security, is_authentication_failure
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey
from log_engine.replication.quorum import ControllerQuorum

log = logging.getLogger(__name__)

NOT_CONTROLLER = int(ErrorCode.NOT_CONTROLLER)
RETRY_BACKOFF_MS = 100

Body = dict[str, Any]


def top_level_not_controller(body: Body) -> bool:
    """The retry rule of the broker-to-controller APIs: a top-level NOT_CONTROLLER."""
    return body.get("error_code") == NOT_CONTROLLER


class ControllerChannel:
    """Sends requests to the active controller, following the quorum's leader."""

    def __init__(self, cluster: ClusterConfig, quorum: ControllerQuorum, request_timeout_ms: int):
        self._cluster = cluster
        self._quorum = quorum
        self._addresses = {v.node_id: (v.host, v.port) for v in cluster.voters}
        self._request_timeout_ms = request_timeout_ms
        self._config = ClientConfig.from_mapping(
            {
                **cluster.controller_client,  # the controller listener's security
                "bootstrap.servers": [f"{h}:{p}" for h, p in self._addresses.values()],
                "client.id": f"sluice-broker-{cluster.node_id}",
                "request.timeout.ms": request_timeout_ms,
                "socket.connection.setup.timeout.ms": min(request_timeout_ms, 5000),
            }
        )
        self._connections: dict[int, BrokerConnection] = {}
        self._connecting: dict[int, asyncio.Lock] = {}
        self._login_refused = False  # logged once until a login succeeds

    @property
    def controller_id(self) -> int | None:
        """The active controller as this node knows it (the quorum's leader)."""
        return self._quorum.leader.leader_id

    async def send(
        self,
        api_key: ApiKey,
        version: int,
        body: Body,
        timeout_ms: int,
        retry_if: Callable[[Body], bool] = top_level_not_controller,
    ) -> Body | None:
        """The active controller's answer; ``None`` if none came within ``timeout_ms``."""
        deadline = time.monotonic() + timeout_ms / 1000
        answer: Body | None = None
        while True:
            leader = self.controller_id
            if leader is not None and leader in self._addresses:
                try:
                    answer = await self._send_to(leader, api_key, version, body)
                except (KafkaError, OSError, TimeoutError) as exc:
                    if is_authentication_failure(exc) and not self._login_refused:
                        log.error(
                            "controller %d refuses this broker's login on the controller "
                            "listener (%s): %s; check sasl.mechanism.controller.protocol "
                            "and the controller listener's sasl.jaas.config / "
                            "ssl.truststore.* (docs/security.md)",
                            leader, describe_security(self._config), exc,
                        )  # fmt: skip
                        self._login_refused = True
                    log.debug("%s to controller %d failed: %s", api_key.name, leader, exc)
                    self._drop(leader)
                else:
                    self._login_refused = False
                    if not retry_if(answer):
                        return answer
            if time.monotonic() + RETRY_BACKOFF_MS / 1000 > deadline:
                return answer
            await asyncio.sleep(RETRY_BACKOFF_MS / 1000)

    async def _send_to(self, node_id: int, api_key: ApiKey, version: int, body: Body) -> Body:
        connection = await self._connection(node_id)
        return await connection.send(
            api_key, body, version=version, timeout_ms=self._request_timeout_ms
        )

    async def _connection(self, node_id: int) -> BrokerConnection:
        lock = self._connecting.setdefault(node_id, asyncio.Lock())
        async with lock:
            connection = self._connections.get(node_id)
            if connection is None or connection.closed:
                host, port = self._addresses[node_id]
                connection = await BrokerConnection.open(host, port, self._config, node_id)
                self._connections[node_id] = connection
            return connection

    def _drop(self, node_id: int) -> None:
        connection = self._connections.pop(node_id, None)
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close("request failed")

    def close(self) -> None:
        for node_id in list(self._connections):
            self._drop(node_id)
