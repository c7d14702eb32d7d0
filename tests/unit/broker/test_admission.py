"""Connection counts and the request memory pool."""

from __future__ import annotations

import asyncio

import pytest

from log_engine.broker.admission import ConnectionQuota, RequestMemoryPool
from log_engine.broker.config import BrokerConfig, BrokerConfigError


def test_quota_counts_per_ip_and_in_all() -> None:
    quota = ConnectionQuota(max_total=4, max_per_ip=2, per_ip={"10.0.0.9": 3})
    assert [quota.admit("10.0.0.1") for _ in range(3)] == [True, True, False]
    assert [quota.admit("10.0.0.9") for _ in range(3)] == [True, True, False]
    assert quota.open_connections == 4
    quota.release("10.0.0.1")
    assert quota.admit("10.0.0.9")  # its override allows a third one
    assert not quota.admit("10.0.0.2")  # max.connections reached
    quota.release("10.0.0.9")
    assert quota.admit("10.0.0.2")


async def test_pool_waits_until_memory_is_released() -> None:
    pool = RequestMemoryPool(100)
    await pool.acquire(80)
    waiting = asyncio.create_task(pool.acquire(40))
    await asyncio.sleep(0)
    assert not waiting.done() and pool.used_bytes == 80
    pool.release(80)
    await asyncio.wait_for(waiting, 5)
    assert pool.used_bytes == 40


async def test_pool_grants_anything_when_empty_and_is_first_come_first_served() -> None:
    pool = RequestMemoryPool(100)
    await pool.acquire(500)  # larger than the pool: still granted when nothing is held
    first = asyncio.create_task(pool.acquire(60))
    await asyncio.sleep(0)
    second = asyncio.create_task(pool.acquire(10))
    await asyncio.sleep(0)
    assert not second.done()  # queued behind the first
    pool.release(500)
    await asyncio.wait_for(asyncio.gather(first, second), 5)
    assert pool.used_bytes == 70


async def test_a_cancelled_waiter_passes_its_turn_on() -> None:
    pool = RequestMemoryPool(100)
    await pool.acquire(100)
    cancelled = asyncio.create_task(pool.acquire(50))
    after = asyncio.create_task(pool.acquire(50))
    await asyncio.sleep(0)
    cancelled.cancel()
    pool.release(100)
    await asyncio.wait_for(after, 5)
    assert pool.used_bytes == 50


def test_unbounded_pool() -> None:
    pool = RequestMemoryPool(-1)
    asyncio.run(pool.acquire(10**12))
    assert pool.used_bytes == 10**12


def test_config_keys() -> None:
    config = BrokerConfig.from_properties(
        {
            "queued.max.request.bytes": "-1",
            "max.connections": "10",
            "max.connections.per.ip": "3",
            "max.connections.per.ip.overrides": "127.0.0.2:7,[::1]:2",
            "socket.request.body.timeout.ms": "1500",
        }
    )
    assert config.connection_limits_per_ip == {"127.0.0.2": 7, "::1": 2}
    assert config.socket_request_body_timeout_ms == 1500
    for bad in ({"queued.max.request.bytes": "0"}, {"max.connections.per.ip.overrides": "x"}):
        with pytest.raises(BrokerConfigError):
            BrokerConfig.from_properties(bad)
