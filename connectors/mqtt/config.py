"""The MQTT client settings the source and the sink share (Confluent's key names).

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

from connectors.api import PluginConfig

DEFAULT_PORTS = {"tcp": 1883, "ssl": 8883}


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
        json_schema_extra={"importance": "HIGH", "width": "LONG"},
    )
    client_id: str | None = Field(
        None,
        alias="mqtt.client.id",
        description="The MQTT client id; default sluice-<connector name>-<task id>, "
        "stable across restarts so the broker keeps the session.",
        json_schema_extra={"importance": "MEDIUM", "width": "MEDIUM"},
    )
    version: Literal["3.1.1", "5"] = Field(
        "3.1.1",
        alias="mqtt.version",
        description="The MQTT protocol version: 3.1.1 or 5.",
        json_schema_extra={"importance": "MEDIUM", "width": "SHORT"},
    )
    qos: int = Field(
        1,
        alias="mqtt.qos",
        ge=0,
        le=2,
        description="Quality of service of subscriptions (source) or publications (sink).",
        json_schema_extra={"importance": "HIGH", "width": "SHORT"},
    )
    username: str | None = Field(
        None,
        alias="mqtt.username",
        description="User name to authenticate with (none: anonymous).",
        json_schema_extra={"importance": "HIGH", "width": "MEDIUM"},
    )
    password: SecretStr | None = Field(
        None,
        alias="mqtt.password",
        description="Password of mqtt.username.",
        json_schema_extra={"importance": "HIGH", "width": "MEDIUM"},
    )
    keepalive_s: int = Field(
        60,
        alias="mqtt.keepalive.interval.seconds",
        ge=1,
        le=65535,
        description="Keep-alive interval in seconds.",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
    )
    connect_timeout_s: float = Field(
        30.0,
        alias="mqtt.connect.timeout.seconds",
        gt=0,
        le=3600,
        description="How long one connection attempt (TCP, TLS) may take, in seconds.",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
    )
    reconnect_backoff_min_s: int = Field(
        1,
        alias="mqtt.reconnect.backoff.min.seconds",
        ge=1,
        le=3600,
        description="First delay before reconnecting; it doubles after each failure.",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
    )
    reconnect_backoff_max_s: int = Field(
        30,
        alias="mqtt.reconnect.backoff.max.seconds",
        ge=1,
        le=3600,
        description="Longest delay between reconnection attempts.",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
    )
    trust_store_path: str | None = Field(
        None,
        alias="mqtt.ssl.trust.store.path",
        description="PEM file of CA certificates to trust (ssl://); default: the system's.",
        json_schema_extra={"importance": "MEDIUM", "width": "LONG"},
    )
    key_store_path: str | None = Field(
        None,
        alias="mqtt.ssl.key.store.path",
        description="PEM client certificate (chain) for mutual TLS; may hold the key too.",
        json_schema_extra={"importance": "MEDIUM", "width": "LONG"},
    )
    key_path: str | None = Field(
        None,
        alias="mqtt.ssl.key.path",
        description="PEM private key of the client certificate, if not in its file.",
        json_schema_extra={"importance": "MEDIUM", "width": "LONG"},
    )
    key_store_password: SecretStr | None = Field(
        None,
        alias="mqtt.ssl.key.store.password",
        description="Password that decrypts the client's private key.",
        json_schema_extra={"importance": "MEDIUM", "width": "MEDIUM"},
    )
    ssl_verify_hostname: bool = Field(
        True,
        alias="mqtt.ssl.verify.hostname",
        description="Check that the broker's certificate names the host connected to.",
        json_schema_extra={"importance": "LOW", "width": "SHORT"},
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

