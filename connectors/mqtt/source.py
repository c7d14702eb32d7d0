"""MqttSource: MQTT messages into a topic of the log, at least once, even across crashes.

Confluent's MqttSourceConnector keys (``mqtt.server.uri``, ``mqtt.topics``,
``kafka.topic``, ``mqtt.qos``, ``mqtt.clean.session.enabled``, ...; the
connection keys are in :mod:`connectors.mqtt.config`). Records: key = the
MQTT topic (STRING), value = the payload bytes (BYTES), timestamp = arrival
time, headers ``mqtt.qos``, ``mqtt.retained``, ``mqtt.duplicate``,
``mqtt.message.id`` and, with MQTT 5, each user property under its own name.
Source offsets are trivial (``{"mqtt.topic": t}`` / ``{}``): MQTT has no
positions to resume from, only redelivery of what was not acknowledged.

At-least-once:

- the session is persistent (``mqtt.clean.session.enabled=false``, the
  default; MQTT 5: clean start off and ``mqtt.session.expiry.interval.seconds``)
  under a stable client id (default ``sluice-<connector>-<task id>``), so the
  broker keeps subscriptions and unacknowledged messages while the worker is
  down;
- messages are acknowledged by hand (paho ``manual_ack``): the acknowledgement
  goes out in ``commit_record(record)``, which the runtime calls once the log
  has acknowledged that record: PUBACK at QoS 1, PUBREC at QoS 2 (the broker
  keeps a QoS 2 message until it has the PUBREC; its PUBREL is then answered
  with PUBCOMP at once, see :mod:`connectors.mqtt.connection`). Waiting for
  ``commit()`` would add nothing: the offsets stored then are trivial, and
  MQTT replays nothing but what is not acknowledged; it would only hold every
  message for up to ``offset.flush.interval.ms`` and stall the broker's
  in-flight window. A crash before the PUBACK or PUBREC means the broker
  sends the message again (DUP set: a duplicate in the log, nothing lost); a
  crash after the PUBREC, before the PUBCOMP, means the record is in the log
  and the broker sends only the PUBREL again, answered on the next connection.
- So QoS 1 and QoS 2 give the same guarantee: at least once into the log, not
  exactly once: a message the broker sends again after a lost connection or a
  crash may be written twice, at QoS 2 as at QoS 1.
- The broker must not drop queued messages for an absent client (Mosquitto:
  ``max_queued_messages 0``; its default keeps only 1000).
- Throughput depends on how many unacknowledged messages the broker sends at
  once, since each waits for the log: Mosquitto's ``max_inflight_messages``
  (default 20; the tests and the benchmark use 1000); with MQTT 5 the task
  also announces a Receive Maximum of ``mqtt.buffer.records`` (at most 65535),
  which counts QoS 1 and 2 messages until their PUBACK or PUBCOMP.

Flow control: the client's network thread hands messages over, the whole
packets of each socket read at once (:mod:`connectors.mqtt.inbox`), into a
bounded buffer (``mqtt.buffer.records``), taking what fits. When the buffer
is full that thread waits, so the client stops reading the socket and TCP
pushes back on the broker: nothing is dropped. Messages received on a connection that was lost since
are not acknowledged on the new one (the broker sends them again there).

One task: MQTT subscriptions do not split (``tasks.max`` above 1 still runs one).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

import paho.mqtt.client as mqtt

from connectors.api import SourceConnector, SourceRecord, SourceTask
from connectors.api.records import Header
from connectors.api.schema import BYTES, STRING
from connectors.mqtt.check import check_connection
from connectors.mqtt.config import MqttSourceConfig
from connectors.mqtt.connection import MqttConnection
from connectors.mqtt.inbox import Publish
from connectors.mqtt.topics import TopicKeys

log = logging.getLogger(__name__)

WAIT_S = 0.5  # longest wait in poll() and in a blocked delivery, so stop() is seen


class MqttSourceConnector(SourceConnector):
    """Subscribes to MQTT topic filters and writes the messages to one topic of the log."""

    config_model = MqttSourceConfig
    aliases = (
        "MqttSource",
        "MqttSourceConnector",
        "io.confluent.connect.mqtt.MqttSourceConnector",
    )

    def __init__(self) -> None:
        super().__init__()
        self._props: dict[str, str] = {}

    def start(self, props: Mapping[str, str]) -> None:
        MqttSourceConfig.from_props(props)
        self._props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return MqttSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def check(self, props: Mapping[str, str]) -> list[str]:
        return check_connection(MqttSourceConfig.from_props(props))


class MqttSourceTask(SourceTask):
    """One persistent MQTT session; PUBACK/PUBREC only for records the log acknowledged."""

    def __init__(self) -> None:
        super().__init__()
        self._cond = threading.Condition()
        self._buffer: deque[tuple[Publish, int, int]] = deque()  # (message, generation, ms)
        self._stopping = False
        self._unacked: dict[int, tuple[SourceRecord, int, int, int]] = {}
        self._received = 0
        self._acked = 0
        self._skipped_acks = 0
        self._connection: MqttConnection | None = None
        self._keys = TopicKeys()
        self._flag_headers: dict[tuple[int, bool, bool], tuple[Header, ...]] = {}

    def start(self, props: Mapping[str, str]) -> None:
        config = MqttSourceConfig.from_props(props)
        self._config = config
        self._capacity = config.buffer_records
        task_id = self.context.task_id if self.context is not None else 0
        client_id = config.client_id or f"sluice-{props.get('name', 'mqtt-source')}-{task_id}"
        self._connection = MqttConnection(
            config,
            client_id,
            clean_session=config.clean_session,
            session_expiry_s=config.session_expiry_s,
            receive_maximum=min(config.buffer_records, 65535),
            manual_ack=True,
            on_connected=self._subscribe,
            on_publishes=self._on_publishes,
            metrics=self.metrics,
        )
        self._received_metric = self.metrics.counter(
            "mqtt_messages_received", "MQTT messages received from the broker."
        )
        self._in_flight_metric = self.metrics.gauge(
            "mqtt_messages_in_flight",
            "Messages received and not yet acknowledged to the broker (buffered, or "
            "waiting for the log; QoS 0 ones until handed over).",
        )
        self._connection.start()

    # ---------------------------------------------------------------- network thread

    def _subscribe(self, client: mqtt.Client, session_present: bool) -> None:
        qos = self._config.qos
        result, _ = client.subscribe([(topic, qos) for topic in self._config.topics])
        if result != mqtt.MQTT_ERR_SUCCESS:
            log.warning("subscribing to %s failed: %s", self._config.topics, result)

    def _on_publishes(self, publishes: list[Publish]) -> None:
        """Buffer ``publishes``; wait (not reading the socket) while the buffer is full."""
        assert self._connection is not None
        generation = self._connection.generation
        at_ms = int(time.time() * 1000)
        buffer = self._buffer
        capacity = self._capacity
        done = 0
        with self._cond:
            while done < len(publishes):
                while len(buffer) >= capacity and not self._stopping:
                    self._cond.wait(WAIT_S)
                if self._stopping:
                    return  # not acknowledged: the broker sends them again to the next session
                room = publishes[done : done + capacity - len(buffer)]
                buffer.extend([(publish, generation, at_ms) for publish in room])
                done += len(room)
                self._received += len(room)
                self._received_metric.inc(len(room))
                self._cond.notify_all()

    # ---------------------------------------------------------------- task thread

    def poll(self) -> list[SourceRecord]:
        with self._cond:
            if not self._buffer and not self._stopping:
                self._cond.wait(WAIT_S)
            count = min(len(self._buffer), self._config.batch_size)
            popleft = self._buffer.popleft
            taken = [popleft() for _ in range(count)]
            if taken:
                self._cond.notify_all()
            buffered = len(self._buffer)
        records = [self._record(publish, generation, at_ms) for publish, generation, at_ms in taken]
        self._in_flight_metric.set(buffered + len(self._unacked))
        return records

    def _record(self, publish: Publish, generation: int, at_ms: int) -> SourceRecord:
        topic, payload, qos, retain, dup, mid, properties = publish
        key, partition = self._keys.get(topic)
        headers = self._headers(qos, retain, dup, mid)
        user_properties = getattr(properties, "UserProperty", None) if properties else None
        if user_properties:
            headers += tuple((str(name), str(value)) for name, value in user_properties)
        record = SourceRecord(
            topic=self._config.kafka_topic,
            key=key,
            key_schema=STRING,
            value=payload,
            value_schema=BYTES,
            headers=headers,
            timestamp=at_ms,
            source_partition=partition,
            source_offset={},
        )
        if qos > 0:
            self._unacked[id(record)] = (record, mid, qos, generation)
        return record

    def _headers(self, qos: int, retain: bool, dup: bool, mid: int) -> tuple[Header, ...]:
        """The mqtt.* headers; one shared tuple per flag combination while the id is 0 (QoS 0)."""
        flags = (qos, retain, dup)
        headers = self._flag_headers.get(flags)
        if headers is None:
            headers = self._flag_headers[flags] = (
                ("mqtt.qos", qos),
                ("mqtt.retained", retain),
                ("mqtt.duplicate", dup),
                ("mqtt.message.id", 0),
            )
        return headers if mid == 0 else (*headers[:3], ("mqtt.message.id", mid))

    def commit_record(self, record: SourceRecord) -> None:
        """The log acknowledged ``record``: now the broker may forget the message
        (PUBACK at QoS 1; PUBREC at QoS 2, the PUBREL that follows gets its PUBCOMP)."""
        if not self._unacked:  # QoS 0: nothing to acknowledge
            return
        entry = self._unacked.pop(id(record), None)
        if entry is None or self._connection is None:
            return
        _, mid, qos, generation = entry
        if generation != self._connection.generation:
            self._skipped_acks += 1  # received on a lost connection: redelivered on this one
            return
        self._connection.acknowledge(mid, qos)
        self._acked += 1

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._connection is not None:
            self._connection.stop()

    def details(self) -> dict[str, Any]:
        if self._connection is None:
            return {}
        details = self._connection.details()
        with self._cond:
            details["messages.buffered"] = len(self._buffer)
        details["messages.received"] = self._received
        details["messages.acked"] = self._acked
        details["acks.skipped.after.reconnect"] = self._skipped_acks
        details["mqtt.topics"] = list(self._config.topics)
        return details
