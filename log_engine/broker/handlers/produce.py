"""Produce and InitProducerId.

Produce appends each partition's batches after validating their headers and
CRCs (in storage), the structure of their records (the partition, through
``records.record_check``; a refused record is named in ``record_errors``) and
the idempotent producer's sequence numbers. ``acks=0``
gets no response; ``acks=1`` and ``acks=all`` are answered after the local
append (the ISR of a single node is the leader itself).
"""

from __future__ import annotations

import logging
from typing import Any

from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.topics import OFFSETS_TOPIC
from log_engine.errors import ErrorCode, KafkaError, MalformedRecordError

log = logging.getLogger(__name__)


async def handle_produce(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any] | None:
    acks = body["acks"]
    responses = []
    for topic in body["topic_data"]:
        name = topic["name"]
        partitions = [
            _produce_partition(ctx, name, p["index"], p["records"], acks)
            for p in topic["partition_data"]
        ]
        responses.append({"name": name, "partition_responses": partitions})
    if acks == 0:
        return None
    return {"responses": responses, "throttle_time_ms": 0}


def _produce_partition(
    ctx: RequestContext, topic: str, index: int, records: Any, acks: int
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
        return {**result, "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    if topic == OFFSETS_TOPIC:
        return {
            **result,
            "error_code": ErrorCode.INVALID_TOPIC_EXCEPTION,
            "error_message": f"clients may not produce to {OFFSETS_TOPIC}",
        }
    if acks == -1 and partition.log.config.min_insync_replicas > 1:
        return {
            **result,
            "error_code": ErrorCode.NOT_ENOUGH_REPLICAS,
            "error_message": "min.insync.replicas exceeds the single-node ISR",
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
    return {
        **result,
        "base_offset": outcome.base_offset,
        "log_append_time_ms": outcome.log_append_time_ms,
        "log_start_offset": outcome.log_start_offset,
    }


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
        producer_id = ctx.broker.producer_ids.next_id()
    except KafkaError as exc:
        log.warning("InitProducerId from %s failed: %s", ctx.peer, exc)
        return {
            "throttle_time_ms": 0,
            "error_code": exc.errno,
            "producer_id": -1,
            "producer_epoch": -1,
        }
    return {"throttle_time_ms": 0, "error_code": 0, "producer_id": producer_id, "producer_epoch": 0}
