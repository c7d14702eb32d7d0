"""``ControllerService``: the active controller running on a voter.

A :class:`QuorumController` is attached to the node's :class:`MetadataListener`
(which the quorum feeds). Each request of the controller listener (BrokerRegistration,
BrokerHeartbeat, AlterPartition, AllocateProducerIds, and the CreateTopics /
DeleteTopics / CreatePartitions / IncrementalAlterConfigs that brokers forward)
becomes a :class:`ControllerResult`; its records are appended to the quorum and
the answer goes out once they commit.
If the append fails (this node stopped leading first) the controller renounces
its pending records and the answer is NOT_CONTROLLER, which the broker retries
at the new leader. A tick task runs ``controller.tick`` at
``next_deadline_ms`` (the no-op record that activates a new leader, session
expiry, preferred leaders).

Lost-connection evidence (Sluice's addition to Kafka's session rule, see
``controller/sessions.py``): the service remembers which controller-listener
connection carried each broker's last registration or heartbeat; when that
connection closes (a killed broker's socket closes at once) it tells the
controller ``connection_lost(broker_id, now_ms)``. If the broker is also a voter
(a combined node: same id, same process) the service then dials that node's
controller listener once; a refusal means the process is gone and is reported
with ``refused=True``. And when this node's controller becomes active, each
voter whose controller listener refused this node's quorum connections lately
(in an election after a ``kill -9`` of the last leader: its node) is reported as
refused. A voter that is only a controller is not a registered broker and is
ignored by the controller.

Bootstrap records (``metadata/bootstrap.py``, written by ``sluice storage
format --add-scram``): when this node's controller becomes active on a fresh
metadata log it appends them, so the first admin's SCRAM credential is in every
node's image before anyone needs it.

Requests are turned into records and handed to ``quorum.append`` without an
``await`` in between, so records reach the log in the order the controller
produced them (its speculative image assumes that order).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from log_engine.acls import AclBinding, AclFilter
from log_engine.client.config import ClientConfig
from log_engine.controller import (
    ControllerConfig,
    NewPartitions,
    NewTopic,
    QuorumController,
    TopicConfigChange,
    TopicOutcome,
)
from log_engine.controller.wire import ControllerApis
from log_engine.errors import ErrorCode
from log_engine.metadata.listener import MetadataListener
from log_engine.metadata.records import (
    MetadataRecord,
    UserScramCredentialRecord,
    encode_record,
)
from log_engine.protocol import ApiKey
from log_engine.replication.quorum import ControllerQuorum
from log_engine.replication.quorum.transport import refuses_connections
from log_engine.replication.raft import RaftError
from log_engine.replication.raft.types import LeaderAndEpoch

log = logging.getLogger(__name__)

T = TypeVar("T")
Body = dict[str, Any]
_MAX_TICK_WAIT_S = 0.5
_SESSION_APIS = frozenset({ApiKey.BROKER_REGISTRATION, ApiKey.BROKER_HEARTBEAT})


def now_ms() -> int:
    """The controller's clock: monotonic milliseconds."""
    return time.monotonic_ns() // 1_000_000


