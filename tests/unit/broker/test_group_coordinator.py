"""The group coordinator's join/sync barrier, heartbeats, leave and expiry."""

from __future__ import annotations

import asyncio
import dataclasses

from log_engine.broker.group import GroupState
from log_engine.broker.group_coordinator import GroupCoordinator, JoinRequest
from log_engine.errors import ErrorCode


def coordinator(initial_delay_ms: int = 0) -> GroupCoordinator:
    return GroupCoordinator(
        initial_rebalance_delay_ms=initial_delay_ms,
        min_session_timeout_ms=100,
        max_session_timeout_ms=60_000,
    )


def join_request(
    member_id: str = "", protocols: list[str] | None = None, **kw: object
) -> JoinRequest:
    fields: dict[str, object] = {
        "group_id": "g",
        "member_id": member_id,
        "group_instance_id": None,
        "client_id": "c",
        "client_host": "/127.0.0.1",
        "session_timeout_ms": 10_000,
        "rebalance_timeout_ms": 2_000,
        "protocol_type": "consumer",
        "protocols": [(p, p.encode()) for p in (protocols or ["range"])],
        "require_known_member_id": False,
    }
    fields.update(kw)
    return JoinRequest(**fields)  # type: ignore[arg-type]


async def test_single_member_joins_syncs_and_heartbeats() -> None:
    coord = coordinator()
    joined = await coord.join(join_request())
    assert joined.error_code == 0
    assert joined.generation_id == 1
    assert joined.leader == joined.member_id
    assert [m[0] for m in joined.members] == [joined.member_id]
    error, assignment = await coord.sync("g", 1, joined.member_id, {joined.member_id: b"a1"})
    assert (error, assignment) == (0, b"a1")
    assert coord.groups["g"].state is GroupState.STABLE
    assert coord.heartbeat("g", 1, joined.member_id) == 0
    assert coord.heartbeat("g", 0, joined.member_id) == ErrorCode.ILLEGAL_GENERATION
    assert coord.heartbeat("g", 1, "nobody") == ErrorCode.UNKNOWN_MEMBER_ID


async def test_second_member_triggers_rebalance_both_get_new_generation() -> None:
    coord = coordinator()
    first = await coord.join(join_request())
    await coord.sync("g", 1, first.member_id, {first.member_id: b"all"})
    second_task = asyncio.create_task(coord.join(join_request()))
    await asyncio.sleep(0.01)
    assert coord.heartbeat("g", 1, first.member_id) == ErrorCode.REBALANCE_IN_PROGRESS
    rejoined = await coord.join(join_request(first.member_id))
    second = await second_task
    assert rejoined.generation_id == second.generation_id == 2
    assert rejoined.leader == first.member_id  # the leader is kept
    assert len(rejoined.members) == 2 and second.members == ()
    follower_sync = asyncio.create_task(coord.sync("g", 2, second.member_id, {}))
    await asyncio.sleep(0.01)
    assert not follower_sync.done()  # waits for the leader's assignment
    plan = {first.member_id: b"p0", second.member_id: b"p1"}
    assert await coord.sync("g", 2, first.member_id, plan) == (0, b"p0")
    assert await follower_sync == (0, b"p1")


async def test_member_that_does_not_rejoin_is_dropped_after_rebalance_timeout() -> None:
    coord = coordinator()
    first = await coord.join(join_request(rebalance_timeout_ms=200))
    await coord.sync("g", 1, first.member_id, {})
    second = await coord.join(join_request(rebalance_timeout_ms=200))
    assert second.generation_id == 2
    assert list(coord.groups["g"].members) == [second.member_id]
    assert second.leader == second.member_id


async def test_leave_triggers_rebalance_and_last_leave_empties_group() -> None:
    coord = coordinator()
    joined = await coord.join(join_request())
    assert coord.leave("g", [joined.member_id]) == [0]
    assert coord.groups["g"].state is GroupState.EMPTY
    assert coord.leave("g", [joined.member_id]) == [ErrorCode.UNKNOWN_MEMBER_ID]


async def test_v4_join_needs_known_member_id() -> None:
    coord = coordinator()
    first = await coord.join(join_request(require_known_member_id=True))
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED and first.member_id
    second = await coord.join(join_request(first.member_id, require_known_member_id=True))
    assert second.error_code == 0 and second.member_id == first.member_id


