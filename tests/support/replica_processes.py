"""Broker processes (``harness.replica_node``) whose partition states the test decides.

The process-level twin of :mod:`tests.support.replica_cluster`: each node is
a real process that can be killed with SIGKILL or paused with SIGSTOP; the
test is the controller, sending states on each node's stdin and answering
its leader's ISR changes (AlterPartition's epoch checks) from a reader
thread per node.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from harness.broker_process import free_port
from harness.replica_node import broker_to_json, state_from_json, state_to_json
from log_engine.errors import ErrorCode
from log_engine.metadata.types import BrokerEndpoint, BrokerInfo, PartitionState

_HANG_S = 60.0


class ReplicaNode:
    """One broker process and its pipes."""

    def __init__(self, node_id: int, data_dir: Path, overrides: dict[str, str]) -> None:
        self.node_id = node_id
        self.port = free_port()
        self.data_dir = data_dir
        self.overrides = overrides
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir.parent / f"node{node_id}.log"
        self._write_lock = threading.Lock()

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def send(self, message: dict[str, Any]) -> None:
        with self._write_lock:
            if not self.alive:
                return
            assert self.process is not None and self.process.stdin is not None
            try:
                self.process.stdin.write((json.dumps(message) + "\n").encode())
                self.process.stdin.flush()
            except BrokenPipeError:
                pass


class ProcessController:
    """Partition states for broker processes; ISR changes applied as AlterPartition would."""

    def __init__(self, root: Path, count: int = 3, **overrides: str) -> None:
        base = {
            "auto.create.topics.enable": "false",
            "group.initial.rebalance.delay.ms": "0",
            "offsets.topic.num.partitions": "1",
            "replica.fetch.wait.max.ms": "100",
            **overrides,
        }
        self.nodes = {
            n: ReplicaNode(n, root / f"broker{n}", {**base, "node.id": str(n)})
            for n in range(1, count + 1)
        }
        self.states: dict[tuple[str, int], PartitionState] = {}
        self.isolated: set[int] = set()
        """Nodes cut off from the controller: no states reach them, their requests are lost."""
        self._lock = threading.RLock()

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes.values())

    def start(self, node_id: int) -> None:
        node = self.nodes[node_id]
        props = {
            **node.overrides,
            "listeners": f"PLAINTEXT://127.0.0.1:{node.port}",
            "log.dirs": str(node.data_dir),
        }
        log = open(node.log_path, "ab")  # noqa: SIM115 - the child's stderr
        node.process = subprocess.Popen(
            [sys.executable, "-m", "harness.replica_node", *(f"{k}={v}" for k, v in props.items())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        log.close()
        assert node.process.stdout is not None
        ready = node.process.stdout.readline()
        if not ready:
            raise RuntimeError(f"node {node_id} exited:\n{node.log_path.read_text()}")
        assert json.loads(ready)["type"] == "ready"
        threading.Thread(
            target=self._read, args=(node, node.process.stdout), daemon=True
        ).start()
        self.publish()

    def start_all(self) -> None:
        for node_id in self.nodes:
            self.start(node_id)

    def kill(self, node_id: int, sig: int = signal.SIGKILL) -> None:
        node = self.nodes[node_id]
        assert node.process is not None
        os.kill(node.process.pid, sig)
        node.process.wait(timeout=30)
        node.process = None

    def pause(self, node_id: int) -> None:
        """SIGSTOP: the process keeps its sockets but answers nothing."""
        process = self.nodes[node_id].process
        assert process is not None
        os.kill(process.pid, signal.SIGSTOP)

    def resume(self, node_id: int) -> None:
        process = self.nodes[node_id].process
        assert process is not None
        os.kill(process.pid, signal.SIGCONT)

    def stop_all(self) -> None:
        for node in self.nodes.values():
            if node.process is not None:
                os.kill(node.process.pid, signal.SIGCONT)
                node.process.terminate()
                node.process.wait(timeout=30)
                node.process = None

    def infos(self) -> list[BrokerInfo]:
        return [
            BrokerInfo(n.node_id, 1, (BrokerEndpoint("PLAINTEXT", "127.0.0.1", n.port),), False)
            for n in self.nodes.values()
            if n.alive
        ]

    def publish(self) -> None:
        with self._lock:
            message = {
                "type": "apply",
                "states": [state_to_json(s) for s in self.states.values()],
                "brokers": [broker_to_json(b) for b in self.infos()],
            }
            for node in self.nodes.values():
                if node.node_id not in self.isolated:
                    node.send(message)

    def create_topic(self, topic: str, leader: int = 1) -> None:
        replicas = tuple(sorted(self.nodes))
        with self._lock:
            self.states[(topic, 0)] = PartitionState(topic, 0, leader, 1, 1, replicas, replicas)
        self.publish()

    def elect(self, topic: str, leader: int, isr: tuple[int, ...]) -> None:
        with self._lock:
            state = self.states[(topic, 0)]
            self.states[(topic, 0)] = replace(
                state,
                leader=leader,
                leader_epoch=state.leader_epoch + 1,
                partition_epoch=state.partition_epoch + 1,
                isr=isr,
            )
        self.publish()

    def isr(self, topic: str) -> set[int]:
        with self._lock:
            return set(self.states[(topic, 0)].isr)

    def wait_for_isr(self, topic: str, isr: set[int]) -> None:
        deadline = time.monotonic() + _HANG_S  # a hang guard, not a timing assertion
        while self.isr(topic) != isr:
            assert time.monotonic() < deadline, f"ISR stayed {self.isr(topic)}"
            time.sleep(0.05)

    def _read(self, node: ReplicaNode, stdout: IO[bytes]) -> None:
        for line in stdout:
            message = json.loads(line)
            if message["type"] == "alter_isr" and node.node_id not in self.isolated:
                node.send(self._alter(message))

    def _alter(self, message: dict[str, Any]) -> dict[str, Any]:
        asked = state_from_json(message["state"])
        reply: dict[str, Any] = {"type": "alter_reply", "id": message["id"]}
        with self._lock:
            current = self.states[(asked.topic, asked.partition)]
            if asked.leader_epoch != current.leader_epoch:
                return {**reply, "error": int(ErrorCode.FENCED_LEADER_EPOCH)}
            if asked.partition_epoch != current.partition_epoch:
                return {**reply, "error": 108}  # INVALID_UPDATE_VERSION
            new = replace(
                current,
                isr=tuple(message["new_isr"]),
                partition_epoch=current.partition_epoch + 1,
            )
            self.states[(asked.topic, asked.partition)] = new
        self.publish()
        return {**reply, "state": state_to_json(new)}
