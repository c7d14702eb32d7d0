"""``ControllerProducerIds``: producer ids from blocks the active controller hands out.

A clustered broker asks for a block with AllocateProducerIds (67) when the one
it has runs out; the controller writes each block to the metadata log
(``ProducerIdsRecord``), so no two brokers, and no restart of one, ever get
the same ids. Without an answer InitProducerId gets the retriable
COORDINATOR_LOAD_IN_PROGRESS (the producer retries).
"""

from __future__ import annotations

import asyncio

from log_engine.broker.cluster.channel import ControllerChannel
from log_engine.broker.cluster.lifecycle import BrokerLifecycle
from log_engine.errors import CoordinatorLoadInProgressError
from log_engine.protocol import ApiKey

ALLOCATE_VERSION = 0
REQUEST_TIMEOUT_MS = 10_000


class ProducerIdsUnavailable(CoordinatorLoadInProgressError):
    """No block of producer ids could be had from the controller (retriable)."""


class ControllerProducerIds:
    """Hands out producer ids from AllocateProducerIds blocks."""

    def __init__(self, channel: ControllerChannel, lifecycle: BrokerLifecycle) -> None:
        self._channel = channel
        self._lifecycle = lifecycle
        self._next = 0
        self._end = 0
        self._lock = asyncio.Lock()

    async def next_id(self) -> int:
        async with self._lock:
            if self._next >= self._end:
                await self._allocate()
            producer_id = self._next
            self._next += 1
            return producer_id

    async def _allocate(self) -> None:
        body = {
            "broker_id": self._lifecycle.broker_id,
            "broker_epoch": self._lifecycle.broker_epoch,
        }
        answer = await self._channel.send(
            ApiKey.ALLOCATE_PRODUCER_IDS, ALLOCATE_VERSION, body, REQUEST_TIMEOUT_MS
        )
        if answer is None or answer["error_code"]:
            code = None if answer is None else answer["error_code"]
            raise ProducerIdsUnavailable(f"no producer id block from the controller ({code})")
        self._next = answer["producer_id_start"]
        self._end = self._next + answer["producer_id_len"]