async def test_bad_joins_are_refused() -> None:
    coord = coordinator()
    assert (await coord.join(join_request(session_timeout_ms=1))).error_code == (
        ErrorCode.INVALID_SESSION_TIMEOUT
    )
    await coord.join(join_request(protocols=["range"]))
    other = await coord.join(join_request(protocols=["roundrobin"]))
    assert other.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


async def test_session_expiry_removes_silent_member() -> None:
    coord = coordinator()
    coord.start()
    try:
        joined = await coord.join(join_request(session_timeout_ms=100))
        await coord.sync("g", 1, joined.member_id, {})
        for _ in range(50):
            if not coord.groups["g"].members:
                break
            await asyncio.sleep(0.1)
        assert coord.groups["g"].state is GroupState.EMPTY
    finally:
        await coord.stop()


async def test_initial_rebalance_delay_gathers_members_in_one_generation() -> None:
    coord = coordinator(initial_delay_ms=300)
    results = await asyncio.gather(coord.join(join_request()), coord.join(join_request()))
    assert {r.generation_id for r in results} == {1}
    assert sum(1 for r in results if r.members) == 1  # one leader



def connect_join(
    member_id: str = "", protocols: list[tuple[str, bytes]] | None = None
) -> JoinRequest:
    """A Connect worker's JoinGroup: protocol type ``connect``, binary metadata per sub-protocol."""
    request = join_request(member_id, protocol_type="connect")
    return dataclasses.replace(request, protocols=protocols or [("sessioned", b"\x00\x02")])


async def test_connect_groups_pick_the_common_subprotocol_and_relay_metadata_verbatim() -> None:
    """One worker offering only ``default`` downgrades the group; metadata is opaque bytes."""
    coord = coordinator()
    offers = [("sessioned", b"\x00\x02m2"), ("compatible", b"\x00\x01m1"), ("default", b"\x00m0")]
    joined = await coord.join(connect_join(protocols=offers))
    assert joined.protocol_name == "sessioned"
    assert joined.members[0][2] == b"\x00\x02m2"
    await coord.sync("g", 1, joined.member_id, {joined.member_id: b"\x00\x02\x00\x00"})
    old_task = asyncio.create_task(coord.join(connect_join(protocols=[("default", b"old")])))
    await asyncio.sleep(0.01)
    rejoined = await coord.join(connect_join(joined.member_id, offers))
    old = await old_task
    assert rejoined.protocol_name == old.protocol_name == "default"
    metadata = {member_id: meta for member_id, _, meta in rejoined.members}
    assert metadata == {joined.member_id: b"\x00m0", old.member_id: b"old"}
    consumer = await coord.join(join_request(protocols=["range"]))
    assert consumer.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


async def test_a_stable_member_rejoining_with_new_metadata_starts_a_rebalance() -> None:
    """Cooperative Connect: after revoking, a worker rejoins with its smaller assignment in
    its metadata, and the leader must get to hand the revoked work out."""
    coord = coordinator()
    leader = await coord.join(connect_join())
    await coord.sync("g", 1, leader.member_id, {})
    follower_task = asyncio.create_task(coord.join(connect_join()))
    await asyncio.sleep(0.01)
    leader = await coord.join(connect_join(leader.member_id))
    follower = await follower_task
    synced = asyncio.create_task(coord.sync("g", 2, follower.member_id, {}))
    await coord.sync("g", 2, leader.member_id, {})
    await synced
    assert coord.groups["g"].state is GroupState.STABLE
    fewer = [("sessioned", b"after revocation")]
    task = asyncio.create_task(coord.join(connect_join(follower.member_id, fewer)))
    await asyncio.sleep(0.01)
    assert coord.groups["g"].state is GroupState.PREPARING_REBALANCE
    assert coord.heartbeat("g", 2, leader.member_id) == ErrorCode.REBALANCE_IN_PROGRESS
    again = await coord.join(connect_join(leader.member_id))
    assert again.generation_id == 3
    metadata = {m: meta for m, _, meta in again.members}
    assert metadata[follower.member_id] == b"after revocation"
    await task
