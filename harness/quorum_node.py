"""A clustered broker process for tests, with a test-only window on its quorum.

``python -m harness.quorum_node --debug-port N --override key=value ...`` runs the
same :class:`~log_engine.broker.broker.Broker` as ``sluice broker`` (same config
parsing, same quorum, same listeners), with a state machine that records every
committed entry, plus a loopback-only line protocol on ``--debug-port`` (JSON in,
JSON out, one line each) that tests use until the controller's metadata records
exist:

- ``{"op": "append", "payloads": ["<hex>", ...]}`` -> ``{"ok": true, "offset": N}``
  once committed, or ``{"ok": false, "error": "..."}`` (e.g. not the leader);
- ``{"op": "snapshot"}`` -> a snapshot of every committed entry at the high
  watermark (``{"ok": true, "end_offset": N}``); the log is cut below it;
- ``{"op": "state"}`` -> node id, leader, epoch, high watermark and the committed
  entries as ``[offset, "<hex>"]`` pairs.

Test-only: nothing in ``log_engine`` or the ``sluice`` command exposes this.
:class:`QuorumNode` starts and kills one such process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness.broker_process import free_port

_START_TIMEOUT_S = 30.0


class RecordingListener:
    """A state machine that keeps every committed data entry (offset, payload)."""

    def __init__(self) -> None:
        self.committed: list[tuple[int, bytes]] = []
        self.snapshot_end = 0

    def handle_commit(self, entries: Any, end_offset: int) -> None:
        self.committed.extend((entry.offset, entry.payload) for entry in entries)

    def handle_load_snapshot(self, snapshot: Any) -> None:
        self.committed = [(offset, bytes.fromhex(p)) for offset, p in json.loads(snapshot.payload)]
        self.snapshot_end = snapshot.snapshot_id.offset

    def image(self) -> bytes:
        """The snapshot payload of everything committed so far."""
        return json.dumps([[offset, payload.hex()] for offset, payload in self.committed]).encode()

    def handle_leader_change(self, leader: Any) -> None:
        pass


async def _serve(overrides: dict[str, str], debug_port: int) -> None:
    from log_engine.broker.broker import Broker
    from log_engine.broker.config import BrokerConfig

    listener = RecordingListener()
    broker = Broker(BrokerConfig.from_properties(overrides), listener)
    await broker.start()
    quorum = broker.quorum
    assert quorum is not None, "harness.quorum_node needs controller.quorum.voters"

    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        if request["op"] == "append":
            payloads = [bytes.fromhex(p) for p in request["payloads"]]
            try:
                offset = await quorum.append(payloads)
            except Exception as exc:  # reported to the test, which decides
                return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            return {"ok": True, "offset": offset}
        if request["op"] == "snapshot":
            end = quorum.high_watermark
            try:
                await quorum.create_snapshot(end, listener.image())
            except Exception as exc:
                return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            return {"ok": True, "end_offset": end}
        return {
            "ok": True,
            "node_id": quorum.node_id,
            "leader": quorum.leader.leader_id,
            "epoch": quorum.leader.epoch,
            "high_watermark": quorum.high_watermark,
            "committed": [[offset, payload.hex()] for offset, payload in listener.committed],
            "snapshot_end": listener.snapshot_end,
        }

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while line := await reader.readline():
                response = await answer(json.loads(line))
                writer.write(json.dumps(response).encode() + b"\n")
                await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(client, "127.0.0.1", debug_port, limit=64 << 20)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        waits: list[asyncio.Future[Any]] = [stopping, quorum.failure]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        server.close()
        await broker.stop()
    if quorum.failure.done():
        quorum.failure.result()  # exits non-zero, as sluice broker does


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--debug-port", type=int, required=True)
    parser.add_argument("--override", action="append", default=[])
    args = parser.parse_args()
    import logging

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)-5s %(name)s: %(message)s"
    )
    overrides = dict(pair.split("=", 1) for pair in args.override)
    asyncio.run(_serve(overrides, args.debug_port))


class QuorumNode:
    """One node of a test cluster, as a process: combined (broker, controller) by default,
    a broker-only observer with ``roles="broker"`` and no controller port."""

    def __init__(
        self,
        node_id: int,
        data_dir: Path,
        voters: str,
        controller_port: int | None,
        roles: str = "broker,controller",
    ) -> None:
        self.node_id = node_id
        self.data_dir = data_dir
        self.broker_port = free_port()
        self.controller_port = controller_port
        self.debug_port = free_port()
        self.overrides = {
            "node.id": str(node_id),
            "process.roles": roles,
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.broker_port}"
            + (f",CONTROLLER://127.0.0.1:{controller_port}" if controller_port else ""),
            "log.dirs": str(data_dir),
            "controller.quorum.election.timeout.ms": "500",
            "controller.quorum.fetch.timeout.ms": "1000",
            "controller.quorum.request.timeout.ms": "1000",
            "group.initial.rebalance.delay.ms": "0",
            "offsets.topic.num.partitions": "1",
        }
        self.log_path = data_dir.parent / f"{data_dir.name}-node.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> QuorumNode:
        return self.spawn().wait_ready()

    def spawn(self) -> QuorumNode:
        """Start the process without waiting (see :meth:`wait_ready`)."""
        args = [sys.executable, "-m", "harness.quorum_node", "--debug-port", str(self.debug_port)]
        for key, value in self.overrides.items():
            args += ["--override", f"{key}={value}"]
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child's lifetime
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        return self

    def wait_ready(self) -> QuorumNode:
        """Wait until the node serves its debug socket (its quorum has started)."""
        assert self.process is not None
        deadline = time.monotonic() + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"node {self.node_id} exited early:\n{self.log_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.debug_port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"node {self.node_id} did not start:\n{self.log_text()}")

    def kill(self, sig: int = signal.SIGKILL) -> int:
        if self.process is None:
            return 0
        if self.process.poll() is None:
            os.kill(self.process.pid, sig)
        code = self.process.wait(timeout=30)
        self.process = None
        return code

    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def ask(self, request: dict[str, Any], timeout_s: float = 10.0) -> dict[str, Any]:
        with socket.create_connection(("127.0.0.1", self.debug_port), timeout=timeout_s) as sock:
            sock.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError(f"node {self.node_id} closed the debug connection")
                data += chunk
        result: dict[str, Any] = json.loads(data)
        return result

    def state(self) -> dict[str, Any]:
        return self.ask({"op": "state"})

    def append(self, payloads: list[bytes]) -> dict[str, Any]:
        return self.ask({"op": "append", "payloads": [p.hex() for p in payloads]})

    def snapshot(self) -> dict[str, Any]:
        return self.ask({"op": "snapshot"})

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def start_cluster(base: Path, size: int = 3) -> list[QuorumNode]:
    """``size`` combined nodes on free ports, all started (a leader comes later)."""
    ports = [free_port() for _ in range(size)]
    voters = ",".join(f"{i + 1}@127.0.0.1:{port}" for i, port in enumerate(ports))
    nodes = [QuorumNode(i + 1, base / f"node{i + 1}", voters, ports[i]) for i in range(size)]
    try:
        for node in nodes:
            node.spawn()
        for node in nodes:
            node.wait_ready()
    except BaseException:
        for node in nodes:
            node.kill()
        raise
    return nodes


if __name__ == "__main__":
    main()
