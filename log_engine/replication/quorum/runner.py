"""``ControllerQuorum``: the Raft core driven by a broker's asyncio loop over real sockets.

One step at a time (an ``asyncio.Lock``), every step in the order ``actions.py``
prescribes:

1. call the core (``start``, ``tick``, ``handle``, ``append``, ``create_snapshot``)
   with the loop's monotonic clock in milliseconds;
2. apply ``Output.persist`` to the :class:`FileRaftStorage` and fsync it, in a
   worker thread (the loop keeps serving; the lock keeps the next step waiting);
3. only then send ``Output.messages``: requests to the voters through
   :class:`PeerTransport`, responses to the inbound request that waits for them;
4. hand ``Output.events`` to the listener (commits, snapshots, leader changes) and
   complete the ``append`` calls whose entries are now committed.

A timer task ticks the core at ``next_deadline_ms()``; inbound requests arrive
from the controller listener (:meth:`handle_request`); answers to our own
requests come back from the transport. A node not in ``controller.quorum.voters``
runs the same core as an observer (it only fetches).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from log_engine.broker.cluster_config import ClusterConfig
from log_engine.errors import LogDirLockedError
from log_engine.replication.quorum.translate import (
    METADATA_PARTITION,
    METADATA_TOPIC,
    RESPONSE_TYPES,
)
from log_engine.replication.quorum.transport import PeerTransport
from log_engine.replication.raft import (
    CommitEvent,
    Entry,
    FileRaftStorage,
    LeaderAndEpoch,
    LeaderChangeEvent,
    LoadSnapshotEvent,
    NotLeaderError,
    Output,
    QuorumStatus,
    RaftConfig,
    RaftError,
    RaftListener,
    RaftNode,
    Snapshot,
)
from log_engine.replication.raft.messages import (
    EndQuorumEpochRequest,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    RaftMessage,
    RaftRequest,
    RaftResponse,
    VoteRequest,
    VoteResponse,
)
from log_engine.replication.raft.storage import apply_actions

log = logging.getLogger(__name__)

RAFT_DIR = f"{METADATA_TOPIC}-{METADATA_PARTITION}"
"""The Raft log's directory under the data dir (``<log.dirs>/__cluster_metadata-0``)."""
_LOCK_FILE = ".lock"


def _lock_directory(directory: Path) -> int:
    """An exclusive ``flock`` on ``directory/.lock``: one process per Raft log."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / _LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise LogDirLockedError(
            f"{directory} is in use by another process (is this node already running?)"
        ) from None
    return fd


class QuorumFailedError(RaftError):
    """A step failed half way (its writes, or the core itself): the node must restart."""


class LoggingListener:
    """The listener until a state machine is plugged in: logs leader changes only."""

    def handle_commit(self, entries: tuple[Entry, ...], end_offset: int) -> None:
        log.debug("quorum: committed up to %d (%d data entries)", end_offset, len(entries))

    def handle_load_snapshot(self, snapshot: Snapshot) -> None:
        log.info("quorum: loaded snapshot %s", snapshot.snapshot_id)

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        pass


@dataclass(slots=True)
class _Waiting:
    """An inbound request waiting for the core's answer."""

    request: RaftRequest
    future: asyncio.Future[RaftResponse]

    def answered_by(self, response: RaftMessage) -> bool:
        request = self.request
        if isinstance(request, FetchRequest) and isinstance(response, FetchResponse):
            return request.fetch_offset == response.fetch_offset
        if isinstance(request, FetchSnapshotRequest) and isinstance(
            response, FetchSnapshotResponse
        ):
            return (request.snapshot_id, request.position) == (
                response.snapshot_id,
                response.position,
            )
        if isinstance(request, VoteRequest) and isinstance(response, VoteResponse):
            return request.pre_vote == response.pre_vote
        return True


@dataclass(slots=True)
class _AppendWaiter:
    end_offset: int  # committed once the high watermark reaches this
    epoch: int
    future: asyncio.Future[int]


