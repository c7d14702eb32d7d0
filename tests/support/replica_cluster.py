"""Three (or more) in-process brokers whose partition states a test decides.

Until the controller (issue 17's ``metadata`` branch) is merged, the test is
the controller: :class:`TestController` holds each partition's
:class:`PartitionState`, applies it to every running broker's replica
manager, and is the brokers' :class:`AlterPartitionSender`, accepting an ISR
change when the leader names the current partition and leader epochs (as
AlterPartition does) and publishing the result to every broker. The brokers
are real: real logs, real sockets, real follower fetchers.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from log_engine.broker.broker import Broker
from log_engine.broker.config import BrokerConfig
from log_engine.errors import ErrorCode
from log_engine.metadata.types import BrokerEndpoint, BrokerInfo, PartitionState

FENCED_LEADER_EPOCH = int(ErrorCode.FENCED_LEADER_EPOCH)
INVALID_UPDATE_VERSION = 108
_HANG_S = 60


class TestController:
    """Partition states for in-process brokers; ISR changes applied as AlterPartition would."""

    __test__ = False

    def __init__(self, data_dir: Path, count: int = 3, **overrides: str) -> None:
        self.data_dir = data_dir
        self.overrides = {
            "auto.create.topics.enable": "false",
            "group.initial.rebalance.delay.ms": "0",
            "offsets.topic.num.partitions": "1",
            "replica.fetch.wait.max.ms": "100",
            **overrides,
        }
        self.ports: dict[int, int] = dict.fromkeys(range(1, count + 1), 0)
        self.brokers: dict[int, Broker] = {}
        self.states: dict[tuple[str, int], PartitionState] = {}
        self.isr_changes = asyncio.Queue[PartitionState]()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.ports[n]}" for n in sorted(self.brokers))

    async def start(self, node_id: int) -> Broker:
        """Start broker ``node_id`` (again, on its old port and data after a stop)."""
        props = {
            **self.overrides,
            "node.id": str(node_id),
            "listeners": f"PLAINTEXT://127.0.0.1:{self.ports[node_id]}",
            "log.dirs": str(self.data_dir / f"broker{node_id}"),
        }
        broker = Broker(BrokerConfig.from_properties(props))
        broker.replicas.sender = self
        await broker.start()
        self.ports[node_id] = broker.server.port
        self.brokers[node_id] = broker
        self.publish()
        return broker

    async def start_all(self) -> None:
        for node_id in self.ports:
            await self.start(node_id)

    async def stop(self, node_id: int) -> None:
        broker = self.brokers.pop(node_id)
        await broker.stop()

    async def stop_all(self) -> None:
        for node_id in list(self.brokers):
            await self.stop(node_id)

    def infos(self) -> dict[int, BrokerInfo]:
        return {
            node_id: BrokerInfo(
                node_id, 1, (BrokerEndpoint("PLAINTEXT", "127.0.0.1", port),), fenced=False
            )
            for node_id, port in self.ports.items()
            if node_id in self.brokers
        }

    def publish(self) -> None:
        """Apply every state to every running broker (what the metadata image would do)."""
        infos = self.infos()
        for broker in self.brokers.values():
            broker.replicas.apply(list(self.states.values()), infos)

    def create_topic(self, topic: str, partitions: int = 1, leader: int = 1) -> None:
        replicas = tuple(sorted(self.ports))
        for index in range(partitions):
            self.states[(topic, index)] = PartitionState(
                topic, index, leader, 1, 1, replicas, replicas
            )
        self.publish()

    def elect(self, topic: str, index: int, leader: int, isr: tuple[int, ...]) -> PartitionState:
        """A leader change: leader epoch + 1, as the controller does when a leader dies."""
        state = self.states[(topic, index)]
        new = replace(
            state,
            leader=leader,
            leader_epoch=state.leader_epoch + 1,
            partition_epoch=state.partition_epoch + 1,
            isr=isr,
        )
        self.states[(topic, index)] = new
        self.publish()
        return new

    async def alter_isr(
        self, state: PartitionState, new_isr: tuple[int, ...]
    ) -> PartitionState | int:
        """AlterPartition's checks: same leader epoch and partition epoch as the controller's."""
        current = self.states[(state.topic, state.partition)]
        if state.leader_epoch != current.leader_epoch:
            return FENCED_LEADER_EPOCH
        if state.partition_epoch != current.partition_epoch:
            return INVALID_UPDATE_VERSION
        new = replace(current, isr=new_isr, partition_epoch=current.partition_epoch + 1)
        self.states[(state.topic, state.partition)] = new
        self.publish()
        self.isr_changes.put_nowait(new)
        return new

    async def wait_for_isr(self, topic: str, index: int, isr: set[int]) -> None:
        async with asyncio.timeout(_HANG_S):  # a hang guard, not a timing assertion
            while set(self.states[(topic, index)].isr) != isr:
                await asyncio.sleep(0.05)

    async def wait_replicated(self, topic: str, index: int, nodes: list[int]) -> None:
        """Until every node in ``nodes`` has the same log end."""
        async with asyncio.timeout(_HANG_S):
            await self._same_log_end(topic, index, nodes)

    async def _same_log_end(self, topic: str, index: int, nodes: list[int]) -> None:
        while True:
            parts = [self.brokers[n].topics.partition(topic, index) for n in nodes]
            ends = {p.log.log_end_offset if p is not None else -1 for p in parts}
            if len(ends) == 1 and -1 not in ends:
                return
            await asyncio.sleep(0.05)


def log_bytes(broker: Broker, topic: str, index: int) -> bytes:
    """Every stored byte of a partition's log, batch by batch, from the log start."""
    partition = broker.topics.partition(topic, index)
    assert partition is not None
    log = partition.log
    out = bytearray()
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        result = log.read(offset, 1 << 20)
        if not result.slices:
            break
        out += result.read_bytes()
        offset = result.next_offset
    return bytes(out)
