"""A paho-mqtt 2.x client that stays connected and reports how it is doing.

:class:`MqttConnection` runs paho's network thread (``loop_start``), which
reconnects by itself after a failure or a lost connection, waiting
``mqtt.reconnect.backoff.min.seconds`` doubling up to ``...max.seconds``
(reset once a CONNACK accepted the connection). Every attempt picks its URI
from ``mqtt.server.uri``: the first one after a connection that worked was
lost, the next one in the list after an attempt failed (unreachable,
TLS failure, CONNACK refused), so a list of brokers is tried in order, round
and round.

The connection's state (connected or not, the broker, the last error and
when, attempts) is kept under a lock and served by :meth:`details`, which the
status polls from another thread.

Sessions: ``clean_session`` False (MQTT 3.1.1) or ``clean_start`` False with a
Session Expiry Interval (MQTT 5) asks the broker to keep subscriptions and
unacknowledged QoS 1/2 messages while the client is away; paho keeps its own
unacknowledged outgoing messages in the same ``Client`` and sends them again
after a reconnect.

Acknowledging by hand (``manual_ack``, the source): every received PUBLISH,
whatever its QoS, goes to ``on_publishes`` unacknowledged, and the owner calls
:meth:`MqttConnection.acknowledge` when it may: PUBACK for QoS 1, PUBREC for
QoS 2 (MQTT 3.1.1 / MQTT 5 section 4.3.3). Until then the broker keeps the
message and sends it again (DUP) on the next connection of the session. Once
it has our PUBREC it only keeps the packet id and sends PUBREL, which the
client answers with PUBCOMP at once, whether the PUBREC went out on this
connection or on one before a crash (paho would answer only the PUBRELs of
messages it received and acknowledged itself, see ``_handle_pubrel`` in paho).

A stop ends with a graceful close: closing a TCP socket that still has
unread bytes (the broker goes on sending PUBLISH packets) makes the kernel
send a reset, and the broker then drops whatever it had not read yet,
including the last PUBACKs and the DISCONNECT itself, so it would deliver
those messages again. After our DISCONNECT the socket is half-closed and read
until the broker closes it (at most :data:`CLOSE_DRAIN_S`).
"""

from __future__ import annotations

import logging
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from connectors.api.metrics import NO_METRICS, TaskMetrics
from connectors.mqtt.config import MqttConnectionConfig, ServerUri
from connectors.mqtt.inbox import Publish, decode_publish, release_id, take_publishes

log = logging.getLogger(__name__)

#: Bytes read from the socket at once (paho's own reads are mostly 1 byte).
READ_CHUNK = 64 * 1024
CLOSE_DRAIN_S = 2.0
_PUBCOMP_HEAD = bytes([mqtt.PUBCOMP, 2])  # fixed header of a PUBCOMP with just the packet id

OnConnected = Callable[[mqtt.Client, bool], None]
OnPublishes = Callable[[list[Publish]], None]


def make_client(
    config: MqttConnectionConfig,
    client_id: str,
    *,
    clean_session: bool,
    manual_ack: bool = False,
    client_class: type[mqtt.Client] = mqtt.Client,
) -> mqtt.Client:
    """A configured paho client (credentials, TLS, timeouts), not connected yet."""
    v5 = config.version == "5"
    client = client_class(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=None if v5 else clean_session,
        protocol=mqtt.MQTTv5 if v5 else mqtt.MQTTv311,
        manual_ack=manual_ack,
    )
    client.connect_timeout = config.connect_timeout_s
    client.reconnect_delay_set(config.reconnect_backoff_min_s, config.reconnect_backoff_max_s)
    if config.username:
        password = config.password.get_secret_value() if config.password else None
        client.username_pw_set(config.username, password)
    if config.uses_tls:
        client.tls_set(
            ca_certs=config.trust_store_path,
            certfile=config.key_store_path,
            keyfile=config.key_path,
            keyfile_password=(
                config.key_store_password.get_secret_value() if config.key_store_password else None
            ),
            cert_reqs=ssl.CERT_REQUIRED,
        )
        client.tls_insecure_set(not config.ssl_verify_hostname)
    return client


def connect_properties(
    config: MqttConnectionConfig, *, session_expiry_s: int, receive_maximum: int | None = None
) -> Properties | None:
    """MQTT 5 CONNECT properties: session expiry, receive maximum (None for 3.1.1)."""
    if config.version != "5":
        return None
    properties = Properties(PacketTypes.CONNECT)
    if session_expiry_s:
        properties.SessionExpiryInterval = session_expiry_s
    if receive_maximum:
        properties.ReceiveMaximum = receive_maximum
    return properties