class ControllerQuorum:
    """This node's member of the controller quorum (a voter, or an observer).

    ``await start()`` opens ``<log_dir>/__cluster_metadata-0`` and starts the timer;
    ``await append(payloads)`` (leader only) returns the first entry's offset once
    every entry is committed, or raises ``NotLeaderError`` (not the leader, or
    leadership lost before the commit: the entries may or may not commit later);
    ``await create_snapshot(end_offset, payload)`` stores a state-machine image
    and cuts the log below it; :meth:`describe` is DescribeQuorum's answer (leader
    only); :attr:`leader` is who leads which epoch as this node knows it.
    """

    def __init__(
        self,
        cluster: ClusterConfig,
        log_dir: Path,
        listener: RaftListener | None = None,
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.cluster = cluster
        self.directory = log_dir / RAFT_DIR
        self.config: RaftConfig = cluster.raft_config()
        self.listener: RaftListener = listener or LoggingListener()
        self._rng = rng or random.Random()
        self._storage: FileRaftStorage | None = None
        self._lock_fd: int | None = None
        self._node: RaftNode | None = None
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._timer: asyncio.Task[None] | None = None
        self._transport: PeerTransport | None = None
        self._awaiting: dict[tuple[int, type], collections.deque[_Waiting]] = {}
        self._appends: list[_AppendWaiter] = []
        self._pending_steps: set[asyncio.Task[None]] = set()
        self.high_watermark = 0
        """End offset of what this node knows is committed (its listener has it all)."""
        self.leader = LeaderAndEpoch(None, 0)
        self._failure: asyncio.Future[None] | None = None
        """Fails when a step broke (a disk write, a broken invariant): the node must stop,
        its memory is ahead of its disk. ``run_broker`` waits on it."""

    # ---- lifecycle ----------------------------------------------------------------

    @property
    def failure(self) -> asyncio.Future[None]:
        """Completes with :class:`QuorumFailedError` if a step broke (see :meth:`start`)."""
        if self._failure is None:
            raise RuntimeError("the quorum is not started")
        return self._failure

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._failure = loop.create_future()
        self._lock_fd = _lock_directory(self.directory)
        self._storage = await loop.run_in_executor(None, FileRaftStorage, self.directory)
        durable = self._storage.load()
        self._node = RaftNode(self.config, durable, self._now_ms(), self._rng)
        addresses = {
            v.node_id: (v.host, v.port) for v in self.cluster.voters if v.node_id != self.node_id
        }
        self._transport = PeerTransport(
            addresses,
            self.cluster.cluster_id,
            self.node_id,
            self.config.request_timeout_ms,
            self.config.fetch_max_bytes,
            self._deliver,
            self._peer_refused,
            self.cluster.controller_client,
        )
        log.info(
            "quorum: node %d starts as %s (epoch %d, log end %d, voters %s)",
            self.node_id,
            "voter" if self.config.is_voter else "observer",
            durable.election.epoch,
            self._node.log.end_offset,
            ",".join(str(v) for v in self.cluster.voters),
        )
        await self._step(lambda now: self.node.start())
        self._timer = loop.create_task(self._run_timer())

    async def stop(self) -> None:
        """Stop; a leader first resigns (EndQuorumEpoch to the voters, most caught up
        first), so a controlled shutdown hands over without waiting for a timeout."""
        if self._node is not None and self.leader.leader_id == self.node_id:
            with contextlib.suppress(RaftError):
                await self.resign()
                assert self._transport is not None
                await self._transport.drain(self.config.request_timeout_ms / 1000)
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
        for task in list(self._pending_steps):
            task.cancel()
        await asyncio.gather(*self._pending_steps, return_exceptions=True)
        if self._transport is not None:
            await self._transport.close()
        async with self._lock:
            for waiter in self._appends:
                if not waiter.future.done():
                    waiter.future.set_exception(NotLeaderError("the quorum is stopping"))
            self._appends.clear()
            if self._storage is not None:
                try:
                    self._storage.close()
                except OSError as exc:  # a failed disk: what is not synced is lost anyway
                    log.error("quorum: closing %s failed: %s", self.directory, exc)
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = None

    # ---- what the state machine calls ----------------------------------------------

    @property
    def node(self) -> RaftNode:
        if self._node is None:
            raise RuntimeError("the quorum is not started")
        return self._node

    @property
    def node_id(self) -> int:
        return self.cluster.node_id

    async def append(self, payloads: list[bytes]) -> int:
        """Append data entries as the leader; returns the first offset once all are committed."""
        if not payloads:
            raise ValueError("nothing to append")
        waiter: _AppendWaiter | None = None

        def call(now_ms: int) -> Output:
            nonlocal waiter
            first, out = self.node.append(payloads, now_ms)
            future = asyncio.get_running_loop().create_future()
            waiter = _AppendWaiter(first + len(payloads), self.node.epoch, future)
            self._appends.append(waiter)
            return out

        await self._step(call)
        assert waiter is not None
        await waiter.future
        return waiter.end_offset - len(payloads)

    async def create_snapshot(self, end_offset: int, payload: bytes) -> None:
        """Store the state machine's image of everything below ``end_offset`` (applied
        and committed); the log is cut below it, lagging followers fetch it."""
        await self._step(lambda now: self.node.create_snapshot(end_offset, payload))

    async def resign(self) -> None:
        """Leave leadership (EndQuorumEpoch), e.g. before a controlled shutdown."""
        await self._step(lambda now: self.node.resign(now))

    def describe(self) -> QuorumStatus:
        """The leader's view of the quorum (``NotLeaderError`` on any other node)."""
        return self.node.describe_quorum()

    def monotonic_to_wall_ms(self, monotonic_ms: int) -> int:
        """A time of the core's clock as Unix milliseconds (for DescribeQuorum)."""
        return int(time.time() * 1000) - (self._now_ms() - monotonic_ms)

    # ---- what the controller listener calls ----------------------------------------

    async def handle_request(self, request: RaftRequest) -> RaftResponse:
        """Run an inbound request through the core and return its answer.

        ``TimeoutError`` when the core does not answer in time (it ignores some
        stale requests): the caller drops the connection, a lost message.
        """
        if isinstance(request, EndQuorumEpochRequest):
            log.info("quorum: leader %d resigns epoch %d", request.sender, request.epoch)
        key = (request.sender, RESPONSE_TYPES[type(request)])
        waiting = _Waiting(request, asyncio.get_running_loop().create_future())
        queue = self._awaiting.setdefault(key, collections.deque())
        queue.append(waiting)
        try:
            await self._step(lambda now: self.node.handle(request, now))
            wait_ms = getattr(request, "max_wait_ms", 0) + self.config.request_timeout_ms
            async with asyncio.timeout(wait_ms / 1000):
                return await waiting.future
        finally:
            with contextlib.suppress(ValueError):
                queue.remove(waiting)

    # ---- the loop ---------------------------------------------------------------------

    def _deliver(self, response: RaftResponse) -> None:
        """An answer to one of our requests (from the transport)."""
        task = asyncio.get_running_loop().create_task(
            self._step(lambda now: self.node.handle(response, now))
        )
        self._pending_steps.add(task)
        task.add_done_callback(self._step_done)

    def _peer_refused(self, peer: int) -> None:
        """A voter's address refused a connection (from the transport): tell the core."""
        task = asyncio.get_running_loop().create_task(
            self._step(lambda now: self.node.peer_refused(peer, now))
        )
        self._pending_steps.add(task)
        task.add_done_callback(self._step_done)

    def refused_voters(self, within_ms: int) -> set[int]:
        """Voters whose controller listener refused a connection in the last ``within_ms``
        and that have not answered since (evidence that their process is gone)."""
        if self._transport is None:
            return set()
        return self._transport.refused_peers(within_ms / 1000)

    def _step_done(self, task: asyncio.Task[None]) -> None:
        self._pending_steps.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("quorum step failed", exc_info=task.exception())

    async def _run_timer(self) -> None:
        while True:
            delay_ms = self.node.next_deadline_ms() - self._now_ms()
            if delay_ms > 0:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay_ms / 1000):
                        await self._wake.wait()
                if self.node.next_deadline_ms() > self._now_ms():
                    continue  # woken early: the deadline may have moved
            await self._step(lambda now: self.node.tick(now))

    async def _step(self, call: Callable[[int], Output]) -> None:
        async with self._lock:
            if self.failure.done():
                raise QuorumFailedError("the quorum stopped after an earlier failure")
            try:
                out = call(self._now_ms())
            except RaftError:
                raise  # refused before any change (not the leader, a bad snapshot offset)
            except Exception as exc:
                self._fail(exc)
                raise
            if out.persist:
                await self._persist(out)
            for message in out.messages:
                self._send(message)
            for event in out.events:
                self._on_event(event)
        self._wake.set()

    async def _persist(self, out: Output) -> None:
        """Apply and fsync ``out.persist`` in a worker thread. A cancellation (a stop)
        waits for the write to finish first: the lock is never released while a
        thread still writes, and the core's memory never runs ahead of a write that
        is still going on. A failed write stops the node (:attr:`failure`)."""
        assert self._storage is not None
        write = asyncio.get_running_loop().run_in_executor(
            None, apply_actions, self._storage, out.persist
        )
        cancelled = False
        while not write.done():
            try:
                await asyncio.shield(write)
            except asyncio.CancelledError:
                cancelled = True
            except Exception:
                break
        error = write.exception()
        if error is not None:
            self._fail(error)
            raise error
        if cancelled:
            raise asyncio.CancelledError

    def _fail(self, exc: BaseException) -> None:
        if not self.failure.done():
            log.critical("quorum: node %d must stop: %r", self.node_id, exc, exc_info=exc)
            self.failure.set_exception(QuorumFailedError(f"quorum step failed: {exc!r}"))
            self.failure.exception()  # retrieved: run_broker reports it

    def _send(self, message: RaftMessage) -> None:
        if type(message) in RESPONSE_TYPES:  # a request (the table maps requests to answers)
            assert self._transport is not None
            self._transport.send(message)  # type: ignore[arg-type]
            return
        queue = self._awaiting.get((message.receiver, type(message)))
        if queue:
            # the request this answers (a peer whose old connection died may have two
            # of a kind waiting: a Fetch answer goes to the Fetch at its offset)
            ranked = sorted(queue, key=lambda w: not w.answered_by(message))
            for waiting in ranked:
                queue.remove(waiting)
                if not waiting.future.done():
                    waiting.future.set_result(message)  # type: ignore[arg-type]
                    return
        log.debug("quorum: no request waits for %s", message)

    def _on_event(self, event: CommitEvent | LoadSnapshotEvent | LeaderChangeEvent) -> None:
        if isinstance(event, CommitEvent):
            self.high_watermark = max(self.high_watermark, event.end_offset)
            self.listener.handle_commit(event.entries, event.end_offset)
            for waiter in [w for w in self._appends if w.end_offset <= event.end_offset]:
                self._appends.remove(waiter)
                if not waiter.future.done():
                    waiter.future.set_result(waiter.end_offset)
        elif isinstance(event, LoadSnapshotEvent):
            self.high_watermark = max(self.high_watermark, event.snapshot.snapshot_id.offset)
            self.listener.handle_load_snapshot(event.snapshot)
        else:
            if event.leader != self.leader:
                log.info(
                    "quorum: epoch %d, leader %s",
                    event.leader.epoch,
                    "unknown" if event.leader.leader_id is None else event.leader.leader_id,
                )
            self.leader = event.leader
            self.listener.handle_leader_change(event.leader)
            lost = event.leader.epoch != self.node.epoch or event.leader.leader_id != self.node_id
            for waiter in [w for w in self._appends if lost or w.epoch != event.leader.epoch]:
                self._appends.remove(waiter)
                if not waiter.future.done():
                    waiter.future.set_exception(
                        NotLeaderError(
                            f"leadership of epoch {waiter.epoch} ended before offset "
                            f"{waiter.end_offset - 1} committed"
                        )
                    )

    def _now_ms(self) -> int:
        return int(asyncio.get_running_loop().time() * 1000)
