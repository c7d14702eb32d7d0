"""MqttSink: publish records to MQTT; offsets committed only after the broker acknowledged.

Confluent's MqttSinkConnector keys (``mqtt.server.uri``, ``mqtt.qos``,
``mqtt.retain``, ``mqtt.username``, ...; connection keys in
:mod:`connectors.mqtt.config`) plus ``mqtt.topic``, a topic template
(``${topic}``, ``${key}``, ``${partition}``; see :mod:`connectors.mqtt.payload`
for templates and payload encoding).

Delivery is at-least-once. ``put`` checks the whole batch first (topic
name valid, payload within ``mqtt.max.payload.bytes`` and the broker's MQTT 5
Maximum Packet Size) and raises DataError before publishing any of it, so the
runtime can retry record by record and send only the bad ones to the
dead-letter queue. It then publishes and keeps each ``MQTTMessageInfo``.
``flush`` (the runtime's ``pre_commit``) waits until every one is acknowledged
(PUBACK at QoS 1, PUBCOMP at QoS 2, written to the socket at QoS 0); only
then may the runtime commit the offsets. Disconnected, ``put`` and ``flush``
raise RetriableError; after the reconnection paho sends its unacknowledged
QoS 1/2 messages again, and the task republishes those that never left
(refused while disconnected, or QoS 0 lost with the connection).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt

from connectors.api import (
    DataError,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from connectors.mqtt.check import check_connection
from connectors.mqtt.config import MqttSinkConfig
from connectors.mqtt.connection import MqttConnection
from connectors.mqtt.payload import TopicTemplate, encode_payload

log = logging.getLogger(__name__)

PACKET_OVERHEAD_BYTES = 16  # fixed header, topic length, packet id, empty properties
WAIT_SLICE_S = 0.2


class MqttSinkConnector(SinkConnector):
    """Publishes the records of its topics to an MQTT broker."""

    config_model = MqttSinkConfig
    aliases = (
        "MqttSink",
        "MqttSinkConnector",
        "io.confluent.connect.mqtt.MqttSinkConnector",
    )

    def __init__(self) -> None:
        super().__init__()
        self._props: dict[str, str] = {}

    def start(self, props: Mapping[str, str]) -> None:
        TopicTemplate(MqttSinkConfig.from_props(props).topic)
        self._props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return MqttSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def check(self, props: Mapping[str, str]) -> list[str]:
        return check_connection(MqttSinkConfig.from_props(props))


@dataclass(slots=True)
class _Pending:
    """One publication not yet acknowledged."""

    topic: str
    payload: bytes
    info: mqtt.MQTTMessageInfo
    generation: int


class MqttSinkTask(SinkTask):
    """Publishes, then waits for the broker's acknowledgements in ``flush``."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: list[_Pending] = []
        self._connection: MqttConnection | None = None
        self._counts_lock = threading.Lock()
        self._published = 0
        self._acked = 0
        self._republished = 0

    def start(self, props: Mapping[str, str]) -> None:
        config = MqttSinkConfig.from_props(props)
        self._config = config
        self._template = TopicTemplate(config.topic)
        task_id = self.context.task_id if self.context is not None else 0
        client_id = config.client_id or f"sluice-{props.get('name', 'mqtt-sink')}-{task_id}"
        if config.client_id and task_id:
            client_id = f"{config.client_id}-{task_id}"  # two tasks may not share one id
        self._connection = MqttConnection(
            config, client_id, clean_session=config.clean_session, metrics=self.metrics
        )
        self._published_metric = self.metrics.counter(
            "mqtt_messages_published", "Messages handed to the MQTT client for publishing."
        )
        self._in_flight_metric = self.metrics.gauge(
            "mqtt_messages_in_flight", "Messages published and not yet acknowledged by the broker."
        )
        self._connection.client.max_inflight_messages_set(config.max_inflight)
        self._connection.start()
        self._connection.wait_connected(min(config.connect_timeout_s, 1.0))

    # ---------------------------------------------------------------- put

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        connection = self._require_connection()
        messages = [self._message(record, connection) for record in records]
        if len(self._pending) >= self._config.max_pending:
            self.flush({})
        client = connection.client
        qos, retain = self._config.qos, self._config.retain
        for index, (topic, payload) in enumerate(messages):
            if not connection.connected:
                self._published_count(index)
                raise RetriableError(self._disconnected_text("publishing"))
            generation = connection.generation
            info = client.publish(topic, payload, qos=qos, retain=retain)
            self._pending.append(_Pending(topic, payload, info, generation))
        self._published_count(len(messages))

    def _message(self, record: SinkRecord, connection: MqttConnection) -> tuple[str, bytes]:
        """The (topic, payload) of ``record``; DataError when the broker could not take it."""
        topic = self._template.render(record)
        payload = encode_payload(record.value)
        limit = self._config.max_payload_bytes
        if len(payload) > limit:
            raise DataError(
                f"a {len(payload)}-byte payload for MQTT topic {topic!r} is over "
                f"mqtt.max.payload.bytes ({limit}); record {record.topic}-{record.partition}"
                f"@{record.kafka_offset}"
            )
        broker_max = connection.max_packet_bytes
        size = len(payload) + len(topic.encode()) + PACKET_OVERHEAD_BYTES
        if broker_max is not None and size > broker_max:
            raise DataError(
                f"a {len(payload)}-byte payload for MQTT topic {topic!r} makes a packet over "
                f"the broker's Maximum Packet Size ({broker_max} bytes); record "
                f"{record.topic}-{record.partition}@{record.kafka_offset}"
            )
        return topic, payload

    def _published_count(self, count: int) -> None:
        with self._counts_lock:
            self._published += count
        self._published_metric.inc(count)
        self._in_flight_metric.set(len(self._pending))

    # ---------------------------------------------------------------- flush

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Return once every publication so far is acknowledged; RetriableError if not."""
        if not self._pending:
            return
        connection = self._require_connection()
        deadline = time.monotonic() + self._config.flush_timeout_s
        while self._pending:
            if not connection.connected:
                raise RetriableError(self._disconnected_text("waiting for acknowledgements"))
            self._republish_lost(connection)
            self._drop_acknowledged()
            if not self._pending:
                break
            if time.monotonic() >= deadline:
                raise RetriableError(
                    f"{len(self._pending)} MQTT messages not acknowledged by "
                    f"{connection.broker} within {self._config.flush_timeout_s}s; "
                    "offsets are not committed and the wait goes on at the next commit"
                )
            head = self._pending[0].info
            if head.rc == mqtt.MQTT_ERR_SUCCESS:
                with contextlib.suppress(RuntimeError, ValueError):
                    head.wait_for_publish(WAIT_SLICE_S)
            else:
                time.sleep(WAIT_SLICE_S / 10)

    def _drop_acknowledged(self) -> None:
        still = [p for p in self._pending if not _acknowledged(p.info)]
        with self._counts_lock:
            self._acked += len(self._pending) - len(still)
        self._pending = still
        self._in_flight_metric.set(len(still))

    def _republish_lost(self, connection: MqttConnection) -> None:
        """Publish again what paho will not resend: refused sends, QoS 0 of a lost connection."""
        generation = connection.generation
        qos, retain = self._config.qos, self._config.retain
        for pending in self._pending:
            info = pending.info
            lost = info.rc != mqtt.MQTT_ERR_SUCCESS or (
                qos == 0 and pending.generation != generation and not _acknowledged(info)
            )
            if lost and connection.connected:
                pending.info = connection.client.publish(
                    pending.topic, pending.payload, qos=qos, retain=retain
                )
                pending.generation = generation
                with self._counts_lock:
                    self._republished += 1

    # ---------------------------------------------------------------- lifecycle

    def _require_connection(self) -> MqttConnection:
        connection = self._connection
        assert connection is not None, "put()/flush() before start()"
        if not connection.connected:
            raise RetriableError(self._disconnected_text("publishing"))
        return connection

    def _disconnected_text(self, doing: str) -> str:
        assert self._connection is not None
        error = self._connection.last_error or "not connected yet"
        return (
            f"MQTT broker {self._connection.broker} not connected while {doing} "
            f"({len(self._pending)} messages awaiting acknowledgement): {error}"
        )

    def stop(self) -> None:
        if self._connection is not None:
            self._connection.stop()

    def details(self) -> dict[str, Any]:
        if self._connection is None:
            return {}
        details = self._connection.details()
        with self._counts_lock:
            details["messages.published"] = self._published
            details["messages.acked"] = self._acked
            details["messages.republished"] = self._republished
        return details


def _acknowledged(info: mqtt.MQTTMessageInfo) -> bool:
    """Whether the broker acknowledged ``info`` (never raises, unlike ``is_published``)."""
    try:
        return info.rc == mqtt.MQTT_ERR_SUCCESS and info.is_published()
    except (RuntimeError, ValueError):
        return False
