"""ControllerQuorum in one process: a one-voter quorum on a real directory, requests
handed to it the way the controller listener does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from log_engine.broker.config import BrokerConfig
from log_engine.replication.quorum import ControllerQuorum
from log_engine.replication.raft import ErrorCode
from log_engine.replication.raft.messages import FetchRequest, FetchResponse


def _quorum(tmp_path: Path) -> ControllerQuorum:
    config = BrokerConfig.from_properties(
        {
            "node.id": "1",
            "process.roles": "broker,controller",
            "controller.quorum.voters": "1@127.0.0.1:9093",
            "controller.listener.names": "CONTROLLER",
            "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
            "log.dirs": str(tmp_path),
        }
    )
    assert config.cluster is not None
    return ControllerQuorum(config.cluster, tmp_path)


async def test_appends_commit_and_survive_a_restart(tmp_path: Path) -> None:
    quorum = _quorum(tmp_path)
    await quorum.start()
    try:
        assert quorum.leader.leader_id == 1
        first = await quorum.append([b"a", b"b"])
        assert quorum.high_watermark == first + 2
    finally:
        await quorum.stop()
    again = _quorum(tmp_path)
    await again.start()
    try:
        assert again.node.log.end_offset >= first + 2  # recovered from disk
        assert again.leader.epoch > quorum.leader.epoch
    finally:
        await again.stop()


async def test_each_answer_goes_to_the_request_it_answers(tmp_path: Path) -> None:
    """An observer's parked Fetch (old connection) and its new Fetch from offset 0: the
    immediate answer at offset 0 reaches the new request, not the older one."""
    quorum = _quorum(tmp_path)
    await quorum.start()
    try:
        epoch, end = quorum.node.epoch, quorum.node.log.end_offset
        parked = asyncio.ensure_future(
            quorum.handle_request(FetchRequest(5, 1, epoch, end, epoch, max_wait_ms=500))
        )
        await asyncio.sleep(0)  # the parked request is registered first
        answer = await quorum.handle_request(FetchRequest(5, 1, epoch, 0, 0))
        assert isinstance(answer, FetchResponse)
        assert (answer.error, answer.fetch_offset) == (ErrorCode.NONE, 0)
        assert answer.entries  # the leader-change entry
        parked.cancel()
    finally:
        await quorum.stop()
