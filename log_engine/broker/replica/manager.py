"""The replica manager: controller decisions in, leader and follower roles out.

``apply(states, brokers)`` is the one entry point the metadata side calls
(contract 2 of issue 17). For each :class:`PartitionState` naming this broker
among its replicas it creates the partition's log if needed and then:

* leader: stops fetching it, starts a new leader epoch at the log end
  (written to the leader-epoch checkpoint), serves produce and fetches;
* follower: stops serving produce (acks=all waiters get
  NOT_LEADER_OR_FOLLOWER) and hands the partition to the fetcher of its
  leader, which truncates with OffsetForLeaderEpoch before fetching;
* same leader epoch, newer partition epoch: only the ISR or replicas changed.

A state whose ``leader_epoch`` is older than the partition's is ignored
(leader-epoch fencing), as is one that repeats the current partition epoch.
A broker that never gets a state keeps the single-node behaviour.

The manager also runs the ISR check every ``replica.lag.time.max.ms / 2``
and, after follower fetches, asks the controller (through the
:class:`AlterPartitionSender`) to shrink or expand the ISR.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from log_engine.broker.replica.alter_partition import AlterPartitionSender, NoController
from log_engine.broker.replica.fetcher import ReplicaFetcher
from log_engine.broker.replica.hw_checkpoint import HighWatermarkCheckpoint
from log_engine.metadata.types import NO_LEADER, BrokerEndpoint, BrokerInfo, PartitionState

if TYPE_CHECKING:
    from log_engine.broker.broker import Broker
    from log_engine.broker.partition import Partition

log = logging.getLogger(__name__)

REFUSED_ISR_BACKOFF_S = 1.0
"""How long a leader waits after the controller refused an ISR change before asking again."""


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class ReplicaManager:
    """This broker's leader and follower roles for every replicated partition."""

    def __init__(self, broker: Broker, sender: AlterPartitionSender | None = None) -> None:
        self._broker = broker
        self.node_id = broker.node_id
        self.sender: AlterPartitionSender = sender or NoController()
        self.brokers: dict[int, BrokerInfo] = {}
        """The cluster's brokers as last applied (Metadata answers from them)."""
        self.states: dict[tuple[str, int], PartitionState] = {}
        """Every partition state applied, hosted here or not (Metadata answers from them)."""
        self._fetchers: dict[tuple[int, int], ReplicaFetcher] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._isr_check: asyncio.Task[None] | None = None
        self._hw_checkpoint = HighWatermarkCheckpoint(broker.config.log_dir)
        self._saved_hws: dict[tuple[str, int], int] | None = None
        self._checkpointing: asyncio.Task[None] | None = None
        self.fetcher_security: dict[str, str] = {}
        """Client keys the fetchers connect to leaders' inter-broker listeners with
        (``security/inter_broker.py``; empty: plaintext)."""
        self.role_listeners: list[Callable[[Partition], None]] = []
        """Called with each local partition after ``apply`` gave it a state (the group
        coordinator loads and unloads ``__consumer_offsets`` partitions from them)."""

    @property
    def clustered(self) -> bool:
        """Whether brokers or partition states were applied (else: the single-node broker)."""
        return bool(self.states or self.brokers)

    def apply(self, states: Iterable[PartitionState], brokers: Mapping[int, BrokerInfo]) -> None:
        """Make this broker leader or follower of each partition per the controller's states.

        Call on the broker's event loop, after ``broker.start()``. Synchronous:
        role changes happen before it returns; truncation and fetching follow
        in the fetcher tasks.
        """
        self.brokers = dict(brokers)
        if self._saved_hws is None:
            self._saved_hws = self._hw_checkpoint.read()
        now_ms = _now_ms()
        for state in states:
            key = (state.topic, state.partition)
            known = self.states.get(key)
            if known is not None and state.leader_epoch < known.leader_epoch:
                log.info("ignoring %s: leader epoch older than %d", state, known.leader_epoch)
                continue
            self.states[key] = state
            if self.node_id in state.replicas:
                self._apply_one(state, now_ms)
            else:
                self._drop(state)
            self._tell_listeners(state)
        self._restart_moved_fetchers()
        if self._isr_check is None:
            loop = asyncio.get_running_loop()
            self._isr_check = loop.create_task(self._check_isr_loop())
            self._checkpointing = loop.create_task(self._checkpoint_loop())

    def _tell_listeners(self, state: PartitionState) -> None:
        if not self.role_listeners:
            return
        partition = self._broker.topics.partition(state.topic, state.partition)
        if partition is not None:
            for listener in self.role_listeners:
                listener(partition)

    def _apply_one(self, state: PartitionState, now_ms: int) -> None:
        partition = self._broker.topics.ensure_partition(state.topic, state.partition)
        current = partition.state
        if current is None and self._saved_hws:
            partition.restore_high_watermark(self._saved_hws.get((state.topic, state.partition), 0))
        if current is not None and current.leader_epoch > state.leader_epoch:
            return
        if current is not None and current.leader_epoch == state.leader_epoch:
            if state.partition_epoch <= current.partition_epoch:
                return
            if state.leader == current.leader:
                if partition.leader_state is not None:
                    self._update_leader(partition, state, now_ms)
                else:
                    partition.state = state
                return
        if state.leader == self.node_id:
            self._unfollow(state.topic, state.partition)
            partition.become_leader(state, self.node_id, now_ms)
            log.info(
                "%s-%d: leader in epoch %d from offset %d, ISR %s",
                state.topic,
                state.partition,
                state.leader_epoch,
                partition.log.log_end_offset,
                state.isr,
            )
            return
        partition.become_follower(state)
        self._unfollow(state.topic, state.partition)
        if state.leader != NO_LEADER:
            self._follow(partition, state)

    def _update_leader(self, partition: Partition, state: PartitionState, now_ms: int) -> None:
        """A new ISR or replica set in this leader's epoch; ISR shrinks and expands are
        counted whether this leader asked for them or the controller made them (fencing)."""
        before = partition.isr_size
        partition.update_leader(state, now_ms)
        if self._broker.metrics is not None:
            self._broker.metrics.isr_changed(before, partition.isr_size)

    def _drop(self, state: PartitionState) -> None:
        """No longer a replica here: stop fetching and serving (the log stays on disk)."""
        self._unfollow(state.topic, state.partition)
        partition = self._broker.topics.partition(state.topic, state.partition)
        if partition is not None and (partition.state is None or partition.state != state):
            partition.become_follower(state)

    def forget(self, states: Iterable[PartitionState]) -> None:
        """Partitions whose topic was deleted: stop fetching them and drop their states."""
        for state in states:
            self._unfollow(state.topic, state.partition)
            self.states.pop((state.topic, state.partition), None)
        if self._fetchers:
            self._restart_moved_fetchers()

    def hosts_elsewhere(self, topic: str, index: int) -> bool:
        """Whether the controller knows this partition but places no replica here."""
        state = self.states.get((topic, index))
        return state is not None and self.node_id not in state.replicas

    # -- followers -------------------------------------------------------------------------

    def _follow(self, partition: Partition, state: PartitionState) -> None:
        info = self.brokers.get(state.leader)
        listener = self._broker.config.listener.name
        endpoint = info.endpoint(listener) if info is not None else None
        if endpoint is None:
            log.warning(
                "%s-%d: leader %d has no %s endpoint; not fetching",
                state.topic,
                state.partition,
                state.leader,
                listener,
            )
            return
        config = self._broker.config
        slot = hash((state.topic, state.partition)) % config.num_replica_fetchers
        fetcher = self._fetchers.get((state.leader, slot))
        if fetcher is None:
            fetcher = self._new_fetcher(state.leader, endpoint)
            self._fetchers[(state.leader, slot)] = fetcher
        fetcher.add(partition, state.leader_epoch)

    def _new_fetcher(self, leader_id: int, endpoint: BrokerEndpoint) -> ReplicaFetcher:
        config = self._broker.config
        return ReplicaFetcher(
            self.node_id,
            leader_id,
            endpoint,
            fetch_wait_max_ms=config.replica_fetch_wait_max_ms,
            fetch_max_bytes=config.replica_fetch_max_bytes,
            metrics=self._broker.metrics,
            security=self.fetcher_security,
        )

    def _unfollow(self, topic: str, index: int) -> None:
        for fetcher in self._fetchers.values():
            fetcher.remove(topic, index)

    def _restart_moved_fetchers(self) -> None:
        """Stop fetchers that follow nothing or whose leader's address changed."""
        listener = self._broker.config.listener.name
        for key, fetcher in list(self._fetchers.items()):
            info = self.brokers.get(fetcher.leader_id)
            endpoint = info.endpoint(listener) if info is not None else None
            if len(fetcher) == 0 or endpoint != fetcher.endpoint:
                del self._fetchers[key]
                self._track(asyncio.get_running_loop().create_task(fetcher.stop()))
                if len(fetcher) and endpoint is not None:
                    moved = self._new_fetcher(fetcher.leader_id, endpoint)
                    self._fetchers[key] = moved
                    for entry in fetcher.entries():
                        moved.add(entry.partition, entry.leader_epoch)

    # -- ISR changes (leader) --------------------------------------------------------------

    def follower_fetched(self, partition: Partition) -> None:
        """After a follower's fetch: ask to add followers that caught up to the ISR."""
        leader = partition.leader_state
        if leader is None or leader.pending_isr is not None:
            return
        joining = leader.catching_up(partition.high_watermark)
        if joining:
            self._alter(partition, tuple(leader.isr) + tuple(sorted(joining)))

    async def _check_isr_loop(self) -> None:
        max_lag_ms = self._broker.config.replica_lag_time_max_ms
        while True:
            await asyncio.sleep(max_lag_ms / 2000)
            self.check_isr(_now_ms())

    def check_isr(self, now_ms: int) -> None:
        """Ask to remove ISR followers not caught up within replica.lag.time.max.ms."""
        max_lag_ms = self._broker.config.replica_lag_time_max_ms
        for topic, index in list(self.states):
            partition = self._broker.topics.partition(topic, index)
            leader = partition.leader_state if partition is not None else None
            if partition is None or leader is None or leader.pending_isr is not None:
                continue
            lagging = leader.lagging(now_ms, max_lag_ms, partition.log.log_end_offset)
            if lagging:
                log.info("%s-%d: followers %s are out of sync", topic, index, lagging)
                self._alter(partition, tuple(r for r in leader.isr if r not in lagging))

    def _alter(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        leader = partition.leader_state
        assert leader is not None
        leader.pending_isr = new_isr
        self._track(asyncio.get_running_loop().create_task(self._send_alter(partition, new_isr)))

    def _track(self, task: asyncio.Task[None]) -> None:
        """Keep a background task referenced until it ends (and cancel it at stop)."""
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _send_alter(self, partition: Partition, new_isr: tuple[int, ...]) -> None:
        leader = partition.leader_state
        assert leader is not None
        state = leader.state
        try:
            result = await self.sender.alter_isr(state, new_isr)
        except Exception:
            log.exception("%s-%d: AlterPartition failed", state.topic, state.partition)
            result = -1
        if partition.leader_state is not leader:
            return  # leadership moved while the request was out
        if isinstance(result, PartitionState):
            current = partition.state
            if (
                current is not None
                and result.leader_epoch == current.leader_epoch
                and result.partition_epoch > current.partition_epoch
            ):
                self.states[(result.topic, result.partition)] = result
                self._update_leader(partition, result, _now_ms())
                log.info(
                    "%s-%d: ISR is now %s (partition epoch %d)",
                    result.topic,
                    result.partition,
                    result.isr,
                    result.partition_epoch,
                )
            leader.pending_isr = None
            return
        log.info(
            "%s-%d: controller refused ISR %s with error %d; asking again in %.1f s",
            state.topic,
            state.partition,
            new_isr,
            result,
            REFUSED_ISR_BACKOFF_S,
        )
        # Each follower fetch would ask again at once (the nemesis saw 2,000 refusals a
        # minute): the pending change holds off new ones until the back-off ends.
        await asyncio.sleep(REFUSED_ISR_BACKOFF_S)
        leader.pending_isr = None

    # -- high watermark checkpoint --------------------------------------------------------

    def high_watermarks(self) -> dict[tuple[str, int], int]:
        """The HW of every replicated partition on this broker."""
        out = {}
        for topic, index in self.states:
            partition = self._broker.topics.partition(topic, index)
            if partition is not None and partition.state is not None:
                out[(topic, index)] = partition.high_watermark
        return out

    async def _checkpoint_loop(self) -> None:
        interval_s = self._broker.config.replica_high_watermark_checkpoint_interval_ms / 1000
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(interval_s)
            try:
                await loop.run_in_executor(None, self._hw_checkpoint.write, self.high_watermarks())
            except OSError as exc:
                log.warning("cannot write %s: %s", self._hw_checkpoint.path, exc)

    async def stop(self) -> None:
        """Stop fetchers, the ISR check and pending ISR changes; save the high watermarks."""
        tasks = [
            t for t in (self._isr_check, self._checkpointing, *self._background) if t is not None
        ]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._isr_check = None
        for fetcher in list(self._fetchers.values()):
            await fetcher.stop()
        self._fetchers.clear()
        if self.states:
            try:
                self._hw_checkpoint.write(self.high_watermarks())
            except OSError as exc:
                log.warning("cannot write %s: %s", self._hw_checkpoint.path, exc)
