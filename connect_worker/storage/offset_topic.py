"""Source offsets in the offsets topic (``offset.storage.topic``), as Kafka Connect keeps them.

The role of Kafka's KafkaOffsetBackingStore, behind the same
:class:`~connect_worker.storage.offsets.OffsetStore` interface the source
runners use with the file store in standalone mode. Records::

    key    ["<connector>",{"filename":"/var/log/app.log"}]    compact JSON
    value  {"position":1234}                                   compact JSON; null deletes

The producer picks the partition from the key bytes with Kafka's murmur2
partitioner (``offset.storage.partitions``, 25 by default), as a Java worker's
producer does; readers consume every partition, so where a key lands only
matters for compaction. We write a partition's keys sorted
(:func:`~connect_worker.storage.offsets.partition_key`) so our own rewrites of
a key always compact together; a Java worker may order a map's keys otherwise,
which costs only an uncompacted duplicate, never a wrong read.

Reads (:meth:`TopicOffsetStore.get`, :meth:`get_all`) first flush this
worker's puts and read the topic to its end, as Kafka's store reads it, so a
task taking over from a dead worker starts from the last offsets committed
anywhere in the cluster. ``put_all`` sends at once (and updates this
worker's view); :meth:`flush` waits for the broker's acknowledgements and
raises :class:`OffsetStoreError` if any failed. Malformed records are logged and skipped.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Mapping
from typing import Any

from connect_worker.storage import topic_json
from connect_worker.storage.offsets import Offset, OffsetStoreError, partition_key, partition_of
from connect_worker.storage.topic_log import TopicLog, TopicSettings, TopicStoreError
from log_engine.client import ConsumerRecord, RecordMetadata

log = logging.getLogger(__name__)

_IN_FLIGHT_MAX = 100_000


def offset_key(connector: str, partition: Mapping[str, Any]) -> bytes:
    """The offsets topic key of ``partition`` of ``connector``: ``["<c>",{...}]``."""
    return topic_json.encode([connector, partition_of(partition_key(partition))])


def parse_offset_key(key: bytes) -> tuple[str, dict[str, Any]]:
    """The connector and source partition of an offsets topic key (ValueError if malformed)."""
    value = topic_json.decode(key)
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], str)
        or not isinstance(value[1], dict)
    ):
        raise ValueError(f"expected [\"<connector>\", {{partition}}], got {value!r}")
    return value[0], value[1]


class TopicOffsetStore:
    """Source offsets in a compacted topic shared by the cluster's workers; thread-safe.

    Lifecycle: construct -> :meth:`start` (creates or checks the topic, reads it
    to the end) -> get/get_all/put_all/flush ... -> :meth:`stop`.
    """

    def __init__(
        self,
        topic: str,
        client_config: Mapping[str, Any],
        *,
        partitions: int = 25,
        replication_factor: int = -1,
        read_timeout_ms: int = 30000,
    ) -> None:
        settings = TopicSettings(
            name=topic,
            setting="offset.storage.topic",
            purpose="source connector offsets",
            partitions=partitions,
            replication_factor=replication_factor,
        )
        self._log = TopicLog(
            settings, client_config, self._consume, read_timeout_ms=read_timeout_ms
        )
        self._timeout_ms = read_timeout_ms
        self._lock = threading.Lock()
        self._offsets: dict[str, dict[str, Offset]] = {}
        self._in_flight: list[concurrent.futures.Future[RecordMetadata]] = []
        self._flush_lock = threading.Lock()

    @property
    def topic(self) -> str:
        return self._log.topic

    def start(self) -> None:
        self._log.start()

    def stop(self) -> None:
        self._log.stop()

    def get(self, connector: str, partition: Mapping[str, Any]) -> Offset | None:
        self._read_to_end()
        with self._lock:
            offset = self._offsets.get(connector, {}).get(partition_key(partition))
            return None if offset is None else dict(offset)

    def get_all(self, connector: str) -> dict[str, Offset]:
        self._read_to_end()
        with self._lock:
            return {k: dict(v) for k, v in self._offsets.get(connector, {}).items()}

    def put_all(self, connector: str, offsets: Mapping[str, Offset | None]) -> None:
        """Send each partition's offset (None: a tombstone); :meth:`flush` waits for them."""
        sent = []
        try:
            for key, offset in offsets.items():
                partition = partition_of(key)
                value = None if offset is None else topic_json.encode(offset)
                sent.append(self._log.send(offset_key(connector, partition), value))
        except TopicStoreError as exc:
            raise OffsetStoreError(str(exc)) from exc
        with self._lock:
            self._in_flight.extend(sent)
            if len(self._in_flight) > _IN_FLIGHT_MAX:
                self._in_flight = [f for f in self._in_flight if not f.done()]
            for key, offset in offsets.items():
                self._remember(connector, partition_key(partition_of(key)), offset)

    def flush(self) -> None:
        """Wait until every offset put so far is acknowledged (OffsetStoreError if one failed)."""
        with self._flush_lock:
            with self._lock:
                waiting, self._in_flight = self._in_flight, []
            try:
                for future in waiting:
                    future.result(self._timeout_ms / 1000)
            except Exception as exc:
                raise OffsetStoreError(
                    f"committing source offsets to topic {self.topic!r} failed: {exc}"
                ) from exc

    def _read_to_end(self) -> None:
        """Flush this worker's puts, then read what every worker committed."""
        self.flush()
        try:
            self._log.read_to_end()
        except TopicStoreError as exc:
            raise OffsetStoreError(str(exc)) from exc

    def _remember(self, connector: str, key: str, offset: Offset | None) -> None:
        entries = self._offsets.setdefault(connector, {})
        if offset is None:
            entries.pop(key, None)
        else:
            entries[key] = dict(offset)
        if not entries:
            del self._offsets[connector]

    def _consume(self, record: ConsumerRecord) -> None:
        try:
            if record.key is None:
                raise ValueError("no key")
            connector, partition = parse_offset_key(record.key)
            offset = None if record.value is None else topic_json.decode(record.value)
            if offset is not None and not isinstance(offset, dict):
                raise ValueError(f"the offset is not a JSON object: {offset!r}")
        except ValueError as exc:
            log.error(
                "skipping offset record %d-%d of topic %s: %s",
                record.partition,
                record.offset,
                record.topic,
                exc,
            )
            return
        with self._lock:
            self._remember(connector, partition_key(partition), offset)
