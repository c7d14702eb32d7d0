"""Closing a consumer ends a poll that is waiting for data.

A group consumer subscribed to a topic that does not exist yet has nothing to
fetch; its poll waits up to its timeout. ``close()`` from the same loop must
end that poll at once with ClientClosedError: a Connect worker stopping such
a sink task otherwise waits the whole poll timeout, then abandons the task's
thread ("did not stop within 5.0s").
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from harness.broker_process import BrokerProcess
from log_engine.client import Consumer
from log_engine.client.errors import ClientClosedError


def test_close_ends_a_poll_waiting_for_data(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", **{"auto.create.topics.enable": "false"}).start()
    try:

        async def scenario() -> BaseException | None:
            consumer = Consumer(
                {"bootstrap.servers": broker.bootstrap, "group.id": "waits-for-data"}
            )
            consumer.subscribe(["not-there-yet"])
            poll = asyncio.ensure_future(consumer.poll(600_000))
            await asyncio.sleep(2)  # joined, nothing to fetch: the poll waits
            assert not poll.done()
            await consumer.close()
            done, _ = await asyncio.wait([poll], timeout=30)
            assert done, "poll still running 30 s after close()"
            return poll.exception()

        error = asyncio.run(scenario())
    finally:
        broker.stop()
    assert isinstance(error, ClientClosedError), error
