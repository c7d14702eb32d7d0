"""The producer's sender task: accumulator -> Produce requests -> futures.

One loop on the event loop: expire batches older than ``delivery.timeout.ms``,
ask the accumulator which brokers have ready batches, drain one Produce
request per broker (every ready partition it leads, up to
``max.request.size``), send it without waiting (the connection pipelines up to
``max.in.flight.requests.per.connection``) and sleep until the next batch
lingers long enough or something wakes it.

Responses complete the records' futures. A retriable error (leader moved,
connection lost, timeout) puts the batch back for a retry after
``retry.backoff.ms``, until ``retries`` or the delivery timeout run out; any
other error fails the batch's futures.

With idempotence the sender first gets a producer id (InitProducerId) and
stamps each batch, when first drained, with the partition's next sequence
number; retries resend the same bytes, so the broker drops duplicates. When
sequence state is lost (unknown producer id, a sequence gap after an expired
batch) the sender takes a new producer id and restarts the sequences.

A batch of several records refused as too large (MESSAGE_TOO_LARGE,
RECORD_LIST_TOO_LARGE) is split, as Kafka's producer does, into batches within
the limit the broker names (``max.message.bytes=N`` in its message; halves
otherwise), queued at the head of its partition in record order, with the
batch's own sequence numbers. A single record still too large fails with an
error naming the partition, its size and the limit; with idempotence, the
batches stamped after it are renumbered to close the gap it leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
from typing import Any

from log_engine.client import errors
from log_engine.client.accumulator import RecordAccumulator
from log_engine.client.cluster import Cluster
from log_engine.client.config import ProducerConfig
from log_engine.client.producer_batch import ProducerBatch
from log_engine.client.types import TopicPartition
from log_engine.errors import ErrorCode, RecordListTooLargeError
from log_engine.protocol import ApiKey
from log_engine.records.compression import Compression

log = logging.getLogger(__name__)

_SEQUENCE_MAX = 2**31 - 1
_PRODUCER_STATE_ERRORS = frozenset(
    {
        ErrorCode.UNKNOWN_PRODUCER_ID,
        ErrorCode.INVALID_PRODUCER_EPOCH,
        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
    }
)
_TOO_LARGE = frozenset({ErrorCode.MESSAGE_TOO_LARGE, RecordListTooLargeError.errno})
_LIMIT = re.compile(r"max\.message\.bytes=(\d+)")  # how our broker states its limit


class Sender:
    """Drains the accumulator into Produce requests and resolves the results."""

    def __init__(
        self,
        config: ProducerConfig,
        cluster: Cluster,
        accumulator: RecordAccumulator,
        on_batch_done: Any,
    ) -> None:
        self._config = config
        self._cluster = cluster
        self._acc = accumulator
        self._on_batch_done = on_batch_done
        self._compression = Compression.from_name(config.compression_type)
        self._wakeup = asyncio.Event()
        self._requests: set[asyncio.Task[None]] = set()
        self._connecting: set[int] = set()
        self._node_in_flight: dict[int, int] = {}
        self._max_in_flight = config.max_in_flight_requests_per_connection
        self.fatal_error: errors.KafkaError | None = None
        self._idempotent = config.idempotent
        self._producer_id = -1
        self._producer_epoch = -1
        self._next_sequence: dict[TopicPartition, int] = {}
        self._closing = False
        self._backoff_s = config.retry_backoff_ms / 1000
        self._delivery_timeout_s = config.delivery_timeout_ms / 1000

    def wakeup(self) -> None:
        """Make the loop look at the accumulator now (call on the event loop)."""
        self._wakeup.set()

    @property
    def in_flight(self) -> int:
        """Produce requests awaiting their response."""
        return len(self._requests)

    async def run(self) -> None:
        """The send loop; returns once closing and nothing is left to send."""
        while True:
            self._wakeup.clear()
            if self.fatal_error is not None:
                self.fail_all(self.fatal_error)
                delay_s = 1.0
            elif self._idempotent and self._producer_id < 0:
                await self._init_producer_id()
                continue
            else:
                delay_s = self._run_once(time.monotonic())
            if self._closing and not self._acc.incomplete:
                break
            if self._wakeup.is_set():
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay_s):
                    await self._wakeup.wait()
        if self._requests:
            await asyncio.gather(*self._requests, return_exceptions=True)

    def begin_close(self) -> None:
        """Send what is queued (no more lingering), then let :meth:`run` return."""
        self._closing = True
        self._acc.closing = True
        self.wakeup()

    def fail_all(self, exc: BaseException) -> None:
        """Fail every queued batch (closing without waiting)."""
        for batch in self._acc.drop_all():
            self._finish(batch, exc)

    # -- one pass ------------------------------------------------------------------------

    def _run_once(self, now: float) -> float:
        for batch in self._acc.expire(now, self._delivery_timeout_s):
            self._expire(batch, now)
        metadata = self._cluster.metadata
        nodes, delay_s, unknown_leader = self._acc.ready(metadata, now)
        if unknown_leader:
            self._cluster.request_refresh()
            delay_s = min(delay_s, max(self._backoff_s, 0.01))
        for node in nodes:
            if self._cluster.open_connection(node) is None:
                self._connect_later(node)
                continue
            if self._node_in_flight.get(node, 0) >= self._max_in_flight:
                continue
            batches = self._acc.drain(metadata, node, self._config.max_request_size, now)
            if batches:
                self._stamp(batches)
                self._node_in_flight[node] = self._node_in_flight.get(node, 0) + 1
                task = asyncio.get_running_loop().create_task(self._produce(node, batches))
                self._requests.add(task)
                task.add_done_callback(self._requests.discard)
        return delay_s

    def _connect_later(self, node: int) -> None:
        if node in self._connecting:
            return
        self._connecting.add(node)

        async def connect() -> None:
            try:
                await self._cluster.connection(node)
            except errors.KafkaError as exc:
                log.debug("connecting to broker %s failed: %s", node, exc)
                self._cluster.request_refresh()
                await asyncio.sleep(self._backoff_s)
            finally:
                self._connecting.discard(node)
                self.wakeup()

        task = asyncio.get_running_loop().create_task(connect())
        self._requests.add(task)
        task.add_done_callback(self._requests.discard)

    def _stamp(self, batches: list[ProducerBatch]) -> None:
        """Seal newly drained batches; with idempotence give them their sequences."""
        for batch in batches:
            if not self._idempotent:
                if not batch.sealed:
                    batch.seal(self._compression)
                continue
            if batch.sealed and (batch.producer_id, batch.producer_epoch) == (
                self._producer_id,
                self._producer_epoch,
            ):
                continue  # a retry: same bytes as before
            sequence = self._next_sequence.get(batch.tp, 0)
            self._next_sequence[batch.tp] = (sequence + batch.count) & _SEQUENCE_MAX
            batch.seal(self._compression, self._producer_id, self._producer_epoch, sequence)

    # -- requests ------------------------------------------------------------------------

    async def _produce(self, node: int, batches: list[ProducerBatch]) -> None:
        topics: dict[str, list[dict[str, Any]]] = {}
        for batch in batches:
            topics.setdefault(batch.tp.topic, []).append(
                {"index": batch.tp.partition, "records": batch.wire}
            )
        body = {
            "transactional_id": None,
            "acks": self._config.acks,
            "timeout_ms": self._config.request_timeout_ms,
            "topic_data": [
                {"name": name, "partition_data": parts} for name, parts in topics.items()
            ],
        }
        try:
            conn = await self._cluster.connection(node)
            if self._config.acks == 0:
                await conn.send_no_response(ApiKey.PRODUCE, body)
                for batch in batches:
                    self._complete(batch, -1, -1)
                return
            response = await conn.send(ApiKey.PRODUCE, body)
        except errors.KafkaError as exc:
            self._cluster.request_refresh()
            for batch in batches:
                self._retry_or_fail(batch, exc.errno, exc)
            return
        finally:
            self._node_in_flight[node] -= 1
            self.wakeup()
        self._handle_response(batches, response)

    def _handle_response(self, batches: list[ProducerBatch], response: dict[str, Any]) -> None:
        by_tp = {batch.tp: batch for batch in batches}
        for topic in response["responses"]:
            for part in topic["partition_responses"]:
                batch = by_tp.pop(TopicPartition(topic["name"], part["index"]), None)
                if batch is not None:
                    self._handle_partition(batch, part)
        for batch in by_tp.values():  # a broker that left a partition out of its answer
            self._retry_or_fail(
                batch,
                ErrorCode.NETWORK_EXCEPTION,
                errors.network_error(f"no produce result for {batch.tp}"),
            )

    def _handle_partition(self, batch: ProducerBatch, part: dict[str, Any]) -> None:
        code = part["error_code"]
        if code == ErrorCode.NONE:
            self._complete(batch, part["base_offset"], part.get("log_append_time_ms", -1))
        elif code == ErrorCode.DUPLICATE_SEQUENCE_NUMBER:
            self._complete(batch, -1, -1)  # written by an earlier attempt
        elif code in _TOO_LARGE:
            self._too_large(batch, code, part.get("error_message") or "")
        else:
            message = part.get("error_message") or ""
            exc = errors.kafka_error(code, f"producing to {batch.tp}: {message}".rstrip(": "))
            if code in errors.METADATA_ERRORS:
                self._cluster.request_refresh()
            self._retry_or_fail(batch, code, exc)

    def _too_large(self, batch: ProducerBatch, code: int, message: str) -> None:
        """Split a refused batch of several records; fail a single record with the reason."""
        match = _LIMIT.search(message)
        limit = int(match.group(1)) if match else None
        partition = f"{batch.tp.topic}-{batch.tp.partition}"
        if batch.count > 1:
            size = len(batch.wire or b"")
            pieces = batch.split(limit)
            log.info(
                "%s: the broker refused a batch of %d records (%d bytes) as too large (%s); "
                "split in %d",
                partition, batch.count, size, message, len(pieces),
            )
            self._acc.split_and_reenqueue(batch, pieces)
            return
        record_bytes = len(batch.records_bytes())
        where = (
            f"the topic's max.message.bytes={limit}"
            if limit is not None
            else "the broker's message.max.bytes / the topic's max.message.bytes"
        )
        exc = errors.kafka_error(
            code,
            f"producing to {partition}: a record of {record_bytes} bytes exceeds {where}"
            + (f" (broker: {message})" if message else ""),
        )
        if self._idempotent:
            self._close_sequence_gap(batch)
        self._finish(batch, exc)

    def _close_sequence_gap(self, failed: ProducerBatch) -> None:
        """Renumber the batches stamped after ``failed``: the broker never took its range."""
        if failed.base_sequence < 0 or (failed.producer_id, failed.producer_epoch) != (
            self._producer_id,
            self._producer_epoch,
        ):
            return  # stamped under an older producer id: the sequences restarted anyway
        for batch in self._acc.sequenced_after(failed):
            sequence = (batch.base_sequence - failed.count) & _SEQUENCE_MAX
            batch.seal(self._compression, self._producer_id, self._producer_epoch, sequence)
        tp = failed.tp
        self._next_sequence[tp] = (self._next_sequence.get(tp, 0) - failed.count) & _SEQUENCE_MAX

    def _retry_or_fail(self, batch: ProducerBatch, code: int, exc: BaseException) -> None:
        now = time.monotonic()
        # Behind a batch that failed first, or one the broker has not answered yet, a
        # sequence gap is expected: retry in order behind it.
        retriable = errors.is_retriable(exc) or (
            code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
            and (self._acc.is_retrying(batch.tp) or self._acc.has_earlier_unresolved(batch))
        )
        expired = now - batch.created_monotonic >= self._delivery_timeout_s
        if retriable and batch.attempts < self._config.retries and not expired:
            self._acc.reenqueue(batch, self._backoff_s)
            return
        if self._idempotent and code in _PRODUCER_STATE_ERRORS:
            self._reset_producer_id()
        self._finish(batch, exc)

    def _expire(self, batch: ProducerBatch, now: float) -> None:
        age_ms = int((now - batch.created_monotonic) * 1000)
        if batch.base_sequence >= 0:
            self._reset_producer_id()  # the sequence now has a gap
        self._finish(
            batch,
            errors.timeout_error(
                f"expiring {batch.count} record(s) for {batch.tp}: {age_ms} ms has passed "
                "since batch creation (delivery.timeout.ms)"
            ),
        )

    def _complete(self, batch: ProducerBatch, base_offset: int, log_append_time: int) -> None:
        batch.complete(base_offset, log_append_time)
        self._finished(batch)

    def _finish(self, batch: ProducerBatch, exc: BaseException) -> None:
        batch.fail(exc)
        self._finished(batch)

    def _finished(self, batch: ProducerBatch) -> None:
        self._acc.finished(batch)
        parent = batch.parent
        if parent is not None and parent.done:  # the last piece of a split batch
            self._acc.finished(parent)
        self._on_batch_done()

    # -- idempotence ---------------------------------------------------------------------

    async def _init_producer_id(self) -> None:
        body = {
            "transactional_id": None,
            "transaction_timeout_ms": self._config.transaction_timeout_ms,
        }
        try:
            conn = await self._cluster.any_connection()
            response = await conn.send(ApiKey.INIT_PRODUCER_ID, body)
            errors.check_error(response["error_code"], "InitProducerId")
        except errors.KafkaError as exc:
            if exc.errno == ErrorCode.UNSUPPORTED_VERSION and (
                "enable_idempotence" not in self._config.model_fields_set
            ):
                # On by default only: a broker without InitProducerId gets plain batches.
                log.warning("broker cannot give producer ids; idempotence is off: %s", exc)
                self._idempotent = False
            elif not exc.retriable:
                log.error("cannot get a producer id: %s", exc)
                self.fatal_error = exc
            else:
                await asyncio.sleep(self._backoff_s)
            return
        self._producer_id = response["producer_id"]
        self._producer_epoch = response["producer_epoch"]
        self._next_sequence.clear()
        log.debug("producer id %s epoch %s", self._producer_id, self._producer_epoch)

    def _reset_producer_id(self) -> None:
        if self._producer_id < 0:
            return
        log.info("resetting producer id %s after losing sequence state", self._producer_id)
        self._producer_id = -1
        self._producer_epoch = -1
        self._next_sequence.clear()
        self._acc.forget_retries()
