"""A broker process whose partition states come from its parent, for replication tests.

``python -m harness.replica_node KEY=VALUE ...`` runs a real :class:`Broker`
(broker properties as arguments) and speaks JSON lines with the process that
started it, which plays the controller until issue 17's controller exists:

* stdin ``{"type": "apply", "states": [...], "brokers": [...]}``: call
  ``broker.replicas.apply`` (contract 2);
* stdout ``{"type": "alter_isr", "id": n, "state": {...}, "new_isr": [...]}``:
  the leader's ISR change (contract 3), answered on stdin by
  ``{"type": "alter_reply", "id": n, "state": {...}}`` or ``..., "error": code}``;
* stdout ``{"type": "ready", "port": p}`` once the broker listens.

Logs go to stderr. SIGTERM stops the broker cleanly; SIGKILL is a crash.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from dataclasses import asdict
from typing import Any

from log_engine.broker.broker import Broker
from log_engine.broker.config import BrokerConfig
from log_engine.metadata.types import BrokerEndpoint, BrokerInfo, PartitionState


def state_to_json(state: PartitionState) -> dict[str, Any]:
    out = asdict(state)
    out["topic_id"] = state.topic_id.hex()
    return out


def state_from_json(data: dict[str, Any]) -> PartitionState:
    return PartitionState(
        topic=data["topic"],
        partition=data["partition"],
        leader=data["leader"],
        leader_epoch=data["leader_epoch"],
        partition_epoch=data["partition_epoch"],
        replicas=tuple(data["replicas"]),
        isr=tuple(data["isr"]),
        topic_id=bytes.fromhex(data.get("topic_id", "00" * 16)),
    )


def broker_to_json(info: BrokerInfo) -> dict[str, Any]:
    return asdict(info)


def broker_from_json(data: dict[str, Any]) -> BrokerInfo:
    return BrokerInfo(
        broker_id=data["broker_id"],
        epoch=data["epoch"],
        endpoints=tuple(BrokerEndpoint(**e) for e in data["endpoints"]),
        fenced=data["fenced"],
        rack=data.get("rack"),
    )


class ParentController:
    """The AlterPartitionSender of this process: asks the parent over stdout/stdin."""

    def __init__(self) -> None:
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}

    async def alter_isr(
        self, state: PartitionState, new_isr: tuple[int, ...]
    ) -> PartitionState | int:
        self._next_id += 1
        future = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        send(
            {
                "type": "alter_isr",
                "id": self._next_id,
                "state": state_to_json(state),
                "new_isr": list(new_isr),
            }
        )
        reply = await future
        if reply.get("state") is not None:
            return state_from_json(reply["state"])
        return int(reply["error"])

    def answer(self, message: dict[str, Any]) -> None:
        future = self._pending.pop(message["id"], None)
        if future is not None and not future.done():
            future.set_result(message)


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


async def serve(props: dict[str, str]) -> None:
    broker = Broker(BrokerConfig.from_properties(props))
    controller = ParentController()
    broker.replicas.sender = controller
    await broker.start()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    send({"type": "ready", "port": broker.server.port})

    async def read_commands() -> None:
        while line := await reader.readline():
            message = json.loads(line)
            if message["type"] == "apply":
                broker.replicas.apply(
                    [state_from_json(s) for s in message["states"]],
                    {b["broker_id"]: broker_from_json(b) for b in message["brokers"]},
                )
            elif message["type"] == "alter_reply":
                controller.answer(message)
        stop.set()  # the parent went away

    commands = loop.create_task(read_commands())
    try:
        await stop.wait()
    finally:
        commands.cancel()
        await broker.stop()


def main(argv: list[str]) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    props = dict(arg.split("=", 1) for arg in argv)
    asyncio.run(serve(props))


if __name__ == "__main__":
    main(sys.argv[1:])
