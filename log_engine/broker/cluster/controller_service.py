"""``ControllerService``: the active controller running on a voter.

A :class:`QuorumController` is attached to the node's :class:`MetadataListener`
(which the quorum feeds). Each request of the controller listener (BrokerRegistration,
BrokerHeartbeat, AlterPartition, AllocateProducerIds, and the CreateTopics /
DeleteTopics that brokers forward) becomes a :class:`ControllerResult`; its
records are appended to the quorum and the answer goes out once they commit.
If the append fails (this node stopped leading first) the controller renounces
its pending records and the answer is NOT_CONTROLLER, which the broker retries
at the new leader. A tick task runs ``controller.tick`` at
``next_deadline_ms`` (the no-op record that activates a new leader, session
expiry, preferred leaders).

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
from log_engine.controller import ControllerConfig, NewTopic, QuorumController, TopicOutcome
from log_engine.controller.wire import ControllerApis
from log_engine.errors import ErrorCode
from log_engine.metadata.listener import MetadataListener
from log_engine.metadata.records import (
    MetadataRecord,
    UserScramCredentialRecord,
    encode_record,
)
from log_engine.replication.quorum import ControllerQuorum
from log_engine.replication.raft import RaftError
from log_engine.replication.raft.types import LeaderAndEpoch

log = logging.getLogger(__name__)

T = TypeVar("T")
Body = dict[str, Any]
_MAX_TICK_WAIT_S = 0.5


def now_ms() -> int:
    """The controller's clock: monotonic milliseconds."""
    return time.monotonic_ns() // 1_000_000


class ControllerService:
    """The controller logic of one voter, wired to its quorum."""

    def __init__(
        self, config: ControllerConfig, quorum: ControllerQuorum, listener: MetadataListener
    ) -> None:
        self.controller = QuorumController(config, random.Random())
        self.apis = ControllerApis(self.controller)
        self._quorum = quorum
        self._listener = listener
        self._wake = asyncio.Event()
        self._ticker: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.controller.attach(self._listener)
        self._listener.subscribe(lambda _update: None, self._on_leader_change)
        # the quorum started first: a lone voter has already elected itself
        self.controller.on_leader_change(self._listener.leader)
        self._ticker = asyncio.get_running_loop().create_task(self._tick_loop())

    async def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None

    def _on_leader_change(self, leader: LeaderAndEpoch) -> None:
        self._wake.set()

    async def handle(self, api_key: int, version: int, body: Body) -> Body:
        """A broker-to-controller request: the response body, sent after its records commit."""
        result = self.apis.handle(api_key, version, body, now_ms())
        return await self._commit(
            result.records, result.response, lambda: ControllerApis.not_controller(api_key)
        )

    async def create_topics(
        self, topics: Sequence[NewTopic], validate_only: bool
    ) -> tuple[TopicOutcome, ...]:
        result = self.controller.create_topics(topics, now_ms(), validate_only)
        return await self._commit(
            result.records,
            result.response,
            lambda: tuple(TopicOutcome(t.name, int(ErrorCode.NOT_CONTROLLER)) for t in topics),
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

    async def _tick_loop(self) -> None:
        while True:
            now = now_ms()
            if self.controller.is_leader:
                result = self.controller.tick(now)
                if result.records:
                    await self._commit(result.records, None, lambda: None)
                    continue
            deadline = self.controller.next_deadline_ms(now)
            wait_s = _MAX_TICK_WAIT_S
            if deadline is not None:
                wait_s = min(max((deadline - now) / 1000, 0.005), _MAX_TICK_WAIT_S)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait_s):
                    await self._wake.wait()
