"""The clients of a fault-injection run: idempotent acks=all producers and a consumer.

Each runs in a thread until :meth:`stop`, writes what it was told to a shared
:class:`~harness.faults.history.History`, and never raises: the nemesis makes
errors normal. A producer whose client reports a fatal error (its producer id
fenced, say) records it and carries on with a new client under a new name, so
the checker's per-producer order stays about one idempotent session.

- :class:`LibrdkafkaProducer`: confluent_kafka (librdkafka), ``acks=all``,
  ``enable.idempotence=true``;
- :class:`SluiceProducer`: ours, :class:`log_engine.client.SyncProducer`;
- :class:`LibrdkafkaConsumer`: reads every partition from the start (assigned,
  no group), recording each record it is given;
- :func:`read_final`: each partition's records below its high watermark, as a
  consumer reads them after recovery.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import Any

import confluent_kafka

from harness.faults.history import History

_POLL_S = 0.05
_CLOSE_S = 30.0  # at the end, after recovery: what is not delivered by then failed


def delivered(msg: confluent_kafka.Message) -> tuple[int, int, bytes]:
    """``(partition, offset, value)`` of a librdkafka message (all set on the ones
    this package produces and reads)."""
    partition, offset, value = msg.partition(), msg.offset(), msg.value()
    assert partition is not None and offset is not None and value is not None
    return partition, offset, value


class _Worker(threading.Thread):
    def __init__(self, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self._stop_event = threading.Event()
        self.crash: BaseException | None = None

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        try:
            self.work()
        except BaseException as exc:  # reported by the test through .crash
            self.crash = exc

    def work(self) -> None:
        raise NotImplementedError


class _Producer(_Worker):
    """What both producers share: the history, the pacing, the idempotent acks=all base."""

    default_name = ""

    def __init__(
        self,
        history: History,
        bootstrap: str,
        topic: str,
        partitions: int,
        *,
        rate_per_s: float = 100.0,
        delivery_timeout_ms: int = 10_000,
        name: str | None = None,
    ) -> None:
        super().__init__(name or self.default_name)
        self.history = history
        self.topic = topic
        self.partitions = partitions
        self.interval_s = 1.0 / rate_per_s
        self.config: dict[str, Any] = {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
            "retry.backoff.ms": 100,
            **self.client_settings(delivery_timeout_ms),
        }
        self.generation = 0

    def client_settings(self, delivery_timeout_ms: int) -> dict[str, Any]:
        """The client's own keys for its timeouts and metadata refresh."""
        raise NotImplementedError


class LibrdkafkaProducer(_Producer):
    """librdkafka, idempotent ``acks=all``, ``rate_per_s`` records round-robin over partitions."""

    default_name = "rdk"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fatal = threading.Event()
        self._pending: dict[bytes, None] = {}
        self._lock = threading.Lock()

    def client_settings(self, delivery_timeout_ms: int) -> dict[str, Any]:
        return {
            "message.timeout.ms": delivery_timeout_ms,
            "socket.timeout.ms": 3000,
            "topic.metadata.refresh.interval.ms": 1000,
        }

    def _client(self) -> tuple[str, confluent_kafka.Producer]:
        self.generation += 1
        self._fatal.clear()
        name = f"{self.name}{self.generation}"

        def on_error(err: confluent_kafka.KafkaError) -> None:
            if err.fatal():
                self.history.event(f"{name}: fatal error {err}")
                self._fatal.set()

        return name, confluent_kafka.Producer({**self.config, "error_cb": on_error})

    def _on_delivery(self, err: Any, msg: confluent_kafka.Message) -> None:
        value = msg.value()
        assert value is not None
        with self._lock:
            self._pending.pop(value, None)
        if err is None:
            self.history.ack(value, *delivered(msg)[:2])
        else:
            self.history.fail(value, str(err))

    def work(self) -> None:
        name, producer = self._client()
        partition = 0
        next_at = time.monotonic()
        while not self._stop_event.is_set():
            if self._fatal.is_set():
                self._abandon(producer)
                name, producer = self._client()
            value = self.history.send(name, partition)
            with self._lock:
                self._pending[value] = None
            while True:
                try:
                    producer.produce(
                        self.topic, value, partition=partition, on_delivery=self._on_delivery
                    )
                    break
                except BufferError:
                    producer.poll(_POLL_S)
                except confluent_kafka.KafkaException as exc:
                    self.history.fail(value, str(exc))
                    self._fatal.set()
                    break
            partition = (partition + 1) % self.partitions
            producer.poll(0)
            next_at += self.interval_s
            delay = next_at - time.monotonic()
            if delay > 0:
                producer.poll(delay)
            else:
                next_at = time.monotonic()
        producer.flush(_CLOSE_S)
        self._abandon(producer)

    def _abandon(self, producer: confluent_kafka.Producer) -> None:
        """Whatever a dropped client still held is failed (stored or not: unknown)."""
        producer.poll(0)
        with self._lock:
            left = list(self._pending)
            self._pending.clear()
        for value in left:
            self.history.fail(value, "client dropped")


