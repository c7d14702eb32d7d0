"""``refuses_connections``: only a refused dial is evidence that a peer's process is gone."""

from __future__ import annotations

import asyncio
import socket

from log_engine.client.config import ClientConfig
from log_engine.replication.quorum.transport import refuses_connections


def _config(timeout_ms: int = 300) -> ClientConfig:
    return ClientConfig.from_mapping(
        {
            "bootstrap.servers": ["127.0.0.1:1"],
            "client.id": "probe-test",
            "request.timeout.ms": timeout_ms,
            "socket.connection.setup.timeout.ms": timeout_ms,
        }
    )


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_port_nobody_listens_on_refuses() -> None:
    assert await refuses_connections("127.0.0.1", _closed_port(), _config())


async def test_a_listener_that_never_answers_is_not_a_refusal() -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        assert not await refuses_connections("127.0.0.1", port, _config())


async def test_accepted_then_reset_is_tried_again_until_the_listener_is_gone() -> None:
    # a dying process: its listener still accepts once, then nothing listens there
    accepted = 0
    server: asyncio.Server | None = None

    def reset(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        writer.close()
        assert server is not None
        server.close()

    server = await asyncio.start_server(reset, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    assert await refuses_connections("127.0.0.1", port, _config())
    assert accepted == 1