class _RotatingClient(mqtt.Client):
    """paho's Client whose every (re)connection attempt asks its owner which URI to try,
    which reads the socket in large chunks, which hands whole PUBLISH packets over in
    batches, and which, acknowledging by hand, takes the QoS 2 exchange from paho.

    paho reads each packet with three or more ``recv`` calls (the command byte,
    each byte of the length, the body) and handles one packet per ``select``
    when nothing is in flight (QoS 0). In a worker every such call gives up and
    retakes the GIL behind the task, producer and broker threads, which made
    QoS 0 intake a third of a lone paho subscriber's. Here paho's reads are
    served from one ``recv`` of up to :data:`READ_CHUNK` bytes, and
    ``loop_read`` goes on while whole or partial packets remain buffered.
    With ``on_publishes`` set, the complete QoS 0 (and, with manual acks,
    QoS 1 and 2) PUBLISH packets in that buffer go to it as one list of
    :class:`~connectors.mqtt.inbox.Publish` (see :mod:`connectors.mqtt.inbox`),
    and with manual acks the PUBRELs among them are answered with PUBCOMPs;
    every other packet takes paho's way. With manual acks, the PUBLISH and
    PUBREL packets that paho reads itself (one split across two reads, say)
    are handled the same way: ``_handle_publish`` hands a QoS 2 message over
    without paho's immediate PUBREC, ``_handle_pubrel`` always answers PUBCOMP.
    (This overrides paho's ``_sock_recv``, ``_handle_publish`` and
    ``_handle_pubrel``, calls its ``_send_puback``/``_send_pubrec``/
    ``_send_pubcomp`` and reads ``_in_packet``, ``_protocol``, ``_manual_ack``
    and ``_last_bytes_received``: private parts of paho 2.x, hence the pin
    below 3.)
    """

    owner: MqttConnection
    on_publishes: OnPublishes | None = None
    _inbox: bytes = b""
    _inbox_at: int = 0

    def reconnect(self) -> mqtt.MQTTErrorCode:
        if self.owner.stopping:
            raise OSError("the connector is stopping")
        self.owner._before_attempt(self)
        self._inbox, self._inbox_at = b"", 0  # a new socket: nothing buffered from the old
        try:
            return super().reconnect()
        except OSError as exc:
            self.owner._attempt_failed(describe_os_error(exc))
            raise

    def _sock_close(self) -> None:
        sock = self._sock
        if sock is not None and self.owner.stopping:
            _close_gracefully(sock)  # the module doc: no reset, so no lost PUBACKs
        super()._sock_close()

    def _sock_recv(self, bufsize: int) -> bytes:
        if self._inbox_at >= len(self._inbox):
            data = super()._sock_recv(max(bufsize, READ_CHUNK))  # BlockingIOError as paho's
            if len(data) <= bufsize:
                return data
            self._inbox, self._inbox_at = data, 0
        start = self._inbox_at
        self._inbox_at = start + bufsize
        return self._inbox[start : start + bufsize]

    def loop_read(self, max_packets: int = 1) -> mqtt.MQTTErrorCode:
        if self._fill_inbox():
            rc = mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS
        else:
            rc = super().loop_read(max_packets)
        while (
            rc == mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS
            and self._inbox_at < len(self._inbox)
            and self._sock is not None
        ):
            if self._take_publishes():
                continue
            rc = super().loop_read(max_packets)
        return rc

    def _fill_inbox(self) -> bool:
        """Read a chunk for :meth:`_take_publishes` while paho is between packets.

        False leaves the read to paho: no fast path, a packet half read, bytes
        still buffered, or a failed or closed socket (paho reads again and
        reports that as it always does).
        """
        if (
            self.on_publishes is None
            or self._in_packet["command"]
            or self._inbox_at < len(self._inbox)
            or self._sock is None
        ):
            return False
        try:
            data = super()._sock_recv(READ_CHUNK)
        except BlockingIOError:
            return True  # nothing to read after all
        except OSError:
            return False
        if not data:
            return False
        self._inbox, self._inbox_at = data, 0
        return True

    def _take_publishes(self) -> bool:
        """Hand the buffered whole PUBLISH packets to ``on_publishes`` and, acknowledging
        by hand, answer the PUBRELs among them; False if there were none."""
        handler = self.on_publishes
        if handler is None or self._in_packet["command"]:  # paho is halfway through one
            return False
        manual = self._manual_ack
        releases: list[int] | None = [] if manual else None
        publishes, at = take_publishes(
            self._inbox,
            self._inbox_at,
            v5=self._protocol == mqtt.MQTTv5,
            max_qos=2 if manual else 0,
            releases=releases,
        )
        if at == self._inbox_at:
            return False
        self._inbox_at = at
        with self._msgtime_mutex:  # what paho's keepalive check reads
            self._last_bytes_received = time.monotonic()
        if releases:  # first: they never wait, while the handler may (a full buffer)
            self._send_pubcomps(releases)
        if publishes:
            handler(publishes)
        return True

    def _send_pubcomps(self, mids: list[int]) -> None:
        """Queue one PUBCOMP per packet id, written out as one piece."""
        packet = b"".join([_PUBCOMP_HEAD + mid.to_bytes(2, "big") for mid in mids])
        self._packet_queue(mqtt.PUBCOMP, packet, 0, 0)

    def send_ack(self, mid: int, qos: int) -> mqtt.MQTTErrorCode:
        """Acknowledge the received message ``mid``: PUBACK at QoS 1, PUBREC at QoS 2."""
        if qos == 1:
            return self._send_puback(mid)
        if qos == 2:
            return self._send_pubrec(mid)
        return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS

    def _handle_publish(self) -> mqtt.MQTTErrorCode:
        handler = self.on_publishes
        if handler is None or not self._manual_ack:
            return super()._handle_publish()
        packet = self._in_packet
        publish = decode_publish(
            packet["command"], bytes(packet["packet"]), v5=self._protocol == mqtt.MQTTv5
        )
        if publish is None:  # malformed: paho's own decoding reports it
            return super()._handle_publish()
        handler([publish])  # not acknowledged: the owner does it once it may (PUBREC at QoS 2)
        return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS

    def _handle_pubrel(self) -> mqtt.MQTTErrorCode:
        if not self._manual_ack:
            return super()._handle_pubrel()
        mid = release_id(bytes(self._in_packet["packet"]), v5=self._protocol == mqtt.MQTTv5)
        if mid is None:
            return mqtt.MQTTErrorCode.MQTT_ERR_PROTOCOL
        return self._send_pubcomp(mid)


