"""``BrokerLifecycle``: a clustered broker's registration, heartbeats and shutdown (KIP-631).

On start the broker registers with the active controller (BrokerRegistration:
its id, a new incarnation id, its advertised client listeners, each with its
security protocol id, the cluster id)
and gets a broker epoch; it starts fenced. It then heartbeats every
``broker.heartbeat.interval.ms`` with the offset of the last metadata record
it applied; the controller unfences it once that offset reaches its
registration, and :attr:`unfenced` is set: only then does the broker accept
client connections (Kafka's rule: a broker serves once it has caught up with
the metadata log). A registration refused as a duplicate (the previous
process of this id still has a session) is retried until that session
expires; a heartbeat answered STALE_BROKER_EPOCH registers again.

``shutdown()`` is the controlled shutdown of a SIGTERM: heartbeats with
``want_shut_down`` until the controller answers ``should_shut_down`` (its
leaderships and ISR seats have moved), bounded by ``timeout_ms``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable
from typing import Any

from log_engine.broker.cluster.channel import ControllerChannel
from log_engine.errors import ErrorCode
from log_engine.metadata.records import Endpoint
from log_engine.protocol import ApiKey

log = logging.getLogger(__name__)

REGISTRATION_VERSION = 3
HEARTBEAT_VERSION = 1
_RETRY_S = 0.2


class BrokerLifecycle:
    """Registers this broker with the active controller and keeps its session alive."""

    def __init__(
        self,
        broker_id: int,
        cluster_id: str,
        endpoints: Callable[[], tuple[Endpoint, ...]],
        channel: ControllerChannel,
        metadata_offset: Callable[[], int],
        heartbeat_interval_ms: int,
        rack: str | None = None,
    ) -> None:
        self.broker_id = broker_id
        self._cluster_id = cluster_id
        self._endpoints = endpoints
        self._channel = channel
        self._metadata_offset = metadata_offset
        self._interval_s = heartbeat_interval_ms / 1000
        self._timeout_ms = max(heartbeat_interval_ms, 1000)
        self._rack = rack
        self.incarnation_id = uuid.uuid4()
        self.broker_epoch = -1
        self.unfenced = asyncio.Event()
        self.registered = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._shutting_down = False

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await self._register()
            while True:
                await asyncio.sleep(0 if not self.unfenced.is_set() else self._interval_s)
                answer = await self._heartbeat(want_shut_down=False)
                if answer is None:
                    continue
                code = answer["error_code"]
                if code == ErrorCode.STALE_BROKER_EPOCH:
                    log.warning("broker %d: epoch %d is stale; registering again",
                                self.broker_id, self.broker_epoch)
                    self.registered.clear()
                    break
                if code:
                    log.info("broker %d: heartbeat answered error %d", self.broker_id, code)
                elif not answer["is_fenced"] and not self.unfenced.is_set():
                    log.info("broker %d: unfenced at broker epoch %d",
                             self.broker_id, self.broker_epoch)
                    self.unfenced.set()
                elif answer["is_fenced"] and self.unfenced.is_set():
                    log.warning("broker %d: fenced by the controller", self.broker_id)
                    self.unfenced.clear()
                if not self.unfenced.is_set():
                    await asyncio.sleep(_RETRY_S)

    async def _register(self) -> None:
        body = {
            "broker_id": self.broker_id,
            "cluster_id": self._cluster_id,
            "incarnation_id": self.incarnation_id,
            "listeners": [
                {"name": e.name, "host": e.host, "port": e.port,
                 "security_protocol": e.security_protocol}
                for e in self._endpoints()
            ],
            "features": [],
            "rack": self._rack,
            "is_migrating_zk_broker": False,
            "log_dirs": [],
            "previous_broker_epoch": self.broker_epoch,
        }
        reported: int | None = None
        while True:
            answer = await self._channel.send(
                ApiKey.BROKER_REGISTRATION, REGISTRATION_VERSION, body, self._timeout_ms
            )
            code = None if answer is None else answer["error_code"]
            if answer is not None and code == 0:
                self.broker_epoch = answer["broker_epoch"]
                log.info("broker %d registered with controller %s at broker epoch %d",
                         self.broker_id, self._channel.controller_id, self.broker_epoch)
                self.registered.set()
                return
            if code != reported:
                reported = code
                detail = "no active controller yet" if code is None else f"error {code}"
                if code == ErrorCode.DUPLICATE_BROKER_REGISTRATION:
                    detail = ("the previous process of this node id still has a session; "
                              "retrying until it expires (broker.session.timeout.ms)")
                elif code == ErrorCode.INCONSISTENT_CLUSTER_ID:
                    log.error("broker %d: the controller refuses cluster id %s",
                              self.broker_id, self._cluster_id)
                log.info("broker %d: registration pending: %s", self.broker_id, detail)
            await asyncio.sleep(_RETRY_S)

    async def _heartbeat(self, want_shut_down: bool) -> dict[str, Any] | None:
        body = {
            "broker_id": self.broker_id,
            "broker_epoch": self.broker_epoch,
            "current_metadata_offset": self._metadata_offset(),
            "want_fence": False,
            "want_shut_down": want_shut_down,
        }
        return await self._channel.send(
            ApiKey.BROKER_HEARTBEAT, HEARTBEAT_VERSION, body, self._timeout_ms
        )

    async def shutdown(self, timeout_ms: int) -> bool:
        """Controlled shutdown: True once the controller says this broker may stop."""
        await self.stop()
        if not self.registered.is_set():
            return False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        while loop.time() < deadline:
            answer = await self._heartbeat(want_shut_down=True)
            if answer is not None and answer["error_code"] == 0 and answer["should_shut_down"]:
                log.info("broker %d: controlled shutdown complete", self.broker_id)
                return True
            await asyncio.sleep(_RETRY_S)
        log.info("broker %d: controlled shutdown not confirmed within %d ms",
                 self.broker_id, timeout_ms)
        return False
