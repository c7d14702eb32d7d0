"""A local cluster of ``sluice broker`` processes for tests: ``LocalCluster``.

Writes one properties file per node (combined broker and controller voters, on
free loopback ports, as ``configs/cluster/`` does on fixed ones) and starts each
as ``sluice broker <file>``, a real process that tests kill (-9), stop and
restart. ``wait_registered`` waits until every running broker is unfenced in
the Metadata a broker answers.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.broker_process import free_port
from harness.wait import wait_for

_STOP_TIMEOUT_S = 30


class ClusterNode:
    """One node's process, properties file and ports."""

    def __init__(self, node_id: int, directory: Path, broker_port: int, controller_port: int):
        self.node_id = node_id
        self.directory = directory
        self.broker_port = broker_port
        self.controller_port = controller_port
        self.listener_ports: dict[str, int] = {}
        """Ports of the extra client listeners (``LocalCluster(extra_listeners=...)``)."""
        self.metrics_port: int | None = None
        """The ``metrics.listeners`` port (``LocalCluster(metrics=True)``), else None."""
        self.properties = directory / f"node{node_id}.properties"
        self.log_path = directory / f"node{node_id}.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.broker_port}"

    def bootstrap_on(self, listener: str) -> str:
        """``host:port`` of an extra client listener."""
        return f"127.0.0.1:{self.listener_ports[listener.upper()]}"

    @property
    def metrics_url(self) -> str:
        assert self.metrics_port is not None, "LocalCluster(metrics=True) serves metrics"
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    def start(self) -> None:
        out = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child
        self.process = subprocess.Popen(
            [sys.executable, "-m", "connect_worker.cli", "broker", str(self.properties)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        out.close()

    def kill(self, sig: int = signal.SIGKILL) -> int:
        if self.process is None:
            return 0
        if self.process.poll() is None:
            os.kill(self.process.pid, sig)
        code = self.process.wait(timeout=_STOP_TIMEOUT_S)
        self.process = None
        return code

    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class LocalCluster:
    """Combined nodes (broker + controller voter), and optionally broker-only nodes,
    under ``directory``."""

    def __init__(
        self,
        directory: Path,
        size: int = 3,
        brokers_only: int = 0,
        *,
        metrics: bool = False,
        extra_listeners: tuple[str, ...] = (),
        **overrides: str,
    ) -> None:
        """``size`` combined nodes (ids 1..size), then ``brokers_only`` nodes with
        ``process.roles=broker`` (observers of the quorum); ``metrics``: each node serves
        ``GET /metrics`` on a free port (``ClusterNode.metrics_url``); ``extra_listeners``:
        client listener names bound beside PLAINTEXT on free ports
        (``ClusterNode.bootstrap_on``; their protocols come from the overrides'
        ``listener.security.protocol.map``, else Kafka's default map)."""
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.nodes = {
            n: ClusterNode(n, directory, free_port(), free_port())
            for n in range(1, size + brokers_only + 1)
        }
        voters = ",".join(
            f"{n}@127.0.0.1:{node.controller_port}"
            for n, node in self.nodes.items()
            if n <= size
        )
        for n, node in self.nodes.items():
            listeners = f"PLAINTEXT://127.0.0.1:{node.broker_port}"
            for name in extra_listeners:
                node.listener_ports[name.upper()] = free_port()
                listeners += f",{name}://127.0.0.1:{node.listener_ports[name.upper()]}"
            if n <= size:
                listeners += f",CONTROLLER://127.0.0.1:{node.controller_port}"
            props = {
                "process.roles": "broker,controller" if n <= size else "broker",
                "node.id": str(n),
                "controller.quorum.voters": voters,
                "controller.listener.names": "CONTROLLER",
                "listeners": listeners,
                "inter.broker.listener.name": "PLAINTEXT",
                "log.dirs": str(directory / f"data{n}"),
                "group.initial.rebalance.delay.ms": "0",
                "offsets.topic.num.partitions": "1",
                **overrides,
            }
            if metrics:
                node.metrics_port = free_port()
                props["metrics.listeners"] = f"http://127.0.0.1:{node.metrics_port}"
            node.properties.write_text("".join(f"{k}={v}\n" for k, v in props.items()))

    @property
    def bootstrap(self) -> str:
        return ",".join(node.bootstrap for node in self.nodes.values() if node.is_alive())

    def start(self) -> LocalCluster:
        for node in self.nodes.values():
            node.start()
        return self

    def stop(self) -> None:
        for node in self.nodes.values():
            node.kill(signal.SIGTERM)

    @contextlib.contextmanager
    def running(self) -> Iterator[LocalCluster]:
        """Start every node and wait until all are registered and unfenced; kill -9 every
        node at the end. If they do not get there, or the body fails, the nodes' logs
        are printed (pytest shows them with the failure)."""
        self.start()
        try:
            self.wait_registered()
            yield self
        except BaseException:
            print(self.logs())
            raise
        finally:
            for node in self.nodes.values():
                node.kill(signal.SIGKILL)

    def metadata(self, topic: str | None = None, node_id: int | None = None) -> dict[str, Any]:
        """``kcat -L -J`` against one node (``node_id``) or any running broker."""
        bootstrap = self.bootstrap if node_id is None else self.nodes[node_id].bootstrap
        args = ["kcat", "-L", "-J", "-b", bootstrap, "-m", "5"]
        if topic is not None:
            args += ["-t", topic]
        result = subprocess.run(args, capture_output=True, text=True, timeout=30, check=True)
        return dict(json.loads(result.stdout))

    def live_broker_ids(self, node_id: int | None = None) -> list[int]:
        """The brokers a node's Metadata lists (unfenced ones)."""
        return sorted(int(b["id"]) for b in self.metadata(node_id=node_id)["brokers"])

    def wait_registered(self, ids: list[int] | None = None, timeout_s: float = 60) -> None:
        """Wait until every running node's Metadata lists exactly ``ids`` (default: every
        running node) as brokers."""
        running = [n for n, v in self.nodes.items() if v.is_alive()]
        wanted = sorted(ids if ids is not None else running)
        wait_for(
            lambda: all(self.live_broker_ids(n) == wanted for n in running),
            f"brokers {wanted} registered and unfenced on nodes {running}",
            timeout_s,
            retry_on=(subprocess.SubprocessError, ValueError, KeyError),
        )

    def logs(self) -> str:
        return "\n".join(f"--- node {n}\n{v.log_text()[-4000:]}" for n, v in self.nodes.items())
