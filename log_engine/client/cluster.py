"""The client's view of the cluster: metadata cache and connection pool.

:class:`Cluster` holds the latest Metadata response (brokers, topics, partition
leaders) for the topics the client is interested in, refreshes it when asked
(a NOT_LEADER or UNKNOWN_TOPIC error makes the cache stale) and at least every
``metadata.max.age.ms``, and keeps one connection per broker and purpose.
Group traffic gets its own connection ("group"), because a broker handles one
request per connection at a time and a JoinGroup may wait for a whole
rebalance.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from log_engine.client import errors
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.client.types import TopicPartition
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

NO_TOPIC_ID = uuid.UUID(int=0)
"""Kafka's "no topic id": what a broker below Metadata v10 (or a Sluice broker) gives."""

log = logging.getLogger(__name__)

#: How often metadata is asked again while a topic of interest is missing or in error.
_INCOMPLETE_REFRESH_S = 1.0


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A broker as listed in Metadata."""

    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    """One partition's leader and replicas. ``leader`` is -1 while no leader is elected."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """One topic's partitions, by index. ``error_code`` is non-zero if the broker refused it."""

    name: str
    error_code: int
    is_internal: bool
    partitions: dict[int, PartitionInfo] = field(default_factory=dict)
    topic_id: uuid.UUID = NO_TOPIC_ID
    """The topic's id (Metadata v10+), or all zeros when the broker gave none."""


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    """One Metadata response, indexed."""

    brokers: dict[int, BrokerInfo]
    topics: dict[str, TopicInfo]
    controller_id: int = -1
    cluster_id: str | None = None

    def leader(self, tp: TopicPartition) -> int:
        """The node leading ``tp``, or -1 when unknown."""
        topic = self.topics.get(tp.topic)
        if topic is None:
            return -1
        info = topic.partitions.get(tp.partition)
        return -1 if info is None else info.leader

    @staticmethod
    def from_response(body: dict[str, Any]) -> ClusterMetadata:
        """Index a decoded Metadata response body."""
        brokers = {
            b["node_id"]: BrokerInfo(b["node_id"], b["host"], b["port"], b.get("rack"))
            for b in body["brokers"]
        }
        topics: dict[str, TopicInfo] = {}
        for t in body["topics"]:
            name = t["name"]
            parts = {
                p["partition_index"]: PartitionInfo(
                    name,
                    p["partition_index"],
                    p["leader_id"],
                    p.get("leader_epoch", -1),
                    tuple(p["replica_nodes"]),
                    tuple(p["isr_nodes"]),
                    tuple(p.get("offline_replicas") or ()),
                    p["error_code"],
                )
                for p in t["partitions"]
            }
            topics[name] = TopicInfo(
                name,
                t["error_code"],
                t.get("is_internal", False),
                parts,
                t.get("topic_id", NO_TOPIC_ID),
            )
        return ClusterMetadata(
            brokers, topics, body.get("controller_id", -1), body.get("cluster_id")
        )


_EMPTY = ClusterMetadata({}, {})


