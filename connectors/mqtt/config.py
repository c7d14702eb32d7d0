"""The MQTT connectors' keys (Confluent's names): the client settings the source
and the sink share (:class:`MqttConnectionConfig`), then :class:`MqttSourceConfig`
and :class:`MqttSinkConfig`.

``mqtt.server.uri`` is a comma-separated list of ``tcp://host:port`` or
``ssl://host:port`` URIs, tried in order (and round again) until one accepts
the connection. TLS keys keep Confluent's names but take PEM files, not Java
key stores: ``mqtt.ssl.trust.store.path`` is a CA bundle,
``mqtt.ssl.key.store.path`` a client certificate (chain), with its private
key in the same file or in ``mqtt.ssl.key.path``; ``mqtt.ssl.key.store.password``
decrypts that key.

``mqtt.version`` picks the protocol: ``3.1.1`` (default) or ``5``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator

from connectors.api import PluginConfig, key_info
from connectors.mqtt.topics import topic_filter_problem

DEFAULT_PORTS = {"tcp": 1883, "ssl": 8883}
MQTT_MAX_PAYLOAD_BYTES = 268_435_455 - 65_535 - 8  # MQTT's packet limit minus topic and header


@dataclass(frozen=True, slots=True)
class ServerUri:
    """One broker address of ``mqtt.server.uri``."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


def parse_server_uris(text: str) -> tuple[ServerUri, ...]:
    """Parse ``mqtt.server.uri``; raise ValueError naming the URI at fault."""
    uris = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        split = urlsplit(part)
        if split.scheme not in DEFAULT_PORTS:
            raise ValueError(f"{part!r} must start with tcp:// or ssl://")
        if not split.hostname:
            raise ValueError(f"{part!r} has no host")
        try:
            port = split.port or DEFAULT_PORTS[split.scheme]
        except ValueError:
            raise ValueError(f"{part!r} has a bad port") from None
        uris.append(ServerUri(split.scheme, split.hostname, port))
    if not uris:
        raise ValueError("needs at least one tcp:// or ssl:// URI")
    return tuple(uris)


def split_list(value: object) -> object:
    """Accept ``a, b`` (a properties file's list) as well as a list."""
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


