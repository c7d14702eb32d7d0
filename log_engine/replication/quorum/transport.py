"""Requests to the other voters over their controller listeners.

One :class:`~log_engine.client.connection.BrokerConnection` per (voter, api): a
Fetch the leader holds for up to ``fetch_max_wait_ms`` never delays a Vote or a
BeginQuorumEpoch queued behind it on the same socket (the server answers one
connection's requests in order). Each send is a task of its own; its answer goes
to ``deliver``. A refused connection, a timeout or a malformed answer is a lost
message: it is logged (once per peer until it works again) and dropped, and the
core sends again after ``controller.quorum.request.timeout.ms``.

A **refused** connection (nothing listens at the peer's address: its process is
gone) is also reported to ``on_refused``; when a request fails on a broken
connection (not a timeout) the transport dials the peer once at once to find
out. :meth:`refused_peers` lists the peers refused since they last answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping

from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.client.errors import KafkaError
from log_engine.client.security import describe_security, is_authentication_failure
from log_engine.errors import CorruptMessageError, ErrorCode
from log_engine.protocol.versions import ApiKey
from log_engine.replication.quorum.translate import (
    INCONSISTENT_CLUSTER_ID,
    INVALID_VOTER_KEY,
    WireError,
    request_to_wire,
    response_from_wire,
)
from log_engine.replication.raft.messages import RaftRequest, RaftResponse
from log_engine.replication.raft.types import NodeId

log = logging.getLogger(__name__)

_MAX_TASKS = 256  # bound on sends in flight (the core keeps a handful per peer)
_REDIAL_PAUSE_S = 0.05


def is_refused(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) is a refused connection (ECONNREFUSED)."""
    while exc is not None:
        if isinstance(exc, ConnectionRefusedError):
            return True
        exc = exc.__cause__
    return False


async def refuses_connections(
    host: str, port: int, config: ClientConfig, attempts: int = 3
) -> bool:
    """Whether nothing listens at ``host:port``: True only on a refused connection.

    A process being killed may close a connection before its listening socket: a
    dial in between is accepted by the kernel and then reset. Such a failure is
    tried again (``attempts`` in all, 50 ms apart); an answer or a timeout is False.
    """
    for attempt in range(attempts):
        try:
            connection = await BrokerConnection.open(host, port, config)
        except (KafkaError, OSError) as exc:
            if is_refused(exc):
                return True
            if _timed_out(exc) or "timed out" in str(exc) or attempt == attempts - 1:
                return False
            await asyncio.sleep(_REDIAL_PAUSE_S)
            continue
        connection.close("probe done")
        return False
    return False