class Cluster:
    """Metadata cache plus a connection per (broker, purpose), shared by one client.

    ``interest`` is the set of topics refreshed each time; ``refresh(topics)``
    may ask for more once. All methods run on the client's event loop.
    """

    def __init__(self, config: ClientConfig, *, allow_auto_create_topics: bool = False) -> None:
        self._config = config
        self._allow_auto_create = allow_auto_create_topics
        self.metadata: ClusterMetadata = _EMPTY
        self.interest: set[str] = set()
        self._updated_monotonic = 0.0
        self._refresh_lock = asyncio.Lock()
        self._refresh_wanted = asyncio.Event()
        self._updated = asyncio.Event()  # set (and replaced) at each refresh
        self._connections: dict[tuple[int, str], BrokerConnection] = {}
        self._connecting: dict[tuple[int, str], asyncio.Future[BrokerConnection]] = {}
        self._failed_at: dict[tuple[str, int], float] = {}
        self._maintainer: asyncio.Task[None] | None = None
        self._closed = False

    async def bootstrap(self) -> None:
        """Fetch metadata from the bootstrap servers and start the periodic refresh."""
        await self.refresh()
        if self._maintainer is None:
            self._maintainer = asyncio.get_running_loop().create_task(self._maintain())

    def add_topics(self, topics: Iterable[str]) -> bool:
        """Add to the topics refreshed; True if any was new (a refresh is then requested)."""
        new = set(topics) - self.interest
        if new:
            self.interest |= new
            self.request_refresh()
        return bool(new)

    def request_refresh(self) -> None:
        """Mark the cache stale; the background task refreshes it soon."""
        self._refresh_wanted.set()

    async def refresh(
        self, topics: Iterable[str] = (), *, all_topics: bool = False
    ) -> ClusterMetadata:
        """Fetch metadata for ``interest`` plus ``topics`` (or every topic) now."""
        wanted = None if all_topics else sorted(self.interest.union(topics))
        asked_at = time.monotonic()
        async with self._refresh_lock:
            if (
                wanted is not None
                and self._updated_monotonic > asked_at
                and all(t in self.metadata.topics for t in wanted)
            ):
                return self.metadata  # a refresh that started after us covered these
            body = await self._request_metadata(wanted)
            fresh = ClusterMetadata.from_response(body)
            if wanted is not None and len(wanted) < len(self.metadata.topics):
                kept = {n: t for n, t in self.metadata.topics.items() if n in self.interest}
                fresh = ClusterMetadata(
                    fresh.brokers, {**kept, **fresh.topics}, fresh.controller_id, fresh.cluster_id
                )
            self.metadata = fresh
            self._updated_monotonic = time.monotonic()
            self._refresh_wanted.clear()
            self._updated.set()
            self._updated = asyncio.Event()
            self._close_departed_brokers()
            return fresh

    async def wait_for_update(self) -> ClusterMetadata:
        """The metadata of the next refresh, once it has been fetched."""
        await self._updated.wait()
        return self.metadata

    async def wait_for_topic(self, topic: str, timeout_ms: int) -> TopicInfo:
        """Metadata for ``topic``, refreshing until it has partitions or ``timeout_ms`` passes."""
        self.add_topics([topic])
        backoff_s = max(self._config.retry_backoff_ms, 10) / 1000
        last_error: int = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        info = self.metadata.topics.get(topic)
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                attempts = 0
                while info is None or info.error_code or not info.partitions:
                    if info is not None and info.error_code:
                        last_error = info.error_code
                        if not errors.error_for_code(last_error).retriable:
                            errors.check_error(last_error, f"metadata for topic {topic!r}")
                    if attempts:
                        await asyncio.sleep(backoff_s)
                    attempts += 1
                    try:
                        info = (await self.refresh([topic])).topics.get(topic)
                    except errors.KafkaError as exc:
                        if not exc.retriable:
                            raise
                return info
        except TimeoutError:
            raise errors.timeout_error(
                f"topic {topic!r} not available after {timeout_ms} ms (last error {last_error})"
            ) from None

    async def connection(self, node_id: int, purpose: str = "") -> BrokerConnection:
        """The open connection to ``node_id`` for ``purpose``, connecting if needed."""
        key = (node_id, purpose)
        conn = self._connections.get(key)
        if conn is not None and not conn.closed:
            return conn
        pending = self._connecting.get(key)
        if pending is None:
            broker = self.metadata.brokers.get(node_id)
            if broker is None:
                raise errors.kafka_error(
                    ErrorCode.LEADER_NOT_AVAILABLE, f"broker {node_id} is not in the metadata"
                )
            pending = asyncio.ensure_future(self._open(key, broker.host, broker.port))
            self._connecting[key] = pending
        return await asyncio.shield(pending)

    def open_connection(self, node_id: int, purpose: str = "") -> BrokerConnection | None:
        """The connection to ``node_id`` if one is open now, without connecting."""
        conn = self._connections.get((node_id, purpose))
        return conn if conn is not None and not conn.closed else None

    def add_broker(self, node_id: int, host: str, port: int) -> None:
        """Record a broker address learnt outside Metadata (FindCoordinator answers)."""
        if node_id not in self.metadata.brokers:
            brokers = {**self.metadata.brokers, node_id: BrokerInfo(node_id, host, port)}
            self.metadata = ClusterMetadata(
                brokers,
                self.metadata.topics,
                self.metadata.controller_id,
                self.metadata.cluster_id,
            )

    async def any_connection(self) -> BrokerConnection:
        """A connection to some live broker: an open one if possible, else the first to accept."""
        for (_, purpose), conn in self._connections.items():
            if purpose == "" and not conn.closed:
                return conn
        last: BaseException | None = None
        nodes = list(self.metadata.brokers)
        random.shuffle(nodes)
        for node_id in nodes:
            try:
                return await self.connection(node_id)
            except errors.KafkaError as exc:
                last = exc
        raise errors.network_error(f"no broker reachable: {last}")

    async def close(self) -> None:
        """Stop refreshing and close every connection."""
        self._closed = True
        if self._maintainer is not None:
            self._maintainer.cancel()
            await asyncio.gather(self._maintainer, return_exceptions=True)
        for pending in self._connecting.values():
            pending.cancel()
        for conn in self._connections.values():
            conn.close()
        for conn in self._connections.values():
            await conn.wait_closed()
        self._connections.clear()

    # -- internals -----------------------------------------------------------------------

    async def _open(self, key: tuple[int, str], host: str, port: int) -> BrokerConnection:
        try:
            await self._respect_backoff(host, port)
            try:
                conn = await BrokerConnection.open(host, port, self._config, node_id=key[0])
            except errors.KafkaError:
                self._failed_at[(host, port)] = time.monotonic()
                raise
            if self._closed:
                conn.close()
                raise errors.ClientClosedError("client closed")
            self._connections[key] = conn
            return conn
        finally:
            self._connecting.pop(key, None)

    async def _respect_backoff(self, host: str, port: int) -> None:
        failed = self._failed_at.get((host, port))
        if failed is not None:
            wait_s = failed + self._config.retry_backoff_ms / 1000 - time.monotonic()
            if wait_s > 0:
                await asyncio.sleep(wait_s)

    async def _request_metadata(self, topics: list[str] | None) -> dict[str, Any]:
        candidates: list[tuple[int | None, str, int]] = []
        for conn in self._connections.values():
            if not conn.closed:
                candidates.append((conn.node_id, conn.host, conn.port))
                break
        brokers = list(self.metadata.brokers.values())
        random.shuffle(brokers)
        candidates += [(b.node_id, b.host, b.port) for b in brokers]
        candidates += [(None, h, p) for h, p in self._config.addresses()]
        last: BaseException | None = None
        for node_id, host, port in candidates:
            try:
                return await self._metadata_from(node_id, host, port, topics)
            except errors.KafkaError as exc:
                if not exc.retriable:
                    raise
                last = exc
                log.debug("metadata from %s:%s failed: %s", host, port, exc)
        raise errors.network_error(f"no broker answered a Metadata request: {last}")

    async def _metadata_from(
        self, node_id: int | None, host: str, port: int, topics: list[str] | None
    ) -> dict[str, Any]:
        if node_id is not None and node_id in self.metadata.brokers:
            conn = await self.connection(node_id)
        else:
            await self._respect_backoff(host, port)
            try:
                conn = await BrokerConnection.open(host, port, self._config)
            except errors.KafkaError:
                self._failed_at[(host, port)] = time.monotonic()
                raise
        try:
            body = {
                "topics": None if topics is None else [{"name": t} for t in topics],
                "allow_auto_topic_creation": self._allow_auto_create,
            }
            return await conn.send(ApiKey.METADATA, body)
        finally:
            if conn.node_id is None:
                conn.close("bootstrap connection no longer needed")

    def _close_departed_brokers(self) -> None:
        for key, conn in list(self._connections.items()):
            if key[0] not in self.metadata.brokers or conn.closed:
                conn.close("broker left the cluster")
                del self._connections[key]

    async def _maintain(self) -> None:
        backoff_s = max(self._config.retry_backoff_ms, 10) / 1000
        while not self._closed:
            await self._until_refresh_due()
            try:
                await self.refresh()
            except errors.KafkaError as exc:
                log.warning("metadata refresh failed: %s", exc)
                await self._after_failure()
            except Exception:  # the refresher must outlive any failure, or the cache
                # stays stale for good (a topic created a moment late was never seen)
                log.warning("metadata refresh failed", exc_info=True)
                await self._after_failure()
            await asyncio.sleep(backoff_s)  # bound the refresh rate

    async def _after_failure(self) -> None:
        """After a failed refresh, try again in 1 s (or once one is requested)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_INCOMPLETE_REFRESH_S):
                await self._refresh_wanted.wait()

    async def _until_refresh_due(self) -> None:
        """Wait until a refresh is requested or the metadata is due for one.

        Due ``metadata.max.age.ms`` after the last refresh, or 1 s after it while a
        topic of interest is missing or in error (as Kafka's clients ask again soon on
        a retriable metadata error). Any refresh, including one another task made,
        starts the count again: one that found a topic missing (a group leader's,
        asking a broker that had not learnt of the topic yet) must not leave this
        task sleeping for the max age it chose when the metadata was complete.
        """
        max_age_s = self._config.metadata_max_age_ms / 1000
        while not self._refresh_wanted.is_set():
            age_s = _INCOMPLETE_REFRESH_S if self._incomplete() else max_age_s
            due_s = self._updated_monotonic + age_s - time.monotonic()
            if due_s <= 0:
                return
            waiters = [
                asyncio.ensure_future(self._refresh_wanted.wait()),
                asyncio.ensure_future(self._updated.wait()),
            ]
            try:
                await asyncio.wait(waiters, timeout=due_s, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for waiter in waiters:
                    waiter.cancel()

    def _incomplete(self) -> bool:
        """A topic of interest missing from the metadata, or answered with an error."""
        topics = self.metadata.topics
        return any(
            (info := topics.get(name)) is None or info.error_code != 0 or not info.partitions
            for name in self.interest
        )