class MqttConnectionConfig(PluginConfig):
    """How to reach the MQTT broker (both connectors' keys)."""

    server_uri: str = Field(
        alias="mqtt.server.uri",
        description="Comma-separated broker URIs (tcp://host:1883, ssl://host:8883), "
        "tried in order until one accepts.",
        json_schema_extra=key_info("HIGH", "LONG"),
    )
    client_id: str | None = Field(
        None,
        alias="mqtt.client.id",
        description="The MQTT client id; default sluice-<connector name>-<task id>, "
        "stable across restarts so the broker keeps the session.",
        json_schema_extra=key_info("MEDIUM", "MEDIUM"),
    )
    version: Literal["3.1.1", "5"] = Field(
        "3.1.1",
        alias="mqtt.version",
        description="The MQTT protocol version: 3.1.1 or 5.",
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    qos: int = Field(
        1,
        alias="mqtt.qos",
        ge=0,
        le=2,
        description="Quality of service of subscriptions (source) or publications (sink).",
        json_schema_extra=key_info("HIGH", "SHORT"),
    )
    username: str | None = Field(
        None,
        alias="mqtt.username",
        description="User name to authenticate with (none: anonymous).",
        json_schema_extra=key_info("HIGH", "MEDIUM"),
    )
    password: SecretStr | None = Field(
        None,
        alias="mqtt.password",
        description="Password of mqtt.username.",
        json_schema_extra=key_info("HIGH", "MEDIUM"),
    )
    keepalive_s: int = Field(
        60,
        alias="mqtt.keepalive.interval.seconds",
        ge=1,
        le=65535,
        description="Keep-alive interval in seconds.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    connect_timeout_s: float = Field(
        30.0,
        alias="mqtt.connect.timeout.seconds",
        gt=0,
        le=3600,
        description="How long one connection attempt (TCP, TLS) may take, in seconds.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    reconnect_backoff_min_s: int = Field(
        1,
        alias="mqtt.reconnect.backoff.min.seconds",
        ge=1,
        le=3600,
        description="First delay before reconnecting; it doubles after each failure.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    reconnect_backoff_max_s: int = Field(
        30,
        alias="mqtt.reconnect.backoff.max.seconds",
        ge=1,
        le=3600,
        description="Longest delay between reconnection attempts.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    trust_store_path: str | None = Field(
        None,
        alias="mqtt.ssl.trust.store.path",
        description="PEM file of CA certificates to trust (ssl://); default: the system's.",
        json_schema_extra=key_info("MEDIUM", "LONG"),
    )
    key_store_path: str | None = Field(
        None,
        alias="mqtt.ssl.key.store.path",
        description="PEM client certificate (chain) for mutual TLS; may hold the key too.",
        json_schema_extra=key_info("MEDIUM", "LONG"),
    )
    key_path: str | None = Field(
        None,
        alias="mqtt.ssl.key.path",
        description="PEM private key of the client certificate, if not in its file.",
        json_schema_extra=key_info("MEDIUM", "LONG"),
    )
    key_store_password: SecretStr | None = Field(
        None,
        alias="mqtt.ssl.key.store.password",
        description="Password that decrypts the client's private key.",
        json_schema_extra=key_info("MEDIUM", "MEDIUM"),
    )
    ssl_verify_hostname: bool = Field(
        True,
        alias="mqtt.ssl.verify.hostname",
        description="Check that the broker's certificate names the host connected to.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )

    @field_validator("server_uri")
    @classmethod
    def _valid_uris(cls, value: str) -> str:
        schemes = {uri.scheme for uri in parse_server_uris(value)}
        if len(schemes) > 1:
            raise ValueError("mixes tcp:// and ssl:// URIs; use one scheme for all")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> MqttConnectionConfig:
        if self.password is not None and not self.username:
            raise ValueError("mqtt.password is set but mqtt.username is not")
        if self.reconnect_backoff_max_s < self.reconnect_backoff_min_s:
            raise ValueError(
                "mqtt.reconnect.backoff.max.seconds is below mqtt.reconnect.backoff.min.seconds"
            )
        if (self.key_path or self.key_store_password) and not self.key_store_path:
            raise ValueError("mqtt.ssl.key.path/password need mqtt.ssl.key.store.path")
        return self

    @property
    def uris(self) -> tuple[ServerUri, ...]:
        return parse_server_uris(self.server_uri)

    @property
    def uses_tls(self) -> bool:
        return self.uris[0].scheme == "ssl"


class MqttSourceConfig(MqttConnectionConfig):
    """MqttSource's keys: what to subscribe to and where to write."""

    topics: list[str] = Field(
        alias="mqtt.topics",
        min_length=1,
        description="Comma-separated MQTT topic filters to subscribe to (+ and # allowed).",
        json_schema_extra=key_info("HIGH", "LONG"),
    )
    kafka_topic: str = Field(
        alias="kafka.topic",
        min_length=1,
        description="The topic of the log to write the messages to.",
        json_schema_extra=key_info("HIGH", "MEDIUM"),
    )
    clean_session: bool = Field(
        False,
        alias="mqtt.clean.session.enabled",
        description="Start a new session on each connection; true loses the messages "
        "sent while the connector was down (keep false for at-least-once).",
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    session_expiry_s: int = Field(
        7 * 24 * 3600,
        alias="mqtt.session.expiry.interval.seconds",
        ge=0,
        le=0xFFFFFFFF,
        description="MQTT 5: how long the broker keeps the session after a disconnect.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    buffer_records: int = Field(
        10000,
        alias="mqtt.buffer.records",
        ge=1,
        le=1_000_000,
        description="Messages received and not yet polled; when full, reading pauses.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    batch_size: int = Field(
        2000,
        alias="batch.size",
        ge=1,
        le=100_000,
        description="Most records one poll returns.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )

    _split_topics = field_validator("topics", mode="before")(split_list)

    @field_validator("topics")
    @classmethod
    def _valid_filters(cls, value: list[str]) -> list[str]:
        for topic_filter in value:
            problem = topic_filter_problem(topic_filter)
            if problem:
                raise ValueError(f"topic filter {topic_filter!r} {problem}")
        return value


class MqttSinkConfig(MqttConnectionConfig):
    """MqttSink's keys: where and how to publish."""

    topic: str = Field(
        "${topic}",
        alias="mqtt.topic",
        min_length=1,
        description="MQTT topic to publish to; may use ${topic}, ${key} and ${partition}.",
        json_schema_extra=key_info("HIGH", "LONG"),
    )
    retain: bool = Field(
        False,
        alias="mqtt.retain",
        description="Publish with the retain flag (the broker keeps the last message per topic).",
        json_schema_extra=key_info("MEDIUM", "SHORT"),
    )
    clean_session: bool = Field(
        True,
        alias="mqtt.clean.session.enabled",
        description="Start a new session on each connection.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    max_payload_bytes: int = Field(
        MQTT_MAX_PAYLOAD_BYTES,
        alias="mqtt.max.payload.bytes",
        ge=0,
        le=MQTT_MAX_PAYLOAD_BYTES,
        description="Larger values are bad records (DataError: DLQ when tolerated); set it "
        "to the broker's limit (Mosquitto's message_size_limit) with MQTT 3.1.1.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    max_inflight: int = Field(
        1000,
        alias="mqtt.max.inflight.messages",
        ge=1,
        le=65535,
        description="QoS 1/2 messages sent and not yet acknowledged, at most.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    max_pending: int = Field(
        10000,
        alias="mqtt.max.pending.messages",
        ge=1,
        le=1_000_000,
        description="Published and not yet acknowledged messages after which put() waits.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
    flush_timeout_s: float = Field(
        30.0,
        alias="mqtt.flush.timeout.seconds",
        gt=0,
        le=3600,
        description="How long a flush waits for acknowledgements before the commit is retried.",
        json_schema_extra=key_info("LOW", "SHORT"),
    )
