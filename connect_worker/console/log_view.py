"""What the console shows of the log: topics with their partitions and sizes, and a
peek at a topic's latest records.

Everything goes over the Kafka wire protocol with the worker's own client
(DESIGN practice 10): Metadata for the partitions, ListOffsets for each
partition's log start and end (a partition's size is shown in records, end
minus start: the protocol subset the broker serves has no DescribeLogDirs for
bytes), and a Fetch from a short-lived consumer for the latest records.

One admin client is kept and dropped after a failure (the next call starts a
fresh one), as :class:`~connect_worker.log_probe.LogProbe` does. The last peek
is kept and answered again while the partitions' offsets have not moved (the
page polls every few seconds; a quiet topic costs two ListOffsets, no Fetch). A peek is
bounded: at most :data:`PEEK_MAX_RECORDS` records, values cut at
:data:`VALUE_MAX_CHARS` characters, and :data:`PEEK_TIMEOUT_S` seconds.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from connect_worker.lazy_admin import LazyAdmin
from log_engine.client import ConsumerRecord, SyncAdmin, SyncConsumer, TopicPartition

log = logging.getLogger(__name__)

PEEK_MAX_RECORDS = 100
VALUE_MAX_CHARS = 4096
PEEK_TIMEOUT_S = 5.0
_TIMEOUT_MS = 5000


class LogView:
    """Reads topic metadata, offsets and the latest records from the cluster at ``bootstrap``."""

    def __init__(self, bootstrap: str, client_props: Mapping[str, str] | None = None) -> None:
        self._consumer_config = {
            **dict(client_props or {}),
            "bootstrap.servers": bootstrap,
            "request.timeout.ms": str(_TIMEOUT_MS),
        }
        self._config = {**self._consumer_config, "default.api.timeout.ms": str(_TIMEOUT_MS)}
        self._lock = threading.Lock()
        self._admin = LazyAdmin({**self._config, "client.id": "sluice-console"}, "console")
        self._last_peek: tuple[object, list[dict[str, Any]]] | None = None  # key, records

    def topics(self) -> list[dict[str, Any]]:
        """Each topic (internal ones too, flagged) with its partitions' replicas and offsets."""
        with self._lock:
            try:
                return self._topics(self._admin.get())
            except Exception:
                self._admin.drop()
                raise

    def _topics(self, admin: SyncAdmin) -> list[dict[str, Any]]:
        described = admin.describe_topics(admin.list_topics(include_internal=True))
        tps = [
            TopicPartition(name, p.partition)
            for name, topic in described.items()
            for p in topic.partitions
        ]
        starts = admin.list_offsets(dict.fromkeys(tps, "earliest")) if tps else {}
        ends = admin.list_offsets(dict.fromkeys(tps, "latest")) if tps else {}
        topics = []
        for name, topic in sorted(described.items()):
            partitions: list[dict[str, Any]] = []
            for p in sorted(topic.partitions, key=lambda p: p.partition):
                tp = TopicPartition(name, p.partition)
                start, end = starts.get(tp, (0, 0))[0], ends.get(tp, (0, 0))[0]
                partitions.append({
                    "partition": p.partition,
                    "leader": p.leader,
                    "replicas": list(p.replicas),
                    "isr": list(p.isr),
                    "log_start_offset": start,
                    "log_end_offset": end,
                    "records": max(0, end - start),
                })
            topics.append({
                "name": name,
                "internal": topic.is_internal,
                "partitions": partitions,
                "records": sum(int(p["records"]) for p in partitions),
            })
        return topics

    def latest_records(self, topic: str, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` of the topic's latest records (the newest first), all partitions."""
        limit = max(1, min(limit, PEEK_MAX_RECORDS))
        with self._lock:
            try:
                admin = self._admin.get()
                described = admin.describe_topics([topic])[topic]
                tps = [TopicPartition(topic, p.partition) for p in described.partitions]
                starts = admin.list_offsets(dict.fromkeys(tps, "earliest"))
                ends = admin.list_offsets(dict.fromkeys(tps, "latest"))
            except Exception:
                self._admin.drop()
                raise
        wanted = {
            tp: (max(starts[tp][0], ends[tp][0] - limit), ends[tp][0])
            for tp in tps
            if ends[tp][0] > starts[tp][0]
        }
        key = (topic, limit, tuple(sorted((tp.partition, r) for tp, r in wanted.items())))
        cached = self._last_peek
        if cached is not None and cached[0] == key:  # nothing new: the page polls every 2 s
            return cached[1]
        records = _fetch(self._consumer_config, wanted)
        records.sort(key=lambda r: (r.timestamp, r.offset), reverse=True)
        shown = [record_json(r) for r in records[:limit]]
        self._last_peek = (key, shown)
        return shown

    def has_topic(self, topic: str) -> bool:
        with self._lock:
            try:
                return topic in self._admin.get().list_topics(include_internal=True)
            except Exception:
                self._admin.drop()
                raise

    def close(self) -> None:
        with self._lock:
            self._admin.drop()


def _fetch(
    config: Mapping[str, str], wanted: Mapping[TopicPartition, tuple[int, int]]
) -> list[ConsumerRecord]:
    """The records in ``[first, end)`` of each partition, read by a consumer of no group."""
    if not wanted:
        return []
    consumer = SyncConsumer({
        **config,
        "client.id": "sluice-console-peek",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    })
    got: list[ConsumerRecord] = []
    try:
        consumer.assign(wanted)
        for tp, (first, _) in wanted.items():
            consumer.seek(tp, first)
        pending = set(wanted)
        deadline = time.monotonic() + PEEK_TIMEOUT_S
        while pending and time.monotonic() < deadline:
            for record in consumer.poll(0.2):
                tp = TopicPartition(record.topic, record.partition)
                if record.offset < wanted[tp][1]:
                    got.append(record)
            pending = {tp for tp in pending if consumer.position(tp) < wanted[tp][1]}
    finally:
        consumer.close()
    return got


def record_json(record: ConsumerRecord) -> dict[str, Any]:
    """A record as the console shows it: text where the bytes are UTF-8, else base64."""
    return {
        "partition": record.partition,
        "offset": record.offset,
        "timestamp": record.timestamp,
        "key": _data(record.key),
        "value": _data(record.value),
        "headers": [{"key": k, "value": _data(v)} for k, v in record.headers],
    }


def _data(data: bytes | None) -> dict[str, Any] | None:
    """``{"text": ...}`` or ``{"base64": ...}``, with ``truncated`` when cut."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raw = data[: VALUE_MAX_CHARS * 3 // 4]
        return {"base64": base64.b64encode(raw).decode(), "truncated": len(raw) < len(data)}
    return {"text": text[:VALUE_MAX_CHARS], "truncated": len(text) > VALUE_MAX_CHARS}