def _timed_out(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or (
        isinstance(exc, KafkaError) and exc.errno == ErrorCode.REQUEST_TIMED_OUT
    )


class PeerTransport:
    """Sends the core's requests to voters and hands their answers to ``deliver``."""

    def __init__(
        self,
        addresses: dict[NodeId, tuple[str, int]],
        cluster_id: str,
        node_id: NodeId,
        request_timeout_ms: int,
        fetch_max_bytes: int,
        deliver: Callable[[RaftResponse], None],
        on_refused: Callable[[NodeId], None] | None = None,
        security: Mapping[str, str] | None = None,
    ) -> None:
        """``security``: client keys for the voters' controller listener (TLS, SASL;
        ``ClusterConfig.controller_client``); None: plaintext."""
        self._addresses = addresses
        self._cluster_id = cluster_id
        self._request_timeout_ms = request_timeout_ms
        self._fetch_max_bytes = fetch_max_bytes
        self._deliver = deliver
        self._on_refused = on_refused
        self._refused_at: dict[NodeId, float] = {}  # monotonic seconds of the last refusal
        self._config = ClientConfig.from_mapping(
            {
                **(security or {}),
                "bootstrap.servers": [f"{h}:{p}" for h, p in addresses.values()] or ["localhost:1"],
                "client.id": f"sluice-raft-{node_id}",
                "request.timeout.ms": request_timeout_ms,
                "socket.connection.setup.timeout.ms": min(request_timeout_ms, 10_000),
            }
        )
        self._connections: dict[tuple[NodeId, ApiKey], BrokerConnection] = {}
        self._connecting: dict[tuple[NodeId, ApiKey], asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._failing: set[NodeId] = set()
        self._closed = False

    def send(self, request: RaftRequest) -> None:
        """Send ``request`` in the background (dropped if the receiver has no address)."""
        if self._closed or request.receiver not in self._addresses:
            return
        if len(self._tasks) >= _MAX_TASKS:
            log.warning("quorum: %d requests in flight, dropping %s", len(self._tasks), request)
            return
        task = asyncio.get_running_loop().create_task(self._send(request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for the sends in flight now (e.g. EndQuorumEpoch)."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout_s)

    async def close(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for connection in self._connections.values():
            connection.close("quorum stopped")
        self._connections.clear()

    async def _send(self, request: RaftRequest) -> None:
        key, version, body = request_to_wire(request, self._cluster_id, self._fetch_max_bytes)
        peer = request.receiver
        try:
            connection = await self._connection(peer, key)
            answer = await connection.send(
                key,
                body,
                version=version,
                timeout_ms=self._request_timeout_ms + getattr(request, "max_wait_ms", 0),
            )
            response = response_from_wire(request, answer)
        except (KafkaError, OSError) as exc:
            self._drop(peer, key)
            if is_authentication_failure(exc):
                self._login_refused(peer, exc)
                return
            self._note_failure(peer, f"{key.name} to node {peer} failed: {exc}")
            if is_refused(exc) or (not _timed_out(exc) and await self._redial_refused(peer, key)):
                self._refused(peer)
            return
        except WireError as exc:
            if exc.error_code == INVALID_VOTER_KEY:
                log.error(
                    "quorum: the node at node %d's address is another node: "
                    "controller.quorum.voters differ between the nodes",
                    peer,
                )
            elif exc.error_code == INCONSISTENT_CLUSTER_ID:
                log.error(
                    "quorum: node %d rejects this node's cluster id %s: its "
                    "controller.quorum.voters (or cluster.id) differ from this node's",
                    peer,
                    self._cluster_id,
                )
            else:
                self._note_failure(peer, f"{key.name} to node {peer}: {exc}")
            return
        except CorruptMessageError as exc:
            self._note_failure(peer, f"{key.name} from node {peer}: corrupt records: {exc}")
            return
        if peer in self._failing:
            self._failing.discard(peer)
            log.info("quorum: node %d answers again", peer)
        self._refused_at.pop(peer, None)
        self._deliver(response)

    def refused_peers(self, within_s: float) -> set[NodeId]:
        """Peers whose address refused a connection in the last ``within_s`` seconds and
        that have not answered since."""
        since = time.monotonic() - within_s
        return {peer for peer, at in self._refused_at.items() if at >= since}

    def _refused(self, peer: NodeId) -> None:
        if peer not in self._refused_at:
            log.info("quorum: node %d refuses connections", peer)
        self._refused_at[peer] = time.monotonic()
        if self._on_refused is not None:
            self._on_refused(peer)

    async def _redial_refused(self, peer: NodeId, key: ApiKey) -> bool:
        """After a broken connection: dial again; True if the peer refuses (it is gone)."""
        host, port = self._addresses[peer]
        return await refuses_connections(host, port, self._config)

    async def _connection(self, peer: NodeId, key: ApiKey) -> BrokerConnection:
        slot = (peer, key)
        lock = self._connecting.setdefault(slot, asyncio.Lock())
        async with lock:
            connection = self._connections.get(slot)
            if connection is None or connection.closed:
                host, port = self._addresses[peer]
                connection = await BrokerConnection.open(host, port, self._config, peer)
                self._connections[slot] = connection
            return connection

    def _drop(self, peer: NodeId, key: ApiKey) -> None:
        connection = self._connections.pop((peer, key), None)
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.close("request failed")

    def _login_refused(self, peer: NodeId, exc: BaseException) -> None:
        if peer not in self._failing:
            self._failing.add(peer)
            log.error(
                "quorum: node %d refuses this node's login on its controller listener "
                "(%s): %s; check sasl.mechanism.controller.protocol and the controller "
                "listener's sasl.jaas.config / ssl.truststore.* (docs/security.md)",
                peer,
                describe_security(self._config),
                exc,
            )

    def _note_failure(self, peer: NodeId, text: str) -> None:
        if peer not in self._failing:
            self._failing.add(peer)
            log.info("quorum: %s", text)
        else:
            log.debug("quorum: %s", text)