class SluiceProducer(_Producer):
    """Our client (:class:`log_engine.client.SyncProducer`), idempotent ``acks=all``."""

    default_name = "ours"

    def client_settings(self, delivery_timeout_ms: int) -> dict[str, Any]:
        return {
            "request.timeout.ms": min(5000, delivery_timeout_ms),
            "delivery.timeout.ms": delivery_timeout_ms,
            "metadata.max.age.ms": 5000,
        }

    def _client(self) -> tuple[str, Any]:
        from log_engine.client import SyncProducer

        self.generation += 1
        name = f"{self.name}{self.generation}"
        while True:
            try:
                return name, SyncProducer(self.config)
            except Exception as exc:  # no broker reachable right now
                self.history.event(f"{name}: cannot start: {exc!r}")
                if self._stop_event.wait(1.0):
                    raise

    def work(self) -> None:
        name, producer = self._client()
        partition = 0
        next_at = time.monotonic()
        try:
            while not self._stop_event.is_set():
                value = self.history.send(name, partition)
                try:
                    future = producer.send(self.topic, value, partition=partition)
                except Exception as exc:
                    self.history.fail(value, f"send refused: {exc!r}")
                    self.history.event(f"{name}: {exc!r}; a new client")
                    self._close(producer)
                    name, producer = self._client()
                    continue
                future.add_done_callback(self._callback(value))
                partition = (partition + 1) % self.partitions
                next_at += self.interval_s
                delay = next_at - time.monotonic()
                if delay > 0:
                    self._stop_event.wait(delay)
                else:
                    next_at = time.monotonic()
        finally:
            self._close(producer)

    def _callback(self, value: bytes) -> Any:
        def done(future: concurrent.futures.Future[Any]) -> None:
            try:
                metadata = future.result()
            except BaseException as exc:
                self.history.fail(value, repr(exc))
            else:
                self.history.ack(value, metadata.partition, metadata.offset)

        return done

    def _close(self, producer: Any) -> None:
        try:
            producer.close(_CLOSE_S)
        except Exception as exc:
            self.history.event(f"{self.name}: close: {exc!r}")


class LibrdkafkaConsumer(_Worker):
    """Reads every partition from its start and records each record it is given."""

    def __init__(self, history: History, bootstrap: str, topic: str, partitions: int) -> None:
        super().__init__("consumer")
        self.history = history
        self.topic = topic
        self.partitions = partitions
        self.bootstrap = bootstrap

    def work(self) -> None:
        consumer = confluent_kafka.Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": "nemesis-reader",
                "enable.auto.commit": False,
                "socket.timeout.ms": 3000,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )
        try:
            consumer.assign(
                [
                    confluent_kafka.TopicPartition(self.topic, p, confluent_kafka.OFFSET_BEGINNING)
                    for p in range(self.partitions)
                ]
            )
            while not self._stop_event.is_set():
                for message in consumer.consume(500, 0.2):
                    if message.error() is None:
                        self.history.consume(*delivered(message))
        finally:
            consumer.close()


def read_final(
    bootstrap: str, topic: str, partitions: int, timeout_s: float = 60.0
) -> tuple[dict[int, list[tuple[int, bytes]]], dict[int, int]]:
    """Each partition's ``(offset, value)`` records below its high watermark, and the
    high watermarks, as a fresh consumer reads them."""
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "nemesis-final", "enable.auto.commit": False}
    )
    try:
        high_watermarks = {}
        for p in range(partitions):
            tp = confluent_kafka.TopicPartition(topic, p)
            _, high = consumer.get_watermark_offsets(tp, timeout=timeout_s)
            high_watermarks[p] = high
        logs: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in range(partitions)
            ]
        )
        deadline = time.monotonic() + timeout_s

        def done(p: int) -> bool:
            if not high_watermarks[p]:
                return True
            return bool(logs[p]) and logs[p][-1][0] + 1 >= high_watermarks[p]

        while not all(done(p) for p in range(partitions)):
            if time.monotonic() > deadline:
                reached = {p: (logs[p][-1][0] + 1 if logs[p] else 0) for p in logs}
                raise AssertionError(
                    f"final read did not reach the high watermarks {high_watermarks} "
                    f"within {timeout_s}s (reached {reached})"
                )
            for message in consumer.consume(1000, 0.5):
                if message.error() is not None:
                    continue
                p, offset, value = delivered(message)
                if offset < high_watermarks[p]:
                    logs[p].append((offset, value))
        return logs, high_watermarks
    finally:
        consumer.close()
