"""A follower's fetcher: one asyncio task copying one leader broker's partitions here.

Each loop first truncates every partition that has not been checked against
the current leader epoch (OffsetForLeaderEpoch: "where did my latest epoch
end on your log?" and cut the local log there, so a follower never keeps
records the new leader does not have), then sends one Fetch with this
broker's id as ``replica_id`` for all its partitions. The leader's batches
are appended as they are (same offsets, epochs, producer ids and sequences);
the leader's high watermark is kept, at most the local log end, and its log
start offset too (DeleteRecords and retention reach followers). A follower
whose log ends below the leader's log start restarts its log there (at the
base of the batch holding it: batches are never split).

Errors are per partition: a fenced or unknown leader epoch, or
NOT_LEADER_OR_FOLLOWER, pauses that partition until the replica manager
applies a newer state; a lost connection reconnects after
``retry.backoff.ms``-like back-off. Nothing here blocks the event loop for
long: appends are a write per response.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.client.security import is_authentication_failure
from log_engine.errors import ErrorCode, KafkaError
from log_engine.metadata.types import BrokerEndpoint
from log_engine.protocol import ApiKey
from log_engine.records import read_header
from log_engine.records.batch import BATCH_HEADER_SIZE
from log_engine.storage.leader_epoch import UNDEFINED_OFFSET

if TYPE_CHECKING:
    from log_engine.broker.metrics import BrokerMetrics
    from log_engine.broker.partition import Partition

log = logging.getLogger(__name__)

_BACKOFF_S = 0.1
_AUTH_BACKOFF_S = 1.0  # a refused login is not retried at the fetch pace
_RESPONSE_MAX_BYTES = 10 * 1024 * 1024
_FETCH_VERSION_MAX = 11  # the classic versions (replica id in the body)
_EPOCH_VERSION_MAX = 3


@dataclass(slots=True, eq=False)
class FetchPartition:
    """One partition this fetcher copies, in one leader epoch."""

    partition: Partition
    leader_epoch: int
    truncated: bool = False
    paused_until: float = 0.0


class ReplicaFetcher:
    """Copies the partitions this broker follows from one leader broker."""

    def __init__(
        self,
        node_id: int,
        leader_id: int,
        endpoint: BrokerEndpoint,
        *,
        fetch_wait_max_ms: int,
        fetch_max_bytes: int,
        metrics: BrokerMetrics | None = None,
        security: Mapping[str, str] | None = None,
    ) -> None:
        """``security``: client keys for the leader's inter-broker listener
        (``security/inter_broker.py``); None: plaintext."""
        self.node_id = node_id
        self._security = dict(security or {})
        self._auth_failure = ""  # the last authentication failure logged
        self._metrics = metrics  # replication bytes in
        self.leader_id = leader_id
        self.endpoint = endpoint
        self._wait_ms = fetch_wait_max_ms
        self._max_bytes = fetch_max_bytes
        self._partitions: dict[tuple[str, int], FetchPartition] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._conn: BrokerConnection | None = None

    def __len__(self) -> int:
        return len(self._partitions)

    def add(self, partition: Partition, leader_epoch: int) -> None:
        """Follow ``partition`` in ``leader_epoch`` (truncating first)."""
        key = (partition.topic, partition.index)
        self._partitions[key] = FetchPartition(partition, leader_epoch)
        self._changed.set()
        if self._task is None:
            name = f"replica-fetcher-{self.node_id}-from-{self.leader_id}"
            self._task = asyncio.get_running_loop().create_task(self._run(), name=name)

    def entries(self) -> list[FetchPartition]:
        return list(self._partitions.values())

    def remove(self, topic: str, index: int) -> None:
        self._partitions.pop((topic, index), None)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._close()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close("replica fetcher stopped")
            self._conn = None

    async def _run(self) -> None:
        while True:
            try:
                conn = await self._connection()
                await self._cycle(conn)
            except asyncio.CancelledError:
                raise
            except (KafkaError, OSError) as exc:
                if self._refused(exc):
                    self._close()
                    await asyncio.sleep(_AUTH_BACKOFF_S)
                    continue
                log.info("replica fetcher from broker %d: %s", self.leader_id, exc)
                self._close()
                await asyncio.sleep(_BACKOFF_S)
            except Exception:
                log.exception("replica fetcher from broker %d failed", self.leader_id)
                self._close()
                await asyncio.sleep(_BACKOFF_S)

    def _refused(self, exc: BaseException) -> bool:
        """Log a failed login to the leader once per distinct failure (an error: the
        partitions fall out of the ISR until the credentials are fixed)."""
        refused = is_authentication_failure(exc)
        if refused and str(exc) != self._auth_failure:
            self._auth_failure = str(exc)
            log.error(
                "replica fetcher of broker %d cannot authenticate to broker %d on listener "
                "%s (%s): %s; its partitions fall out of the ISR until the inter-broker "
                "credentials are fixed (docs/security.md)",
                self.node_id,
                self.leader_id,
                self.endpoint.listener,
                self._describe_security(),
                exc,
            )
        return refused

    def _describe_security(self) -> str:
        protocol = self._security.get("security.protocol", "PLAINTEXT")
        if "sasl.mechanism" in self._security:
            return (
                f"{protocol}, {self._security['sasl.mechanism']} as user "
                f"{self._security.get('sasl.username')}"
            )
        return protocol

    async def _connection(self) -> BrokerConnection:
        if self._conn is None or self._conn.closed:
            address = f"{self.endpoint.host}:{self.endpoint.port}"
            config = ClientConfig.from_mapping(
                {
                    **self._security,
                    "bootstrap.servers": address,
                    "client.id": f"broker-{self.node_id}-fetcher",
                }
            )
            self._conn = await BrokerConnection.open(
                self.endpoint.host, self.endpoint.port, config, self.leader_id
            )
            if self._auth_failure:
                log.info(
                    "replica fetcher of broker %d authenticated to broker %d again",
                    self.node_id,
                    self.leader_id,
                )
                self._auth_failure = ""
        return self._conn

    async def _cycle(self, conn: BrokerConnection) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        ready = [e for e in self._partitions.values() if e.paused_until <= now]
        if not ready:
            self._changed.clear()
            waits = [e.paused_until - now for e in self._partitions.values()]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(waits, default=3600.0))
            return
        untruncated = [e for e in ready if not e.truncated]
        if untruncated:
            await self._truncate(conn, untruncated)
        fetchable = [e for e in ready if e.truncated]
        if fetchable:
            await self._fetch(conn, fetchable)

    # -- truncation ------------------------------------------------------------------------

    async def _truncate(self, conn: BrokerConnection, entries: list[FetchPartition]) -> None:
        topics: dict[str, list[dict[str, Any]]] = {}
        empty: list[FetchPartition] = []
        for entry in entries:
            latest = entry.partition.log.leader_epochs.latest_epoch
            if latest is None:
                empty.append(entry)
                continue
            topics.setdefault(entry.partition.topic, []).append(
                {
                    "partition": entry.partition.index,
                    "current_leader_epoch": entry.leader_epoch,
                    "leader_epoch": latest,
                }
            )
        for entry in empty:  # no epochs: nothing of ours to check beyond the HW
            part = entry.partition
            part.truncate_to(min(part.high_watermark, part.log.log_end_offset))
            entry.truncated = True
        if not topics:
            return
        body = {
            "replica_id": self.node_id,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        }
        version = min(conn.api_version(ApiKey.OFFSET_FOR_LEADER_EPOCH), _EPOCH_VERSION_MAX)
        response = await conn.send(ApiKey.OFFSET_FOR_LEADER_EPOCH, body, version=version)
        for topic in response["topics"]:
            for answer in topic["partitions"]:
                found = self._partitions.get((topic["topic"], answer["partition"]))
                if found is not None and any(found is asked for asked in entries):
                    self._apply_epoch_answer(found, answer)

    def _apply_epoch_answer(self, entry: FetchPartition, answer: dict[str, Any]) -> None:
        part = entry.partition
        code = answer["error_code"]
        if code:
            self._pause(entry, code, "OffsetForLeaderEpoch")
            return
        epochs = part.log.leader_epochs
        latest = epochs.latest_epoch
        leader_epoch, leader_end = answer["leader_epoch"], answer["end_offset"]
        end = part.log.log_end_offset
        if leader_end == UNDEFINED_OFFSET:
            target = min(part.high_watermark, end)
        elif leader_epoch == latest:
            target = min(leader_end, end)
        else:
            _, own_end = epochs.end_offset_for(leader_epoch)
            target = min(leader_end, own_end if own_end >= 0 else end, end)
        if target < end:
            log.info(
                "%s-%d: truncating from %d to %d (leader %d epoch %d ends epoch %d at %d)",
                part.topic,
                part.index,
                end,
                target,
                self.leader_id,
                entry.leader_epoch,
                leader_epoch,
                leader_end,
            )
            part.truncate_to(target)
        entry.truncated = True

    # -- fetching --------------------------------------------------------------------------

    async def _fetch(self, conn: BrokerConnection, entries: list[FetchPartition]) -> None:
        topics: dict[str, list[dict[str, Any]]] = {}
        sent: dict[tuple[str, int], FetchPartition] = {}
        for entry in entries:
            part = entry.partition
            sent[(part.topic, part.index)] = entry
            topics.setdefault(part.topic, []).append(
                {
                    "partition": part.index,
                    "current_leader_epoch": entry.leader_epoch,
                    "fetch_offset": part.log.log_end_offset,
                    "last_fetched_epoch": -1,
                    "log_start_offset": part.log.log_start_offset,
                    "partition_max_bytes": self._max_bytes,
                }
            )
        body = {
            "replica_id": self.node_id,
            "max_wait_ms": self._wait_ms,
            "min_bytes": 1,
            "max_bytes": _RESPONSE_MAX_BYTES,
            "isolation_level": 0,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
            "forgotten_topics_data": [],
            "rack_id": "",
        }
        version = min(conn.api_version(ApiKey.FETCH), _FETCH_VERSION_MAX)
        response = await conn.send(
            ApiKey.FETCH, body, version=version, timeout_ms=self._wait_ms + 30_000
        )
        if response.get("error_code"):
            raise KafkaError(f"fetch failed with error {response['error_code']}")
        for topic in response["responses"]:
            for answer in topic["partitions"]:
                key = (topic["topic"], answer["partition_index"])
                asked = sent.get(key)
                # The partition may have moved on while the fetch was in flight.
                if asked is not None and self._partitions.get(key) is asked:
                    self._apply_fetch_answer(asked, answer)

    def _apply_fetch_answer(self, entry: FetchPartition, answer: dict[str, Any]) -> None:
        part = entry.partition
        code = answer["error_code"]
        if code == ErrorCode.OFFSET_OUT_OF_RANGE:
            leader_start = answer.get("log_start_offset", -1)
            if leader_start >= 0 and part.log.log_end_offset < leader_start:
                part.restart_at(leader_start)
            else:
                entry.truncated = False  # ahead of the leader: ask where to cut
            return
        if code:
            self._pause(entry, code, "Fetch")
            return
        records = answer.get("records")
        if records:
            data = _whole_batches(memoryview(records))
            empty = part.log.log_end_offset == part.log.log_start_offset
            if data and empty:
                base = read_header(data).base_offset
                if base < part.log.log_end_offset:  # the batch holding our (empty) log's start
                    part.restart_at(base)
            try:
                part.append_replica(data)
                if self._metrics is not None:
                    self._metrics.replication_bytes_in += len(data)
            except KafkaError as exc:
                log.warning("%s-%d: replica append refused: %s", part.topic, part.index, exc)
                entry.truncated = False
                self._pause(entry, exc.errno, "append")
                return
        leader_start = answer.get("log_start_offset", -1)
        if part.log.log_start_offset < leader_start <= part.log.log_end_offset:
            part.log.delete_records_before(leader_start)  # DeleteRecords, retention
        part.set_follower_high_watermark(answer["high_watermark"])

    def _pause(self, entry: FetchPartition, code: int, what: str) -> None:
        part = entry.partition
        log.info(
            "%s-%d: %s from leader %d answered error %d; retrying after a pause",
            part.topic,
            part.index,
            what,
            self.leader_id,
            code,
        )
        entry.paused_until = asyncio.get_running_loop().time() + _BACKOFF_S


def _whole_batches(view: memoryview) -> memoryview:
    """``view`` cut after its last complete batch (a size limit may split the last one)."""
    pos = 0
    while pos + BATCH_HEADER_SIZE <= len(view):
        size = read_header(view, pos).size
        if pos + size > len(view):
            break
        pos += size
    return view[:pos]
