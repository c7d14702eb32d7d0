"""The worker's settings, declared once with Kafka Connect's names.

Kafka's keys keep their meaning (``bootstrap.servers``, ``listeners``,
``key.converter``, ``offset.storage.file.filename``, ``plugin.path``,
``config.providers``...). Ours, for the embedded default:

- ``bootstrap.servers`` unset: standalone mode starts a broker in the same
  process on ``embedded.broker.listeners`` with data in
  ``embedded.broker.log.dirs``, and talks to it over loopback;
- ``pipelines.dir``: the folder watched for pipeline ``.properties`` files;
- ``connector.configs.file``: where connectors created over REST persist in
  standalone mode;
- ``task.restart.*``: failed tasks restart by themselves with exponential backoff.

Differences from Kafka's defaults, on purpose: ``offset.flush.interval.ms`` is
10 s (Kafka: 60 s), so a worker that crashes re-sends at most 10 s of source
records when it resumes; converters default to JsonConverter and
SimpleHeaderConverter (Kafka makes key/value converters mandatory).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Self
from urllib.parse import urlsplit

from pydantic import Field, PrivateAttr, ValidationError, field_validator, model_validator

from connect_worker.connector_config import CommaList, cross_field_error, raise_config_error
from connectors.api import ConfigError, PluginConfig
from log_engine.client import ClientConfig

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
SIMPLE_HEADER_CONVERTER = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
#: ``ssl.*`` keys only a server reads (the REST listener's fallback, Connect's rule);
#: Kafka's clients ignore them, so they are not passed to the worker's clients.
SERVER_ONLY_SSL_KEYS = frozenset({"ssl.client.auth", "ssl.principal.mapping.rules"})
BASIC_AUTH_EXTENSION = (
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
)


class WorkerConfig(PluginConfig):
    """One worker's settings (``worker.properties``)."""

    bootstrap_servers: str | None = Field(
        None,
        alias="bootstrap.servers",
        description="Brokers to connect to (host:port,...); unset: standalone mode starts an "
        "embedded broker on embedded.broker.listeners.",
    )
    listeners: CommaList = Field(
        default_factory=lambda: ["http://127.0.0.1:8083"],
        alias="listeners",
        description="REST API listeners as http://host:port or https://host:port "
        "(comma-separated; each one is served). https takes listeners.https.ssl.* keys, "
        "else the worker's ssl.* keys (docs/security.md).",
    )
    rest_extension_classes: CommaList = Field(
        default_factory=list,
        alias="rest.extension.classes",
        description="REST extensions: Kafka Connect's org.apache.kafka.connect.rest.basic."
        "auth.extension.BasicAuthSecurityRestExtension (basic authentication, users from "
        "the JAAS file) is the one known.",
    )
    rest_basic_auth_jaas_config: Path | None = Field(
        None,
        alias="rest.basic.auth.jaas.config",
        description="Path of the JAAS file whose KafkaConnect section names the REST users "
        "file (Kafka Connect reads -Djava.security.auth.login.config; Sluice also reads "
        "that from $KAFKA_OPTS when this is unset).",
    )
    rest_request_max_bytes: int = Field(
        1 << 20,
        ge=1,
        alias="rest.request.max.bytes",
        description="Largest REST request body (bytes); a larger one is answered 413 "
        "before it is read (Kafka Connect has no limit).",
    )
    key_converter: str = Field(
        JSON_CONVERTER,
        alias="key.converter",
        description="Converter of record keys; key.converter.* keys configure it.",
    )
    value_converter: str = Field(
        JSON_CONVERTER,
        alias="value.converter",
        description="Converter of record values; value.converter.* keys configure it.",
    )
    header_converter: str = Field(
        SIMPLE_HEADER_CONVERTER,
        alias="header.converter",
        description="Converter of record headers; header.converter.* keys configure it.",
    )
    offset_storage_file_filename: Path = Field(
        Path("data/connect.offsets"),
        alias="offset.storage.file.filename",
        description="File where a standalone worker stores source connectors' offsets.",
    )
    status_storage_file_filename: Path | None = Field(
        None,
        alias="status.storage.file.filename",
        description="File where a standalone worker keeps each connector's active topics "
        "(GET /connectors/{name}/topics), so they survive a restart. Unset: connect.status "
        "next to offset.storage.file.filename.",
    )
    offset_flush_interval_ms: int = Field(
        10000,
        alias="offset.flush.interval.ms",
        ge=1,
        description="How often (ms) source offsets are flushed; a crash re-sends at most "
        "this much. 10 s (Kafka: 60 s) for a faster, smaller resume.",
    )
    offset_flush_timeout_ms: int = Field(
        5000,
        alias="offset.flush.timeout.ms",
        ge=1,
        description="Maximum time (ms) to wait for records to be acknowledged before an "
        "offset flush is abandoned and retried at the next interval.",
    )
    plugin_path: CommaList = Field(
        default_factory=list,
        alias="plugin.path",
        description="Folders (comma-separated) whose Python modules and packages are loaded "
        "as plugins.",
    )
    config_providers: CommaList | None = Field(
        None,
        alias="config.providers",
        description="Names of config providers (config.providers.<name>.class); unset: env, "
        "file and directory are available.",
    )
    pipelines_dir: Path = Field(
        Path("configs/pipelines"),
        alias="pipelines.dir",
        description="Folder watched for pipeline .properties files (one connector each).",
    )
    embedded_broker_listeners: str = Field(
        "PLAINTEXT://127.0.0.1:9092",
        alias="embedded.broker.listeners",
        description="Listeners of the embedded broker (used when bootstrap.servers is unset).",
    )
    embedded_broker_log_dirs: Path = Field(
        Path("data/log"),
        alias="embedded.broker.log.dirs",
        description="Data folder of the embedded broker.",
    )
    connector_configs_file: Path = Field(
        Path("data/connectors.json"),
        alias="connector.configs.file",
        description="File where a standalone worker keeps connectors created over REST, so "
        "they survive a restart.",
    )
    task_restart_enabled: bool = Field(
        True,
        alias="task.restart.enabled",
        description="Restart FAILED tasks automatically with exponential backoff.",
    )
    task_restart_backoff_initial_ms: int = Field(
        1000,
        alias="task.restart.backoff.initial.ms",
        ge=0,
        description="Delay (ms) before the first automatic restart of a failed task.",
    )
    task_restart_backoff_max_ms: int = Field(
        60000,
        alias="task.restart.backoff.max.ms",
        ge=0,
        description="Longest delay (ms) between automatic restarts of a failed task.",
    )

    metrics_enabled: bool = Field(
        True,
        alias="metrics.enabled",
        description="Measure connectors and tasks and serve GET /metrics (Prometheus text "
        "format); false: nothing is measured and /metrics answers 404 (Sluice's key).",
    )
    metrics_sample_window_ms: int = Field(
        30000,
        ge=1,
        alias="metrics.sample.window.ms",
        description="Length (ms) of one sample of the windowed rates, averages and maxima.",
    )
    metrics_num_samples: int = Field(
        2,
        ge=1,
        alias="metrics.num.samples",
        description="Samples kept for the windowed rates, averages and maxima.",
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        alias="log.format",
        description="text: one line per message; json: one JSON object per line, with "
        "the connector and task names in each line a task logs (Sluice's key).",
    )

    _props: dict[str, str] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _backoff_bounds(self) -> Self:
        if self.task_restart_backoff_max_ms < self.task_restart_backoff_initial_ms:
            raise cross_field_error(
                "must be at least task.restart.backoff.initial.ms",
                "task.restart.backoff.max.ms",
            )
        return self

    @field_validator("bootstrap_servers")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("listeners")
    @classmethod
    def _http_urls(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("needs at least one http://host:port listener")
        for url in value:
            parts = urlsplit(url)
            try:
                port = parts.port
            except ValueError:
                port = None
            if parts.scheme not in ("http", "https") or not parts.hostname or port is None:
                raise ValueError(f"{url!r} is not http://host:port or https://host:port")
        return value

    @field_validator("rest_extension_classes")
    @classmethod
    def _known_extensions(cls, value: list[str]) -> list[str]:
        unknown = [name for name in value if name != BASIC_AUTH_EXTENSION]
        if unknown:
            raise ValueError(
                f"{', '.join(unknown)}: not a REST extension Sluice has (only "
                f"{BASIC_AUTH_EXTENSION})"
            )
        return value

    @property
    def rest_basic_auth(self) -> bool:
        """Whether the REST API asks for basic authentication (Connect's extension named)."""
        return BASIC_AUTH_EXTENSION in self.rest_extension_classes

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> Self:
        """Validate worker properties; ConfigError lists every bad key."""
        try:
            config = cls.model_validate(dict(props))
        except ValidationError as exc:
            raise_config_error(exc, cls)
        config._props = dict(props)
        config._check_client_stores()
        return config

    def _check_client_stores(self) -> None:
        """Open the TLS key and trust stores of the worker's clients (worker-level keys,
        then ``producer.``/``consumer.``/``admin.``): a bad store stops the start."""
        for prefix in ("", "producer.", "consumer.", "admin."):
            keys = {**self.client_security_props(), **_security_only(self.converter_props(prefix))}
            if keys.get("security.protocol", "PLAINTEXT").upper() not in ("SSL", "SASL_SSL"):
                continue
            try:
                ClientConfig.from_mapping({"bootstrap.servers": "localhost:9092", **keys})
            except ValidationError as exc:
                raise_config_error(exc, ClientConfig)
            except ValueError as exc:
                where = f"the worker's {prefix[:-1]} clients" if prefix else "the worker's clients"
                raise ConfigError(f"{where}: {exc}") from None

    @property
    def props(self) -> dict[str, str]:
        """The raw properties this config was read from."""
        return dict(self._props)

    def client_security_props(self) -> dict[str, str]:
        """Worker-level client security keys (``security.protocol``, ``ssl.*``,
        ``sasl.*``): every Kafka client of the worker gets them, under its
        ``producer.``/``consumer.``/``admin.`` keys and connector overrides."""
        return {
            k: v
            for k, v in self._props.items()
            if (k == "security.protocol" or k.startswith(("ssl.", "sasl.")))
            and k not in SERVER_ONLY_SSL_KEYS
        }

    def admin_client_props(self) -> dict[str, str]:
        """The worker's own admin client's keys: the security keys, then ``admin.*``."""
        return {**self.client_security_props(), **self.converter_props("admin")}

    def converter_props(self, prefix: str) -> dict[str, str]:
        """The ``<prefix>.*`` properties (e.g. ``key.converter``), prefix stripped."""
        head = prefix if prefix.endswith(".") else prefix + "."
        return {k[len(head) :]: v for k, v in self._props.items() if k.startswith(head)}

    @property
    def rest_listener(self) -> tuple[str, str, int]:
        """(scheme, host, port) of the first listener."""
        return self.rest_listeners[0]

    @property
    def rest_listeners(self) -> list[tuple[str, str, int]]:
        """(scheme, host, port) of every listener."""
        found = []
        for url in self.listeners:
            parts = urlsplit(url)
            assert parts.hostname is not None and parts.port is not None
            found.append((parts.scheme, parts.hostname, parts.port))
        return found

    @property
    def status_file(self) -> Path:
        """``status.storage.file.filename``, else ``connect.status`` beside the offsets file."""
        if self.status_storage_file_filename is not None:
            return self.status_storage_file_filename
        return self.offset_storage_file_filename.parent / "connect.status"

    @property
    def plugin_paths(self) -> list[Path]:
        return [Path(p) for p in self.plugin_path]

    @property
    def standalone_embedded(self) -> bool:
        """Whether standalone mode runs its own broker (no bootstrap.servers)."""
        return self.bootstrap_servers is None


def _security_only(props: Mapping[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in props.items()
        if (k == "security.protocol" or k.startswith(("ssl.", "sasl.")))
        and k not in SERVER_ONLY_SSL_KEYS
    }