class ControllerService:
    """The controller logic of one voter, wired to its quorum."""

    def __init__(
        self,
        config: ControllerConfig,
        quorum: ControllerQuorum,
        listener: MetadataListener,
        bootstrap: Sequence[MetadataRecord] = (),
    ) -> None:
        """``bootstrap``: records for a fresh metadata log (SCRAM credentials only)."""
        unsupported = [r for r in bootstrap if not isinstance(r, UserScramCredentialRecord)]
        if unsupported:
            raise ValueError(f"bootstrap records other than SCRAM credentials: {unsupported}")
        self.controller = QuorumController(config, random.Random(), bootstrap=bootstrap)
        self.apis = ControllerApis(self.controller)
        self._quorum = quorum
        self._listener = listener
        self._wake = asyncio.Event()
        self._ticker: asyncio.Task[None] | None = None
        self._heartbeat_peer: dict[int, str] = {}  # broker id -> its last heartbeat's connection
        self._activation_seen = False
        self._voters = {v.node_id: (v.host, v.port) for v in quorum.cluster.voters}
        self._probes: set[asyncio.Task[None]] = set()
        probe_timeout_ms = config.broker_heartbeat_interval_ms
        self._probe_config = ClientConfig.from_mapping(
            {
                **quorum.cluster.controller_client,
                "bootstrap.servers": [f"{h}:{p}" for h, p in self._voters.values()],
                "client.id": f"sluice-controller-{config.node_id}",
                "request.timeout.ms": probe_timeout_ms,
                "socket.connection.setup.timeout.ms": probe_timeout_ms,
            }
        )

    def start(self) -> None:
        self.controller.attach(self._listener)
        self._listener.subscribe(lambda _update: None, self._on_leader_change)
        # the quorum started first: a lone voter has already elected itself
        self.controller.on_leader_change(self._listener.leader)
        self._ticker = asyncio.get_running_loop().create_task(self._tick_loop())

    async def stop(self) -> None:
        for probe in list(self._probes):
            probe.cancel()
        await asyncio.gather(*self._probes, return_exceptions=True)
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None

    def _on_leader_change(self, leader: LeaderAndEpoch) -> None:
        self._wake.set()

    async def handle(self, api_key: int, version: int, body: Body, peer: str | None = None) -> Body:
        """A broker-to-controller request: the response body, sent after its records commit.

        ``peer`` names the connection it came on (``host:port`` of the broker's end).
        """
        if peer is not None and api_key in _SESSION_APIS:
            self._heartbeat_peer[body["broker_id"]] = peer
        result = self.apis.handle(api_key, version, body, now_ms())
        return await self._commit(
            result.records, result.response, lambda: ControllerApis.not_controller(api_key)
        )

    def connection_closed(self, peer: str) -> None:
        """A controller-listener connection closed: if it carried a broker's last
        heartbeat, that is evidence the broker may be gone."""
        lost = [b for b, p in self._heartbeat_peer.items() if p == peer]
        if not lost:
            return
        now = now_ms()
        for broker_id in lost:
            del self._heartbeat_peer[broker_id]
            if self.controller.is_active:
                log.info("controller: the heartbeat connection of broker %d closed", broker_id)
            self.controller.connection_lost(broker_id, now)
            if broker_id in self._voters and self.controller.is_active:
                probe = asyncio.get_running_loop().create_task(self._probe(broker_id))
                self._probes.add(probe)
                probe.add_done_callback(self._probes.discard)
        self._wake.set()

    async def _probe(self, broker_id: int) -> None:
        """Dial a combined node's controller listener; report a refusal (its process is gone)."""
        host, port = self._voters[broker_id]
        if await refuses_connections(host, port, self._probe_config):
            log.info("controller: node %d refuses connections; its broker is gone", broker_id)
            self.controller.connection_lost(broker_id, now_ms(), refused=True)
            self._wake.set()

    async def create_topics(
        self, topics: Sequence[NewTopic], validate_only: bool
    ) -> tuple[TopicOutcome, ...]:
        result = self.controller.create_topics(topics, now_ms(), validate_only)
        return await self._commit(
            result.records,
            result.response,
            lambda: tuple(TopicOutcome(t.name, int(ErrorCode.NOT_CONTROLLER)) for t in topics),
        )

    async def create_partitions(
        self, requests: Sequence[NewPartitions], validate_only: bool
    ) -> tuple[TopicOutcome, ...]:
        result = self.controller.create_partitions(requests, now_ms(), validate_only)
        return await self._commit(
            result.records,
            result.response,
            lambda: tuple(TopicOutcome(r.name, int(ErrorCode.NOT_CONTROLLER)) for r in requests),
        )

    async def alter_topic_configs(
        self, changes: Sequence[TopicConfigChange], validate_only: bool
    ) -> tuple[TopicOutcome, ...]:
        result = self.controller.alter_topic_configs(changes, validate_only)
        return await self._commit(
            result.records,
            result.response,
            lambda: tuple(TopicOutcome(c.name, int(ErrorCode.NOT_CONTROLLER)) for c in changes),
        )

    async def delete_topics(self, names: Sequence[str]) -> tuple[TopicOutcome, ...]:
        result = self.controller.delete_topics(names, now_ms())
        return await self._commit(
            result.records,
            result.response,
            lambda: tuple(TopicOutcome(n, int(ErrorCode.NOT_CONTROLLER)) for n in names),
        )

    async def create_acls(self, bindings: Sequence[AclBinding]) -> bool:
        """CreateAcls forwarded by a broker: True once the records committed."""
        result = self.controller.create_acls(bindings)
        return await self._commit(result.records, result.response, lambda: False)

    async def delete_acls(self, filters: Sequence[AclFilter]) -> list[list[AclBinding]] | None:
        """DeleteAcls forwarded by a broker: per filter the bindings removed (None: refused)."""
        result = self.controller.delete_acls(filters)
        return await self._commit(result.records, result.response, lambda: None)

    async def alter_scram(
        self,
        deletions: Sequence[tuple[str, int]],
        upsertions: Sequence[UserScramCredentialRecord],
    ) -> bool:
        """AlterUserScramCredentials forwarded by a broker: True once committed."""
        result = self.controller.alter_scram(deletions, upsertions)
        return await self._commit(result.records, result.response, lambda: False)

    async def _commit(
        self, records: Sequence[MetadataRecord], response: T, refused: Callable[[], T]
    ) -> T:
        if not records:
            return response
        try:
            await self._quorum.append([encode_record(r) for r in records])
        except RaftError as exc:
            log.info("controller: append failed (%s); renouncing", exc)
            self.controller.renounce()
            if self._quorum.leader.leader_id == self._quorum.node_id:
                # still the Raft leader: resign, so an election activates a controller again
                with contextlib.suppress(RaftError):
                    await self._quorum.resign()
            return refused()
        return response

    def _report_refused_voters(self, now: int) -> None:
        window_ms = self._quorum.config.fetch_timeout_ms + self._quorum.config.election_timeout_ms
        for voter in sorted(self._quorum.refused_voters(window_ms)):
            if voter in self.controller.image.registrations:
                log.info("controller: node %d refuses connections; its broker is gone", voter)
            self.controller.connection_lost(voter, now, refused=True)

    @staticmethod
    def _report_bootstrap(records: Sequence[MetadataRecord]) -> None:
        """Log the bootstrap credentials of a committed batch (only a first activation's
        batch has any: nothing else appends SCRAM records from the tick)."""
        written = [r for r in records if isinstance(r, UserScramCredentialRecord)]
        if written:
            log.info(
                "controller: wrote %d bootstrap SCRAM credential(s) (users %s) into the "
                "new metadata log", len(written), ", ".join(sorted({r.name for r in written})),
            )  # fmt: skip

    async def _tick_loop(self) -> None:
        while True:
            now = now_ms()
            if self.controller.is_active and not self._activation_seen:
                self._activation_seen = True
                self._report_refused_voters(now)
            elif not self.controller.is_active:
                self._activation_seen = False
            if self.controller.is_leader:
                result = self.controller.tick(now)
                if result.records:
                    if await self._commit(result.records, True, lambda: False):
                        self._report_bootstrap(result.records)
                    continue
            deadline = self.controller.next_deadline_ms(now)
            wait_s = _MAX_TICK_WAIT_S
            if deadline is not None:
                wait_s = min(max((deadline - now) / 1000, 0.005), _MAX_TICK_WAIT_S)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait_s):
                    await self._wake.wait()
