"""Produce and InitProducerId.

Produce appends each partition's batches after validating their headers and
CRCs (in storage), the structure of their records (the partition, through
``records.record_check``; a refused record is named in ``record_errors``) and
the idempotent producer's sequence numbers. ``acks=0``
gets no response; ``acks=1`` is answered after the local append. ``acks=all``
on a single node too (its ISR is the leader itself); on a replicated
partition it is refused with NOT_ENOUGH_REPLICAS before appending when the
ISR is smaller than ``min.insync.replicas``, and after appending it waits
until the high watermark covers its batches (REQUEST_TIMED_OUT after the
request's ``timeout_ms``). A partition this broker does not lead answers
NOT_LEADER_OR_FOLLOWER.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.topics import OFFSETS_TOPIC
from log_engine.errors import ErrorCode, KafkaError, MalformedRecordError

log = logging.getLogger(__name__)

_CLUSTER_ID_SHIFT = 40
"""In a cluster, a producer id carries its broker's id above this bit.

Each broker's :class:`ProducerIdManager` counts on its own, so two producers
initialized on two brokers would get the same id, and the leader would take
one's batches for the other's duplicates. Until the controller hands out id
blocks (Kafka's AllocateProducerIds), ``(node.id + 1) << 40 | local id`` keeps
ids unique across the cluster; a single node keeps its plain ids. A broker wired
to a controller quorum (``broker.cluster_node``) takes its ids from
AllocateProducerIds blocks instead; this numbering remains for brokers whose
partition states a test applies by hand.
"""


Waits = list[tuple[dict[str, Any], "asyncio.Future[int]"]]


async def handle_produce(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any] | None:
    acks = body["acks"]
    responses = []
    waits: Waits = []
    for topic in body["topic_data"]:
        name = topic["name"]
        partitions = [
            _produce_partition(ctx, name, p["index"], p["records"], acks, waits)
            for p in topic["partition_data"]
        ]
        responses.append({"name": name, "partition_responses": partitions})
        if ctx.broker.metrics is not None:
            ctx.broker.metrics.produce_answered(name, partitions)
    if waits:
        await _wait_replicated(waits, body.get("timeout_ms", 30_000))
    if acks == 0:
        return None
    return {"responses": responses, "throttle_time_ms": 0}


async def _wait_replicated(waits: Waits, timeout_ms: int) -> None:
    """Wait (at most ``timeout_ms``) until each partition's HW covers its append."""
    futures = [future for _, future in waits]
    await asyncio.wait(futures, timeout=max(timeout_ms, 0) / 1000)
    for result, future in waits:
        if future.done():
            code = future.result()
        else:
            future.cancel()
            code = ErrorCode.REQUEST_TIMED_OUT
        if code:
            result["error_code"] = code
            result["error_message"] = (
                "timed out waiting for the in-sync replicas"
                if code == ErrorCode.REQUEST_TIMED_OUT
                else None
            )


def _produce_partition(
    ctx: RequestContext, topic: str, index: int, records: Any, acks: int, waits: Waits
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "index": index,
        "error_code": 0,
        "base_offset": -1,
        "log_append_time_ms": -1,
        "log_start_offset": -1,
        "record_errors": [],
        "error_message": None,
    }
    partition = ctx.broker.topics.partition(topic, index)
    if acks not in (-1, 0, 1):
        return {**result, "error_code": ErrorCode.INVALID_REQUIRED_ACKS}
    if partition is None:
        if ctx.broker.replicas.hosts_elsewhere(topic, index):
            return {**result, "error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER}
        return {**result, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    if topic == OFFSETS_TOPIC:
        return {
            **result,
            "error_code": ErrorCode.INVALID_TOPIC_EXCEPTION,
            "error_message": f"clients may not produce to {OFFSETS_TOPIC}",
        }
    if partition.state is not None and not partition.is_leader:
        return {**result, "error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER}
    if acks == -1 and partition.isr_size < partition.log.config.min_insync_replicas:
        return {
            **result,
            "error_code": ErrorCode.NOT_ENOUGH_REPLICAS,
            "error_message": f"the ISR has {partition.isr_size} replicas; "
            f"min.insync.replicas is {partition.log.config.min_insync_replicas}",
        }
    if records is None or len(records) == 0:
        return {**result, "error_code": ErrorCode.INVALID_RECORD, "error_message": "empty records"}
    try:
        outcome = partition.append(records)
    except KafkaError as exc:
        log.info("produce to %s-%d from %s refused: %s", topic, index, ctx.peer, exc)
        return {
            **result,
            "error_code": exc.errno,
            "error_message": exc.detail,
            "record_errors": _record_errors(exc),
        }
    if ctx.broker.metrics is not None:
        ctx.broker.metrics.appended(topic, outcome.next_offset - outcome.base_offset, len(records))
    answer = {
        **result,
        "base_offset": outcome.base_offset,
        "log_append_time_ms": outcome.log_append_time_ms,
        "log_start_offset": outcome.log_start_offset,
    }
    if acks == -1 and partition.leader_state is not None:
        waits.append((answer, partition.wait_replicated(outcome.next_offset)))
    return answer


def _record_errors(exc: Exception) -> list[dict[str, Any]]:
    """Kafka's per-record detail (Produce v8+) for a batch refused for one record."""
    if isinstance(exc, MalformedRecordError):
        return [{"batch_index": exc.record_index, "batch_index_error_message": exc.detail}]
    return []


async def handle_init_producer_id(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    if body.get("transactional_id"):
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.INVALID_TXN_STATE,
            "producer_id": -1,
            "producer_epoch": -1,
        }
    try:
        node = ctx.broker.cluster_node
        if node is not None:
            producer_id = await node.producer_ids.next_id()
        else:
            producer_id = ctx.broker.producer_ids.next_id()
    except KafkaError as exc:
        log.warning("InitProducerId from %s failed: %s", ctx.peer, exc)
        return {
            "throttle_time_ms": 0,
            "error_code": exc.errno,
            "producer_id": -1,
            "producer_epoch": -1,
        }
    if ctx.broker.cluster_node is None and ctx.broker.replicas.clustered:
        producer_id |= (ctx.broker.node_id + 1) << _CLUSTER_ID_SHIFT
    return {"throttle_time_ms": 0, "error_code": 0, "producer_id": producer_id, "producer_epoch": 0}
