"""The client configurations, declared once as pydantic models.

Each field carries Kafka's config name as its alias (``linger.ms``), a
description, a default and its bounds, so a ``.properties`` file, a dict from a
connector's ``producer.override.*`` keys or Python keyword arguments all
validate the same way. Python names put units last (``linger_ms``).

Build a config with :meth:`ClientConfig.from_mapping` (Kafka names or Python
names, values may be strings as read from a properties file)::

    ProducerConfig.from_mapping({"bootstrap.servers": "localhost:9092", "acks": "all"})

Unknown keys are refused so a typo (``linger.msec``) fails loudly instead of
being ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from log_engine.jaas import JaasConfigError, parse_jaas

_INT32_MAX = 2**31 - 1
StoreType = Literal["PEM", "PKCS12", "JKS"]


class ClientConfig(BaseModel):
    """Settings every client (producer, consumer, admin) shares: where and how to connect."""

    model_config = ConfigDict(
        populate_by_name=True, extra="forbid", frozen=True, hide_input_in_errors=True
    )  # a rejected config may hold passwords: errors never echo its values

    bootstrap_servers: tuple[str, ...] = Field(
        alias="bootstrap.servers",
        min_length=1,
        description="host:port pairs used to discover the cluster; comma-separated in properties",
    )
    client_id: str = Field(
        "sluice",
        alias="client.id",
        max_length=255,
        description="Name sent with every request, shown in broker logs and group descriptions",
    )
    security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = Field(
        "PLAINTEXT",
        alias="security.protocol",
        description="PLAINTEXT, SSL (TLS), SASL_PLAINTEXT or SASL_SSL (docs/security.md)",
    )
    ssl_ca_location: str | None = Field(
        None,
        alias="ssl.ca.location",
        description="The CAs that sign the brokers' certificates (Java name: "
        "ssl.truststore.location): a PEM file, or a PKCS12/JKS trust store "
        "(ssl.truststore.type); unset: the system CAs",
    )
    ssl_ca_pem: str | None = Field(
        None,
        alias="ssl.ca.pem",
        description="The CA certificates as PEM text (Java name: ssl.truststore.certificates)",
    )
    ssl_truststore_type: StoreType | None = Field(
        None,
        alias="ssl.truststore.type",
        description="PEM, PKCS12 or JKS; unset: the format of the file",
    )
    ssl_truststore_password: SecretStr | None = Field(
        None, alias="ssl.truststore.password", description="Password of a PKCS12/JKS trust store"
    )
    ssl_certificate_location: str | None = Field(
        None,
        alias="ssl.certificate.location",
        description="PEM file of the client certificate chain, for mutual TLS "
        "(with ssl.key.location, or a PEM holding key and chain)",
    )
    ssl_key_location: str | None = Field(
        None,
        alias="ssl.key.location",
        description="PEM file of the client key; unset: read from ssl.certificate.location",
    )
    ssl_keystore_location: str | None = Field(
        None,
        alias="ssl.keystore.location",
        description="Key store with the client key and certificate chain, for mutual TLS: "
        "PEM, PKCS12 or JKS (ssl.keystore.type; unset: the format of the file)",
    )
    ssl_keystore_type: StoreType | None = Field(
        None, alias="ssl.keystore.type", description="PEM, PKCS12 or JKS"
    )
    ssl_keystore_password: SecretStr | None = Field(
        None, alias="ssl.keystore.password", description="Password of a PKCS12/JKS key store"
    )
    ssl_certificate_pem: str | None = Field(
        None,
        alias="ssl.certificate.pem",
        description="The client certificate chain as PEM text (Java name: "
        "ssl.keystore.certificate.chain), with ssl.key.pem",
    )
    ssl_key_pem: SecretStr | None = Field(
        None,
        alias="ssl.key.pem",
        description="The client key as PEM text (Java name: ssl.keystore.key)",
    )
    ssl_key_password: SecretStr | None = Field(
        None, alias="ssl.key.password", description="Password of an encrypted client key"
    )
    ssl_endpoint_identification_algorithm: Literal["https", "none", ""] = Field(
        "https",
        alias="ssl.endpoint.identification.algorithm",
        description="https: the broker certificate must name the host connected to; "
        "none or empty: skip that check (the chain is still verified)",
    )
    ssl_enabled_protocols: str | None = Field(
        None,
        alias="ssl.enabled.protocols",
        description="TLS versions allowed: TLSv1.2 and/or TLSv1.3, comma-separated "
        "(unset: both, as Kafka)",
    )
    ssl_protocol: str | None = Field(
        None,
        alias="ssl.protocol",
        description="TLSv1.3, TLSv1.2 or TLS (checked only; ssl.enabled.protocols narrows)",
    )
    ssl_cipher_suites: str | None = Field(
        None,
        alias="ssl.cipher.suites",
        description="TLS 1.2 cipher suites, comma-separated: IANA names "
        "(TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384) or OpenSSL names; TLS 1.3 suites "
        "are accepted but stay OpenSSL's defaults (docs/security.md)",
    )
    sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] = Field(
        "PLAIN",
        alias="sasl.mechanism",
        description="SASL mechanism on SASL_PLAINTEXT / SASL_SSL",
    )
    sasl_username: str | None = Field(
        None, alias="sasl.username", description="SASL user (or give sasl.jaas.config)"
    )
    sasl_password: SecretStr | None = Field(
        None, alias="sasl.password", description="SASL password (never logged)"
    )
    sasl_jaas_config: SecretStr | None = Field(
        None,
        alias="sasl.jaas.config",
        description="Java-style login: '<PlainLoginModule|ScramLoginModule> required "
        'username="..." password="...";\' (username/password taken from it)',
    )
    request_timeout_ms: int = Field(
        30000,
        alias="request.timeout.ms",
        ge=1,
        le=_INT32_MAX,
        description="How long to wait for a response before failing the request "
        "(and closing the connection, since later responses would queue behind it)",
    )
    socket_connection_setup_timeout_ms: int = Field(
        10000,
        alias="socket.connection.setup.timeout.ms",
        ge=1,
        le=_INT32_MAX,
        description="Time allowed for the TCP connect plus the ApiVersions exchange",
    )
    retry_backoff_ms: int = Field(
        100,
        alias="retry.backoff.ms",
        ge=0,
        le=_INT32_MAX,
        description="Pause before retrying a failed request or reconnecting",
    )
    metadata_max_age_ms: int = Field(
        300000,
        alias="metadata.max.age.ms",
        ge=0,
        le=_INT32_MAX,
        description="Refresh the metadata cache at least this often, even without errors",
    )
    max_in_flight_requests_per_connection: int = Field(
        5,
        alias="max.in.flight.requests.per.connection",
        ge=1,
        le=1000,
        description="Requests sent on one connection before a response must arrive",
    )
    receive_message_max_bytes: int = Field(
        100_000_000,
        alias="receive.message.max.bytes",
        ge=1000,
        le=_INT32_MAX,
        description="Largest response frame accepted; a larger size prefix closes the connection",
    )

    @field_validator("ssl_keystore_type", "ssl_truststore_type", mode="before")
    @classmethod
    def _upper_store_type(cls, value: Any) -> Any:
        return value.strip().upper() or None if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _java_security_names(cls, values: Any) -> Any:
        """Accept the Java client's names for the TLS settings."""
        if isinstance(values, Mapping):
            return java_security_names(values)
        return values

    @model_validator(mode="after")
    def _check_sasl(self) -> Self:
        if self.security_protocol.startswith("SASL_"):
            self.sasl_credentials()
        return self

    def sasl_credentials(self) -> tuple[str, str]:
        """``(username, password)`` from sasl.username/sasl.password or sasl.jaas.config."""
        user = self.sasl_username
        password = self.sasl_password.get_secret_value() if self.sasl_password else None
        if self.sasl_jaas_config is not None and (user is None or password is None):
            try:
                entry = parse_jaas(self.sasl_jaas_config.get_secret_value())
            except JaasConfigError as exc:
                raise ValueError(str(exc)) from None
            user = user if user is not None else entry.options.get("username")
            password = password if password is not None else entry.options.get("password")
        if user is None or password is None:
            raise ValueError(
                f"security.protocol={self.security_protocol} needs sasl.username and "
                "sasl.password, or sasl.jaas.config with username=... password=..."
            )
        return user, password

    @field_validator("bootstrap_servers", mode="before")
    @classmethod
    def _split_servers(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("bootstrap_servers")
    @classmethod
    def _check_servers(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for server in value:
            host, sep, port = server.rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"{server!r} is not host:port")
        return value

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Self:
        """Validate a mapping of Kafka names (or Python names) plus keyword overrides;
        on SSL/SASL_SSL the key and trust stores are opened too, and the TLS versions
        and suites are checked (``StoreError``)."""
        merged = dict(values or {})
        merged.update(kwargs)
        config = cls.model_validate(merged)
        if config.security_protocol in ("SSL", "SASL_SSL"):
            # open the stores now: a wrong password or file is refused with the config
            # (a StoreError naming the key and file), not at the first connection
            from log_engine.client.security import ssl_context

            ssl_context(config)  # built once here, then shared by the connections
        elif config.ssl_enabled_protocols or config.ssl_protocol or config.ssl_cipher_suites:
            from log_engine.client.tls import tls_policy

            tls_policy(config)  # checked even while unused, as Kafka checks them
        return config

    def addresses(self) -> list[tuple[str, int]]:
        """The bootstrap servers as ``(host, port)`` pairs."""
        out = []
        for server in self.bootstrap_servers:
            host, _, port = server.rpartition(":")
            out.append((host.strip("[]"), int(port)))
        return out


class ProducerConfig(ClientConfig):
    """Producer settings: batching, acknowledgements, retries and memory bounds."""

    acks: Literal[-1, 0, 1] = Field(
        -1,
        description="Replicas that must acknowledge a write: 0 (none), 1 (leader), all/-1 (ISR)",
    )
    linger_ms: int = Field(
        5,
        alias="linger.ms",
        ge=0,
        le=_INT32_MAX,
        description="Wait up to this long for more records before sending a partial batch",
    )
    batch_size: int = Field(
        16384,
        alias="batch.size",
        ge=1,
        le=_INT32_MAX,
        description="Target bytes of records per partition batch (uncompressed)",
    )
    compression_type: Literal["none", "gzip", "snappy", "lz4", "zstd"] = Field(
        "none",
        alias="compression.type",
        description="Codec applied to each batch",
    )
    retries: int = Field(
        _INT32_MAX,
        ge=0,
        le=_INT32_MAX,
        description="Retries of a batch after a retriable error, within delivery.timeout.ms",
    )
    delivery_timeout_ms: int = Field(
        120000,
        alias="delivery.timeout.ms",
        ge=1,
        le=_INT32_MAX,
        description="Upper bound from send() to success or failure, retries included",
    )
    max_block_ms: int = Field(
        60000,
        alias="max.block.ms",
        ge=0,
        le=_INT32_MAX,
        description="How long send() waits for metadata or for buffer space before failing",
    )
    enable_idempotence: bool | None = Field(
        None,
        alias="enable.idempotence",
        description="Exactly-once per partition: a producer id and sequence numbers let the "
        "broker drop duplicates from retries. Unset: on when acks=all, retries>0 and "
        "max.in.flight<=5, as Kafka does",
    )
    buffer_memory: int = Field(
        33554432,
        alias="buffer.memory",
        ge=1024,
        le=2**40,
        description="Bytes of unsent records held in memory; send() blocks when they are used up",
    )
    max_request_size: int = Field(
        1048576,
        alias="max.request.size",
        ge=1024,
        le=_INT32_MAX,
        description="Largest Produce request, and so the largest single record",
    )
    transaction_timeout_ms: int = Field(
        60000,
        alias="transaction.timeout.ms",
        ge=1,
        le=_INT32_MAX,
        description="Sent with InitProducerId; only meaningful for transactional producers",
    )

    @field_validator("acks", mode="before")
    @classmethod
    def _parse_acks(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip().lower()
            return -1 if text == "all" else int(text) if text.lstrip("-").isdigit() else value
        return value

    @model_validator(mode="after")
    def _check_idempotence(self) -> Self:
        compatible = (
            self.acks == -1 and self.retries > 0 and self.max_in_flight_requests_per_connection <= 5
        )
        if self.enable_idempotence is None:
            object.__setattr__(self, "enable_idempotence", compatible)
        elif self.enable_idempotence and not compatible:
            raise ValueError(
                "enable.idempotence=true needs acks=all, retries>0 and "
                "max.in.flight.requests.per.connection<=5"
            )
        if self.delivery_timeout_ms < self.linger_ms + self.request_timeout_ms:
            raise ValueError("delivery.timeout.ms must be >= linger.ms + request.timeout.ms")
        return self

    @property
    def idempotent(self) -> bool:
        """Whether the producer uses a producer id and sequence numbers."""
        return bool(self.enable_idempotence)


class ConsumerConfig(ClientConfig):
    """Consumer settings: group membership, offsets and fetch sizes."""

    group_id: str | None = Field(
        None,
        alias="group.id",
        min_length=1,
        description="Consumer group; needed for subscribe() and for committing offsets",
    )
    group_instance_id: str | None = Field(
        None,
        alias="group.instance.id",
        min_length=1,
        description="Static membership id: a restart within session.timeout.ms keeps the "
        "assignment without a rebalance",
    )
    auto_offset_reset: Literal["earliest", "latest", "none"] = Field(
        "latest",
        alias="auto.offset.reset",
        description="Where to start when there is no committed offset or it is out of range",
    )
    enable_auto_commit: bool = Field(
        True,
        alias="enable.auto.commit",
        description="Commit the positions of returned records in the background",
    )
    auto_commit_interval_ms: int = Field(
        5000,
        alias="auto.commit.interval.ms",
        ge=1,
        le=_INT32_MAX,
        description="Period of automatic commits",
    )
    session_timeout_ms: int = Field(
        45000,
        alias="session.timeout.ms",
        ge=1,
        le=_INT32_MAX,
        description="The coordinator evicts a member that sends no heartbeat for this long",
    )
    heartbeat_interval_ms: int = Field(
        3000,
        alias="heartbeat.interval.ms",
        ge=1,
        le=_INT32_MAX,
        description="Period of heartbeats to the group coordinator",
    )
    max_poll_interval_ms: int = Field(
        300000,
        alias="max.poll.interval.ms",
        ge=1,
        le=_INT32_MAX,
        description="Rebalance timeout: how long a rebalance waits for members to rejoin",
    )
    max_poll_records: int = Field(
        500,
        alias="max.poll.records",
        ge=1,
        le=1_000_000,
        description="Most records one poll() returns",
    )
    fetch_min_bytes: int = Field(
        1,
        alias="fetch.min.bytes",
        ge=0,
        le=_INT32_MAX,
        description="The broker waits for this much data (or fetch.max.wait.ms) before answering",
    )
    fetch_max_wait_ms: int = Field(
        500,
        alias="fetch.max.wait.ms",
        ge=0,
        le=_INT32_MAX,
        description="Longest time the broker holds a fetch waiting for fetch.min.bytes",
    )
    fetch_max_bytes: int = Field(
        52428800,
        alias="fetch.max.bytes",
        ge=1,
        le=_INT32_MAX,
        description="Most bytes one fetch response may carry (one batch may exceed it)",
    )
    max_partition_fetch_bytes: int = Field(
        1048576,
        alias="max.partition.fetch.bytes",
        ge=1,
        le=_INT32_MAX,
        description="Most bytes per partition in one fetch response",
    )
    queued_max_messages_kbytes: int = Field(
        65536,
        alias="queued.max.messages.kbytes",
        ge=1,
        le=2**31 // 1024,
        description="Prefetched but not yet polled bytes, in KiB; no new fetch is sent "
        "for a partition while its buffered data exceeds its share",
    )
    isolation_level: Literal["read_uncommitted", "read_committed"] = Field(
        "read_uncommitted",
        alias="isolation.level",
        description="read_committed hides records of aborted transactions and stops at the "
        "last stable offset",
    )
    partition_assignment_strategy: tuple[Literal["range", "roundrobin"], ...] = Field(
        ("range",),
        alias="partition.assignment.strategy",
        min_length=1,
        description="Assignors offered to the group, most preferred first",
    )
    check_crcs: bool = Field(
        True,
        alias="check.crcs",
        description="Verify the CRC-32C of fetched batches",
    )
    allow_auto_create_topics: bool = Field(
        False,
        alias="allow.auto.create.topics",
        description="Let metadata requests for subscribed topics create them on the broker",
    )

    @field_validator("partition_assignment_strategy", mode="before")
    @classmethod
    def _split_strategies(cls, value: Any) -> Any:
        if isinstance(value, str):
            names = [part.strip() for part in value.split(",") if part.strip()]
            return tuple(_ASSIGNOR_ALIASES.get(name, name) for name in names)
        return value

    @model_validator(mode="after")
    def _check_timeouts(self) -> Self:
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError("heartbeat.interval.ms must be lower than session.timeout.ms")
        return self

    @property
    def read_committed(self) -> bool:
        return self.isolation_level == "read_committed"


class AdminConfig(ClientConfig):
    """Admin client settings (the shared connection settings only)."""

    default_api_timeout_ms: int = Field(
        60000,
        alias="default.api.timeout.ms",
        ge=1,
        le=_INT32_MAX,
        description="Overall time allowed for one admin call, retries included",
    )


# Java class names a properties file may carry for the built-in assignors.
_ASSIGNOR_ALIASES = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
}


_JAVA_SYNONYMS = {
    "ssl.truststore.location": "ssl.ca.location",
    "ssl.truststore.certificates": "ssl.ca.pem",
    "ssl.keystore.certificate.chain": "ssl.certificate.pem",
    "ssl.keystore.key": "ssl.key.pem",
}


def java_security_names(values: Mapping[str, Any]) -> dict[str, Any]:
    """Rename the Java client's TLS keys to librdkafka's (both documented in
    docs/security.md); a key given under both names with different values is refused."""
    out = dict(values)
    for java, native in _JAVA_SYNONYMS.items():
        if java in out:
            value = out.pop(java)
            if native in out and out[native] != value:
                raise ValueError(f"{java} and {native} name the same setting with different values")
            out[native] = value
    return out