def _close_gracefully(sock: Any) -> None:
    """Half-close ``sock`` (FIN after everything written) and read until the peer closes."""
    deadline = time.monotonic() + CLOSE_DRAIN_S
    try:
        sock.shutdown(socket.SHUT_WR)
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([sock], [], [], left)
            if readable and not sock.recv(READ_CHUNK):
                return  # the broker closed its side: nothing is reset
    except (OSError, ValueError):
        return  # already gone: the close that follows is all there is to do


def publish_of(message: mqtt.MQTTMessage) -> Publish:
    """A message paho delivered itself (QoS 0, or any QoS without manual acks)."""
    return Publish(
        message.topic.encode(),
        bytes(message.payload),
        message.qos,
        bool(message.retain),
        bool(message.dup),
        message.mid,
        getattr(message, "properties", None),
    )


def describe_os_error(exc: OSError) -> str:
    """``ConnectionRefusedError: [Errno 111] Connection refused`` style text."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class MqttConnection:
    """One paho client kept connected to one of the configured brokers (see the module doc)."""

    def __init__(
        self,
        config: MqttConnectionConfig,
        client_id: str,
        *,
        clean_session: bool,
        session_expiry_s: int = 0,
        receive_maximum: int | None = None,
        manual_ack: bool = False,
        on_connected: OnConnected | None = None,
        on_publishes: OnPublishes | None = None,
        metrics: TaskMetrics = NO_METRICS,
    ) -> None:
        self.config = config
        # written by paho's network thread (and stop()): connected as 0/1, reconnections
        self._connected_metric = metrics.gauge(
            "mqtt_connected", "1 while connected to the MQTT broker, 0 otherwise."
        )
        self._reconnects_metric = metrics.counter(
            "mqtt_reconnects", "Connections the broker accepted after the first one."
        )
        self.client_id = client_id
        self._uris: tuple[ServerUri, ...] = config.uris
        self._clean_session = clean_session
        self._properties = connect_properties(
            config,
            session_expiry_s=0 if clean_session else session_expiry_s,
            receive_maximum=receive_maximum,
        )
        self._on_connected = on_connected
        self._lock = threading.Lock()
        self._connected = threading.Event()
        self._stopping = False
        self._next_index = 0
        self._uri: ServerUri = self._uris[0]
        self._attempts = 0
        self._connects = 0
        self._last_error: str | None = None
        self._last_error_at: float | None = None
        self.max_packet_bytes: int | None = None  # the broker's, from an MQTT 5 CONNACK
        client = make_client(
            config,
            client_id,
            clean_session=clean_session,
            manual_ack=manual_ack,
            client_class=_RotatingClient,
        )
        assert isinstance(client, _RotatingClient)
        client.owner = self
        client.on_connect = self._handle_connect
        client.on_disconnect = self._handle_disconnect
        if on_publishes is not None:
            client.on_publishes = on_publishes
            client.on_message = lambda _client, _userdata, message: on_publishes(
                [publish_of(message)]
            )
        self.client: mqtt.Client = client
        self._fast_client = client

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start the network thread; it connects (and reconnects) in the background."""
        self._connect_async(self._uris[0])
        self.client.loop_start()

    def stop(self) -> None:
        """Disconnect and end the network thread."""
        with self._lock:
            self._stopping = True
        try:
            self.client.disconnect()
        except Exception:
            log.debug("disconnect failed", exc_info=True)
        self.client.loop_stop()
        self._connected.clear()
        self._connected_metric.set(0)

    def acknowledge(self, mid: int, qos: int) -> None:
        """Acknowledge received message ``mid`` (manual acks): PUBACK at QoS 1, PUBREC at
        QoS 2, whose PUBREL the client answers by itself (see the module doc)."""
        self._fast_client.send_ack(mid, qos)

    @property
    def stopping(self) -> bool:
        with self._lock:
            return self._stopping

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_connected(self, timeout_s: float) -> bool:
        return self._connected.wait(timeout_s)

    @property
    def generation(self) -> int:
        """How many connections were accepted so far (changes on every reconnect)."""
        return self._connects

    @property
    def broker(self) -> str:
        with self._lock:
            return str(self._uri)

    @property
    def last_error(self) -> str | None:
        with self._lock:
            return self._last_error

    def details(self) -> dict[str, Any]:
        """The connection's state for the status (thread-safe, cheap)."""
        with self._lock:
            details: dict[str, Any] = {
                "connection": "connected" if self._connected.is_set() else "disconnected",
                "broker": str(self._uri),
                "client.id": self.client_id,
                "mqtt.version": self.config.version,
                "connects": self._connects,
                "connection.attempts": self._attempts,
            }
            if self._last_error is not None:
                details["last.error"] = self._last_error
                details["last.error.time"] = time.strftime(
                    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._last_error_at or 0)
                )
        return details

    # ---------------------------------------------------------------- paho callbacks

    def _connect_async(self, uri: ServerUri) -> None:
        self.client.connect_async(
            uri.host,
            uri.port,
            self.config.keepalive_s,
            clean_start=self._clean_session,
            properties=self._properties,
        )

    def _before_attempt(self, client: mqtt.Client) -> None:
        """Called by the client before each connection attempt: choose the URI."""
        with self._lock:
            uri = self._uris[self._next_index % len(self._uris)]
            self._uri = uri
            self._attempts += 1
        self._connect_async(uri)

    def _attempt_failed(self, error: str) -> None:
        with self._lock:
            if self._stopping:
                return
            self._next_index += 1
            uri = self._uri
            self._record_error(f"cannot connect to {uri}: {error}")
        log.warning("MQTT client %s: cannot connect to %s: %s", self.client_id, uri, error)

    def _record_error(self, message: str) -> None:
        self._last_error = message
        self._last_error_at = time.time()

    def _handle_connect(
        self,
        client: mqtt.Client,
        userdata: Any,
        flags: mqtt.ConnectFlags,
        reason: Any,
        properties: Properties | None,
    ) -> None:
        if reason.is_failure:
            with self._lock:
                self._next_index += 1
                uri = self._uri
                self._record_error(f"{uri} refused the connection: {reason}")
            log.warning(
                "MQTT client %s: %s refused the connection: %s", self.client_id, uri, reason
            )
            return
        maximum = getattr(properties, "MaximumPacketSize", None) if properties else None
        with self._lock:
            self._next_index = 0
            self._connects += 1
            self.max_packet_bytes = maximum
            uri = self._uri
        log.info(
            "MQTT client %s connected to %s (session present: %s)",
            self.client_id, uri, flags.session_present,
        )
        if self._on_connected is not None:
            self._on_connected(client, flags.session_present)
        self._connected.set()
        self._connected_metric.set(1)
        if self._connects > 1:
            self._reconnects_metric.inc()

    def _handle_disconnect(
        self,
        client: mqtt.Client,
        userdata: Any,
        flags: mqtt.DisconnectFlags,
        reason: Any,
        properties: Properties | None,
    ) -> None:
        was_connected = self._connected.is_set()
        self._connected.clear()
        self._connected_metric.set(0)
        with self._lock:
            if self._stopping:
                return
            uri = self._uri
            if was_connected:
                self._record_error(f"lost the connection to {uri}: {reason}")
        if was_connected:
            log.warning(
                "MQTT client %s: lost the connection to %s: %s", self.client_id, uri, reason
            )
