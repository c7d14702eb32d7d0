"""A compacted topic read into memory and kept current: the role of Kafka's KafkaBasedLog.

Distributed workers keep their shared state (connector configs, source
offsets, statuses) in three internal topics. Each store owns one
:class:`TopicLog`, which

1. creates the topic when it is missing, with the configured partitions and
   replication factor and ``cleanup.policy=compact``, and refuses a topic
   that exists but is not compacted (:class:`TopicStoreError`), as Kafka does:
   with ``delete`` the broker would eventually drop configs and offsets;
2. on :meth:`TopicLog.start`, reads every partition from the beginning up to
   the end offsets fetched at that moment (:meth:`TopicLog.read_to_end`), so
   the store's state is complete before the worker uses it;
3. then keeps consuming in a background thread, calling ``consumed(record)``
   for each record in partition order (the store updates its view there);
4. writes with an idempotent ``acks=all`` producer (:meth:`TopicLog.send`);
   :meth:`TopicLog.read_to_end` after a write gives read-your-writes.

Keys and values are bytes; a None value is a tombstone. The worker reaches the
broker only through :mod:`log_engine.client` (a consumer with manual
assignment and no group, a producer and an admin client sharing one loop
thread).

Threads: ``consumed`` runs on the log's own thread ("<topic>-reader"), never
concurrently with itself; an exception it raises is logged and the record
skipped (one bad record must not stop a worker). ``send`` and
``read_to_end`` may be called from any thread but the reader's own (there
``read_to_end`` would wait for itself: it raises TopicStoreError instead).
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from log_engine.client import (
    ConfigResource,
    ConsumerRecord,
    LoopThread,
    RecordMetadata,
    SyncAdmin,
    SyncConsumer,
    SyncProducer,
    TopicPartition,
)

log = logging.getLogger(__name__)

RecordCallback = Callable[[ConsumerRecord], None]
_POLL_TIMEOUT_S = 0.2
_ERROR_BACKOFF_S = 0.5
_TOPIC_METADATA_WAIT_S = 30.0


class TopicStoreError(Exception):
    """An internal topic cannot be used (not compacted, wrong partition count), or
    the log could not be read or written in time."""


@dataclass(frozen=True, slots=True)
class TopicSettings:
    """Which topic a store uses and how to create it.

    ``setting`` is the worker key that named the topic (``config.storage.topic``)
    and ``purpose`` what it holds, both for error messages. ``partitions_required``
    is set for the config topic, which must have exactly one partition.
    ``replication_factor`` -1 and ``partitions`` -1 take the broker's defaults.
    """

    name: str
    setting: str
    purpose: str
    partitions: int = 1
    replication_factor: int = -1
    partitions_required: int | None = None


class TopicLog:
    """One internal topic: created if missing, read to the end at start, then followed.

    Lifecycle: construct (connects to nothing) -> :meth:`start` (creates or
    checks the topic, reads it to the end, starts the reader thread;
    TopicStoreError on a topic Kafka Connect would refuse) -> :meth:`send` /
    :meth:`read_to_end` ... -> :meth:`stop` (flushes what was sent).
    """

    def __init__(
        self,
        settings: TopicSettings,
        client_config: Mapping[str, Any],
        consumed: RecordCallback,
        *,
        read_timeout_ms: int = 30000,
    ) -> None:
        self.settings = settings
        self._client_config = dict(client_config)
        self._consumed = consumed
        self._read_timeout_ms = read_timeout_ms
        self._loop: LoopThread | None = None
        self._admin: SyncAdmin | None = None
        self._consumer: SyncConsumer | None = None
        self._producer: SyncProducer | None = None
        self._partitions: list[TopicPartition] = []
        self._positions: dict[TopicPartition, int] = {}
        self._progress = threading.Condition()
        self._waiting = 0  # read_to_end callers waiting for positions
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def topic(self) -> str:
        return self.settings.name

    @property
    def partitions(self) -> list[TopicPartition]:
        """The topic's partitions (known after :meth:`start`)."""
        return list(self._partitions)

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Create or check the topic, read it to the end, start following it."""
        self._loop = LoopThread(f"{self.topic}-client")
        try:
            self._admin = SyncAdmin(self._client_config, loop_thread=self._loop)
            count = self._ensure_topic(self._admin)
            self._partitions = [TopicPartition(self.topic, p) for p in range(count)]
            self._consumer = SyncConsumer(
                {
                    **self._client_config,
                    "enable.auto.commit": "false",
                    "auto.offset.reset": "earliest",
                },
                loop_thread=self._loop,
            )
            self._consumer.assign(self._partitions)
            self._consumer.seek_to_beginning(self._partitions)
            self._producer = SyncProducer(
                {
                    "linger.ms": "0",  # control-plane writes: latency over batching
                    **self._client_config,
                    "acks": "all",
                    "enable.idempotence": "true",
                },
                loop_thread=self._loop,
            )
            self._thread = threading.Thread(
                target=self._follow, name=f"{self.topic}-reader", daemon=True
            )
            self._thread.start()
            self.read_to_end()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Flush what was sent, stop following the topic and release the clients."""
        self._stopping.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        timeout_s = self._read_timeout_ms / 1000
        for client in (self._producer, self._consumer, self._admin):
            if client is None:
                continue
            try:
                if isinstance(client, SyncProducer):
                    client.close(timeout_s)  # a lost broker must not hang the worker's stop
                else:
                    client.close()
            except Exception as exc:  # closing after a broker loss must not hide the cause
                log.warning("closing a client of topic %s failed: %s", self.topic, exc)
        self._producer = self._consumer = self._admin = None
        if self._loop is not None:
            self._loop.stop()
            self._loop = None

    # -- writing and reading -------------------------------------------------------------

    def send(
        self, key: bytes, value: bytes | None, partition: int | None = None
    ) -> concurrent.futures.Future[RecordMetadata]:
        """Queue one record (None value: a tombstone); the future resolves once acknowledged.

        Without ``partition`` the producer's murmur2 partitioner picks one from the key,
        as Kafka's producer does, so Java workers find the same key in the same place.
        """
        if self._producer is None:
            raise TopicStoreError(f"the log of topic {self.topic!r} is not started")
        return self._producer.send(self.topic, value, key=key, partition=partition)

    def flush(self, timeout_ms: int | None = None) -> None:
        """Wait until everything sent so far is acknowledged or failed."""
        if self._producer is None:
            raise TopicStoreError(f"the log of topic {self.topic!r} is not started")
        timeout_s = (timeout_ms if timeout_ms is not None else self._read_timeout_ms) / 1000
        self._producer.flush(timeout_s)

    def read_to_end(self, timeout_ms: int | None = None) -> None:
        """Block until every record written before this call has been ``consumed``.

        Fetches the partitions' end offsets, then waits for the reader thread to
        reach them (TopicStoreError after ``timeout_ms``, by default the log's
        read timeout).
        """
        admin = self._admin
        if admin is None:
            raise TopicStoreError(f"the log of topic {self.topic!r} is not started")
        self.check_not_reader_thread("read_to_end")
        timeout_ms = self._read_timeout_ms if timeout_ms is None else timeout_ms
        deadline = time.monotonic() + timeout_ms / 1000
        try:
            ends = admin.list_offsets(dict.fromkeys(self._partitions, "latest"))
        except Exception as exc:
            raise TopicStoreError(
                f"cannot read the end offsets of topic {self.topic!r}: {exc}"
            ) from exc
        with self._progress:
            self._waiting += 1
            try:
                self._wait_for(ends, deadline, timeout_ms)
            finally:
                self._waiting -= 1

    def _wait_for(
        self, ends: Mapping[TopicPartition, tuple[int, int]], deadline: float, timeout_ms: int
    ) -> None:
        """Wait, with the progress condition held, until the reader reached ``ends``."""
        while not self._reached({tp: end for tp, (end, _) in ends.items()}):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self._stopping.is_set():
                raise TopicStoreError(
                    f"did not read topic {self.topic!r} to its end {_show(ends)} "
                    f"within {timeout_ms} ms (read so far: {_show_positions(self._positions)})"
                )
            self._progress.wait(remaining)

    def check_not_reader_thread(self, what: str) -> None:
        """TopicStoreError if called on the reader thread, where waiting for it would hang."""
        if threading.current_thread() is self._thread:
            raise TopicStoreError(
                f"{what} on topic {self.topic!r} called from its own reader thread "
                "(a store's listener must not write to the store or wait for it)"
            )

    def _reached(self, ends: Mapping[TopicPartition, int]) -> bool:
        return all(self._positions.get(tp, 0) >= end for tp, end in ends.items())

    # -- the reader thread ---------------------------------------------------------------

    def _follow(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        while not self._stopping.is_set():
            try:
                records = consumer.poll(_POLL_TIMEOUT_S)
                for record in records:
                    self._deliver(record)
                with self._progress:
                    idle = not records and not self._waiting and self._positions
                if idle:
                    continue  # nothing new and nobody asking: spare the position calls
                positions = {tp: consumer.position(tp) for tp in self._partitions}
            except Exception as exc:
                if self._stopping.is_set():
                    return
                log.warning("reading topic %s failed, retrying: %s", self.topic, exc)
                self._stopping.wait(_ERROR_BACKOFF_S)
                continue
            with self._progress:
                self._positions = positions
                self._progress.notify_all()
        with self._progress:
            self._progress.notify_all()

    def _deliver(self, record: ConsumerRecord) -> None:
        try:
            self._consumed(record)
        except Exception:
            log.exception(
                "skipping record %s-%d@%d of topic %s: its handler failed",
                record.topic,
                record.partition,
                record.offset,
                self.topic,
            )

    # -- the topic -----------------------------------------------------------------------

    def _ensure_topic(self, admin: SyncAdmin) -> int:
        """Create the topic if missing, check it otherwise; its partition count."""
        s = self.settings
        try:
            admin.create_topic(
                s.name,
                s.partitions,
                s.replication_factor,
                {"cleanup.policy": "compact"},
                if_not_exists=True,
            )
        except Exception as exc:
            raise TopicStoreError(
                f"cannot create topic {s.name!r} ({s.setting}, {s.purpose}) with "
                f"{s.partitions} partition(s) and replication factor {s.replication_factor}: {exc}"
            ) from exc
        self._check_cleanup_policy(admin)
        count = self._partition_count(admin)
        if s.partitions_required is not None and count != s.partitions_required:
            raise TopicStoreError(
                f"topic {s.name!r} supplied via the {s.setting!r} property is required to have "
                f"{s.partitions_required} partition(s) to keep {s.purpose} consistent, but it "
                f"has {count}; point {s.setting} at another topic"
            )
        return count

    def _check_cleanup_policy(self, admin: SyncAdmin) -> None:
        s = self.settings
        resource = ConfigResource("topic", s.name)
        try:
            entries = admin.describe_configs([resource])[resource]
        except Exception as exc:
            raise TopicStoreError(f"cannot read the configs of topic {s.name!r}: {exc}") from exc
        entry = entries.get("cleanup.policy")
        policies = {p.strip() for p in (entry.value or "").split(",")} if entry else set()
        if policies != {"compact"}:
            found = entry.value if entry is not None else "(not reported)"
            raise TopicStoreError(
                f"topic {s.name!r} supplied via the {s.setting!r} property is required to have "
                f"'cleanup.policy=compact' to keep {s.purpose} for good, but it has "
                f"'cleanup.policy={found}'; the broker would eventually delete them. Point "
                f"{s.setting} at a compacted topic (or alter this one to cleanup.policy=compact)"
            )

    def _partition_count(self, admin: SyncAdmin) -> int:
        deadline = time.monotonic() + _TOPIC_METADATA_WAIT_S
        while True:
            described = admin.describe_topics([self.topic]).get(self.topic)
            if described is not None and described.partitions:
                return len(described.partitions)
            if time.monotonic() > deadline:
                raise TopicStoreError(f"topic {self.topic!r} has no partitions in the metadata")
            time.sleep(0.1)


def _show(ends: Mapping[TopicPartition, tuple[int, int]]) -> str:
    return "{" + ", ".join(f"{tp.partition}: {end}" for tp, (end, _) in sorted(ends.items())) + "}"


def _show_positions(positions: Mapping[TopicPartition, int]) -> str:
    return "{" + ", ".join(f"{tp.partition}: {p}" for tp, p in sorted(positions.items())) + "}"
