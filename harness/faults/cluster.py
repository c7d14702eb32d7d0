"""A cluster of real ``sluice broker`` processes on loopback ports, for tests and benchmarks.

:class:`Cluster` writes one properties file per node into its root folder
(``node1.properties`` ...: ``process.roles=broker,controller``, ``node.id``,
``controller.quorum.voters``, a PLAINTEXT and a CONTROLLER listener on free
ports, ``log.dirs``), as a user writes ``configs/cluster/``, and runs each node as
``sluice broker nodeN.properties``. Any key can be overridden for all nodes
(``Cluster(root, **{"broker.session.timeout.ms": "2000"})``).

Each :class:`ClusterNode` starts, stops (SIGTERM), crashes (SIGKILL), pauses
(SIGSTOP), resumes (SIGCONT) and restarts its process; its output is appended to
``nodeN.log`` across restarts, and :meth:`Cluster.logs` gathers every node's for a
failing test's message.

What the cluster thinks is read the way an operator reads it: DescribeQuorum on a
controller listener (what ``sluice cluster status --json`` prints) for the quorum
leader, which is the active controller, and Metadata on a broker listener for
brokers, partition leaders and ISRs.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.broker_process import free_port
from harness.wait import wait_for
from log_engine.client import errors as client_errors
from log_engine.client.cluster import ClusterMetadata, PartitionInfo
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.client.quorum import QuorumDescription, describe_quorum
from log_engine.protocol import ApiKey

_START_TIMEOUT_S = 60.0
_ASK_TIMEOUT_MS = 2_000


class ClusterNode:
    """One ``sluice broker`` process of a :class:`Cluster` (a broker and a controller voter)."""

    def __init__(self, node_id: int, root: Path, properties: Mapping[str, str]) -> None:
        self.node_id = node_id
        self.properties = dict(properties)
        self.properties_path = root / f"node{node_id}.properties"
        self.log_path = root / f"node{node_id}.log"
        self.data_dir = Path(self.properties["log.dirs"])
        self.process: subprocess.Popen[bytes] | None = None
        self.paused = False
        self.write_properties()

    @property
    def broker_port(self) -> int:
        return _port_of(self.properties["listeners"], "PLAINTEXT")

    @property
    def controller_port(self) -> int:
        return _port_of(self.properties["listeners"], "CONTROLLER")

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.broker_port}"

    def write_properties(self) -> None:
        lines = [f"# node {self.node_id} of a test cluster (harness/faults/cluster.py)"]
        lines += [f"{key}={value}" for key, value in self.properties.items()]
        self.properties_path.write_text("\n".join(lines) + "\n")

    def spawn(self) -> ClusterNode:
        """Start the process without waiting for its listeners (see :meth:`wait_listening`)."""
        if self.is_alive():
            raise RuntimeError(f"node {self.node_id} is already running")
        args = [sys.executable, "-m", "connect_worker.cli", "broker", str(self.properties_path)]
        with open(self.log_path, "ab") as log:
            log.write(f"==== {time.strftime('%H:%M:%S')} start: {' '.join(args)}\n".encode())
            log.flush()
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        self.paused = False
        return self

    def wait_listening(self, timeout_s: float = _START_TIMEOUT_S) -> ClusterNode:
        """Wait until both listeners accept connections (the process has started)."""
        deadline = time.monotonic() + timeout_s
        for port in (self.controller_port, self.broker_port):
            while True:
                if not self.is_alive():
                    raise RuntimeError(f"node {self.node_id} exited early:\n{self.log_tail()}")
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                        break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(
                            f"node {self.node_id} did not listen on {port} within "
                            f"{timeout_s}s:\n{self.log_tail()}"
                        ) from None
                    time.sleep(0.05)
        return self

    def start(self) -> ClusterNode:
        return self.spawn().wait_listening()

    def send_signal(self, sig: int) -> None:
        if self.process is None or self.process.poll() is not None:
            raise RuntimeError(f"node {self.node_id} is not running")
        os.kill(self.process.pid, sig)

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 30.0) -> int:
        """Stop the process (SIGTERM: clean shutdown; SIGKILL: crash) and return its exit code.

        A paused process is resumed first so that it can act on SIGTERM; one that
        has not exited within ``timeout_s`` is killed.
        """
        if self.process is None:
            return 0
        if self.process.poll() is None:
            if self.paused and sig != signal.SIGKILL:
                os.kill(self.process.pid, signal.SIGCONT)
            os.kill(self.process.pid, sig)
        try:
            code = self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(timeout=timeout_s)
        self._note(f"exited with {code} after signal {signal.Signals(sig).name}")
        self.process = None
        self.paused = False
        return code

    def kill(self) -> int:
        """kill -9: a crash, nothing flushed."""
        return self.stop(signal.SIGKILL)

    def pause(self) -> None:
        """SIGSTOP: the process keeps its sockets but answers nothing (a long GC pause)."""
        self.send_signal(signal.SIGSTOP)
        self.paused = True
        self._note("paused (SIGSTOP)")

    def resume(self) -> None:
        self.send_signal(signal.SIGCONT)
        self.paused = False
        self._note("resumed (SIGCONT)")

    def restart(self) -> ClusterNode:
        self.stop()
        return self.start()

    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def is_serving(self) -> bool:
        """Running and not paused."""
        return self.is_alive() and not self.paused

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 80) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def _note(self, what: str) -> None:
        with open(self.log_path, "ab") as log:
            log.write(f"==== {time.strftime('%H:%M:%S')} {what}\n".encode())


class Cluster:
    """``size`` combined (broker, controller) ``sluice broker`` processes on free ports.

    Overrides apply to every node's properties file. Nothing starts until
    :meth:`start_all`; use it as a context manager to stop every node at the end.
    """

    def __init__(self, root: Path, size: int = 3, **overrides: str) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        controller_ports = [free_port() for _ in range(size)]
        voters = ",".join(f"{i + 1}@127.0.0.1:{port}" for i, port in enumerate(controller_ports))
        self.nodes: dict[int, ClusterNode] = {}
        for i, controller_port in enumerate(controller_ports):
            node_id = i + 1
            properties = {
                "process.roles": "broker,controller",
                "node.id": str(node_id),
                "controller.quorum.voters": voters,
                "controller.listener.names": "CONTROLLER",
                "listeners": f"PLAINTEXT://127.0.0.1:{free_port()},"
                f"CONTROLLER://127.0.0.1:{controller_port}",
                "inter.broker.listener.name": "PLAINTEXT",
                "log.dirs": str(root / f"node{node_id}"),
                "group.initial.rebalance.delay.ms": "0",
                "offsets.topic.num.partitions": "3",
                "offsets.topic.replication.factor": str(min(size, 3)),
                "default.replication.factor": str(min(size, 3)),
                "controller.quorum.election.timeout.ms": "1000",
                "controller.quorum.fetch.timeout.ms": "2000",
                "broker.heartbeat.interval.ms": "500",
                "broker.session.timeout.ms": "3000",
                "replica.lag.time.max.ms": "3000",
                **overrides,
            }
            self.nodes[node_id] = ClusterNode(node_id, root, properties)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop_all()

    def node(self, node_id: int) -> ClusterNode:
        return self.nodes[node_id]

    @property
    def bootstrap(self) -> str:
        """Every broker listener, comma-separated (clients find the live ones)."""
        return ",".join(node.bootstrap for node in self.nodes.values())

    def serving(self) -> list[ClusterNode]:
        return [node for node in self.nodes.values() if node.is_serving()]

    # -- processes -------------------------------------------------------------------

    def start_all(self) -> Cluster:
        """Start every node (together: a quorum needs a majority to elect) and wait
        until the quorum has a leader and every broker is registered and unfenced."""
        try:
            for node in self.nodes.values():
                node.spawn()
            for node in self.nodes.values():
                node.wait_listening()
            self.wait_ready()
        except BaseException:
            self.stop_all()
            raise
        return self

    def stop_all(self, sig: int = signal.SIGTERM) -> dict[int, int]:
        """Stop every node (SIGTERM, a paused one resumed first) and return the exit codes."""
        return {node_id: node.stop(sig) for node_id, node in self.nodes.items()}

    def kill(self, node_id: int) -> None:
        self.nodes[node_id].kill()

    def pause(self, node_id: int) -> None:
        self.nodes[node_id].pause()

    def resume(self, node_id: int) -> None:
        self.nodes[node_id].resume()

    def start(self, node_id: int) -> None:
        self.nodes[node_id].start()

    def restart(self, node_id: int) -> None:
        self.nodes[node_id].restart()

    # -- what the cluster says -------------------------------------------------------

    def quorum(self) -> QuorumDescription | None:
        """DescribeQuorum through the first serving controller that answers, else None."""
        for node in self.serving():
            try:
                return asyncio.run(
                    describe_quorum("127.0.0.1", node.controller_port, timeout_ms=_ASK_TIMEOUT_MS)
                )
            except (client_errors.KafkaError, OSError, TimeoutError):
                continue
        return None

    def active_controller(self) -> int | None:
        """The quorum leader (the active controller), if one serving node names a live one."""
        quorum = self.quorum()
        if quorum is None or quorum.leader_id < 0:
            return None
        leader = self.nodes.get(quorum.leader_id)
        return quorum.leader_id if leader is not None and leader.is_serving() else None

    def metadata(self, node_id: int | None = None) -> ClusterMetadata | None:
        """A Metadata response (all topics) from ``node_id``, else from the first serving
        broker that answers; None if none does."""
        nodes = [self.nodes[node_id]] if node_id is not None else self.serving()
        for node in nodes:
            if not node.is_serving():
                continue
            try:
                return asyncio.run(_metadata("127.0.0.1", node.broker_port))
            except (client_errors.KafkaError, OSError, TimeoutError):
                continue
        return None

    def partition(
        self, topic: str, partition: int, node_id: int | None = None
    ) -> PartitionInfo | None:
        metadata = self.metadata(node_id)
        if metadata is None or topic not in metadata.topics:
            return None
        return metadata.topics[topic].partitions.get(partition)

    def leader_of(self, topic: str, partition: int) -> int | None:
        """The partition's leader as the metadata says, if it is a serving node."""
        info = self.partition(topic, partition)
        if info is None or info.leader not in self.nodes:
            return None
        return info.leader if self.nodes[info.leader].is_serving() else None

    # -- waits -----------------------------------------------------------------------

    def wait_ready(self, timeout_s: float = _START_TIMEOUT_S) -> None:
        """Wait for a quorum leader and for every serving broker to be unfenced."""
        self.wait_for_controller(timeout_s)
        self.wait_brokers(sorted(n.node_id for n in self.serving()), timeout_s)

    def wait_for_controller(self, timeout_s: float = _START_TIMEOUT_S) -> int:
        """Wait until the quorum has a leader among the serving nodes; return its id."""
        leader: int = self._wait(self.active_controller, "a quorum leader", timeout_s)
        return leader

    def wait_brokers(self, broker_ids: list[int], timeout_s: float = _START_TIMEOUT_S) -> None:
        """Wait until every serving node's Metadata lists exactly ``broker_ids`` (fenced
        brokers are not listed)."""

        def listed() -> bool:
            for node in self.serving():
                metadata = self.metadata(node.node_id)
                if metadata is None or sorted(metadata.brokers) != broker_ids:
                    return False
            return True

        self._wait(listed, f"Metadata to list brokers {broker_ids} (unfenced)", timeout_s)

    def wait_for_leader(
        self, topic: str, partition: int, *, not_node: int | None = None,
        timeout_s: float = _START_TIMEOUT_S,
    ) -> int:
        """Wait until a serving node (other than ``not_node``) leads the partition."""

        def leader() -> int | None:
            found = self.leader_of(topic, partition)
            return None if found == not_node else found

        found: int = self._wait(leader, f"a leader of {topic}-{partition}", timeout_s)
        return found

    def wait_for_isr(
        self, topic: str, partitions: int, isr: set[int], timeout_s: float = _START_TIMEOUT_S
    ) -> None:
        """Wait until every partition of ``topic`` has exactly ``isr`` as its ISR, as seen
        by every serving broker."""

        def reached() -> bool:
            for node in self.serving():
                metadata = self.metadata(node.node_id)
                if metadata is None or topic not in metadata.topics:
                    return False
                infos = metadata.topics[topic].partitions
                if len(infos) != partitions:
                    return False
                if any(set(info.isr) != isr for info in infos.values()):
                    return False
            return True

        self._wait(reached, f"ISR {sorted(isr)} on every partition of {topic}", timeout_s)

    def create_topic(
        self, topic: str, partitions: int, replication_factor: int, **configs: str
    ) -> None:
        """CreateTopics through our admin client, then wait until every partition has a
        leader and its full ISR."""
        from log_engine.client import NewTopic, SyncAdmin

        with SyncAdmin({"bootstrap.servers": self.bootstrap}) as admin:
            admin.create_topics([NewTopic(topic, partitions, replication_factor, configs)])
        replicas = set(self.nodes) if replication_factor == len(self.nodes) else None
        if replicas is not None:
            self.wait_for_isr(topic, partitions, replicas)
        for index in range(partitions):
            self.wait_for_leader(topic, index)

    def _wait(self, check: Any, what: str, timeout_s: float) -> Any:
        try:
            return wait_for(check, what, timeout_s)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self.logs(tail=40)}") from None

    def logs(self, tail: int | None = None) -> str:
        """Every node's output (the last ``tail`` lines of each), for a failure message."""
        parts = []
        for node in self.nodes.values():
            text = node.log_text() if tail is None else node.log_tail(tail)
            parts.append(f"---- node {node.node_id} ({node.log_path}) ----\n{text}")
        return "\n".join(parts)


@contextmanager
def running_cluster(root: Path, size: int = 3, **overrides: str) -> Iterator[Cluster]:
    """A started :class:`Cluster`, stopped at the end."""
    cluster = Cluster(root, size, **overrides)
    cluster.start_all()
    try:
        yield cluster
    finally:
        cluster.stop_all()


async def _metadata(host: str, port: int) -> ClusterMetadata:
    config = ClientConfig.from_mapping(
        {"bootstrap.servers": [f"{host}:{port}"], "request.timeout.ms": _ASK_TIMEOUT_MS,
         "socket.connection.setup.timeout.ms": _ASK_TIMEOUT_MS}
    )
    async with asyncio.timeout(2 * _ASK_TIMEOUT_MS / 1000):
        connection = await BrokerConnection.open(host, port, config)
        try:
            body = await connection.send(
                ApiKey.METADATA, {"topics": None, "allow_auto_topic_creation": False}
            )
        finally:
            connection.close()
    return ClusterMetadata.from_response(body)


def _port_of(listeners: str, name: str) -> int:
    for listener in listeners.split(","):
        listener_name, _, address = listener.strip().partition("://")
        if listener_name == name:
            return int(address.rpartition(":")[2])
    raise ValueError(f"no {name} listener in {listeners!r}")
