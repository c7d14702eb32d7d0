"""Broker settings, declared once with Kafka's names and defaults.

``BrokerConfig.from_properties`` takes the string map of a ``broker.properties``
file (plus ``--override`` pairs). Broker-wide ``log.*`` settings become the
default topic config (:meth:`BrokerConfig.default_topic_properties`), named the
way the storage layer's ``LogConfig`` expects (Kafka's topic-level names).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from log_engine.broker.cluster_config import ClusterConfig, parse_cluster
from log_engine.broker.security.inter_broker import CONTROLLER_MECHANISM, client_settings
from log_engine.broker.security.listener_security import SecurityConfigError

log = logging.getLogger(__name__)

_HOUR_MS = 3_600_000
_MINUTE_MS = 60_000


@dataclass(frozen=True, slots=True)
class Listener:
    """One ``NAME://host:port`` entry of ``listeners``."""

    name: str
    host: str
    port: int
    protocol: str = "PLAINTEXT"

    @classmethod
    def parse(cls, text: str, protocols: dict[str, str] | None = None) -> Listener:
        """Parse one entry; its name must map to a known security protocol in
        ``protocols`` (``listener.security.protocol.map``, default: PLAINTEXT and
        CONTROLLER and the four protocol names, as Kafka's default)."""
        name, sep, address = text.strip().partition("://")
        host, colon, port = address.rpartition(":")
        if not sep or not colon or not port.isdigit() or not name:
            raise ValueError(f"listener {text!r} is not NAME://host:port")
        name = name.upper()
        protocol = (protocols or DEFAULT_PROTOCOL_MAP).get(name)
        if protocol is None:
            raise ValueError(
                f"listener {text!r}: {name} is not in listener.security.protocol.map"
            )
        if protocol not in SECURITY_PROTOCOLS:
            raise ValueError(
                f"listener {text!r}: unknown security protocol {protocol} "
                f"(one of {', '.join(SECURITY_PROTOCOLS)})"
            )
        return cls(name, host.strip("[]"), int(port), protocol)

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""Kafka's security protocols, in the order of their ids (PLAINTEXT=0 ... SASL_SSL=3)."""


def security_protocol_id(protocol: str) -> int:
    """Kafka's id of a security protocol name (what BrokerRegistration carries)."""
    return SECURITY_PROTOCOLS.index(protocol)


SECURITY_PREFIXES = (
    "ssl.",
    "sasl.",
    "listener.name.",
    "connection.failed.authentication.",
    "connections.max.reauth.",
)
"""Broker keys read by :mod:`log_engine.broker.security` (kept raw: per-listener
``listener.name.<name>.`` overrides have open-ended names)."""

AUTHORIZER_CLASS_NAMES = (
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
)
"""``authorizer.class.name`` values that turn on Sluice's ACL authorizer."""

DEFAULT_PROTOCOL_MAP = {
    "PLAINTEXT": "PLAINTEXT",
    "CONTROLLER": "PLAINTEXT",
    "SSL": "SSL",
    "SASL_PLAINTEXT": "SASL_PLAINTEXT",
    "SASL_SSL": "SASL_SSL",
}


def parse_protocol_map(text: str) -> dict[str, str]:
    """``listener.security.protocol.map``: ``NAME:PROTOCOL,...``."""
    protocols: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, colon, protocol = item.partition(":")
        if not colon or not name.strip() or not protocol.strip():
            raise ValueError(f"{item!r} is not NAME:PROTOCOL")
        protocols[name.strip().upper()] = protocol.strip().upper()
    return protocols


class BrokerConfigError(ValueError):
    """A broker setting is missing, malformed or out of range."""


class BrokerConfig(BaseModel):
    """A single broker's settings (Kafka's broker config names as aliases)."""

    model_config = ConfigDict(
        populate_by_name=True, extra="ignore", frozen=True, hide_input_in_errors=True
    )  # a rejected config may hold passwords: errors never echo its values

    node_id: int = Field(1, alias="node.id", ge=0, description="This broker's id.")
    listeners: str = Field(
        "PLAINTEXT://127.0.0.1:9092", description="Where the broker accepts clients."
    )
    advertised_listeners: str | None = Field(
        None,
        alias="advertised.listeners",
        description="Addresses given to clients in metadata; default: listeners.",
    )
    process_roles: str | None = Field(
        None,
        alias="process.roles",
        description="KRaft roles: broker, controller or broker,controller; unset with "
        "no controller.quorum.voters: a single node as before.",
    )
    controller_quorum_voters: str | None = Field(
        None,
        alias="controller.quorum.voters",
        description="The controllers: id@host:port,... (their controller listeners).",
    )
    controller_listener_names: str | None = Field(
        None,
        alias="controller.listener.names",
        description="Listener names the controllers use (e.g. CONTROLLER).",
    )
    listener_security_protocol_map: str = Field(
        "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
        "SASL_SSL:SASL_SSL",
        alias="listener.security.protocol.map",
        description="Listener name -> security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, "
        "SASL_SSL); see docs/security.md.",
    )
    inter_broker_listener_name: str | None = Field(
        None,
        alias="inter.broker.listener.name",
        description="The listener brokers use to reach each other; default: the first "
        "broker listener.",
    )
    security_inter_broker_protocol: str | None = Field(
        None,
        alias="security.inter.broker.protocol",
        description="Kafka's older way to name the inter-broker listener: the listener "
        "named after this protocol (not together with inter.broker.listener.name).",
    )
    controller_quorum_election_timeout_ms: int = Field(
        1000,
        alias="controller.quorum.election.timeout.ms",
        gt=0,
        description="Time without a leader before a voter stands for election (plus jitter).",
    )
    controller_quorum_fetch_timeout_ms: int = Field(
        2000,
        alias="controller.quorum.fetch.timeout.ms",
        gt=0,
        description="Time without a successful fetch from the leader before a voter stands.",
    )
    controller_quorum_request_timeout_ms: int = Field(
        2000,
        alias="controller.quorum.request.timeout.ms",
        gt=0,
        description="Time before an unanswered quorum request is sent again.",
    )
    broker_heartbeat_interval_ms: int = Field(
        2000,
        alias="broker.heartbeat.interval.ms",
        gt=0,
        description="How often a clustered broker heartbeats to the active controller.",
    )
    broker_session_timeout_ms: int = Field(
        9000,
        alias="broker.session.timeout.ms",
        gt=0,
        description="A broker without a heartbeat for this long is fenced by the controller.",
    )
    unclean_leader_election_enable: bool = Field(
        False,
        alias="unclean.leader.election.enable",
        description="Elect a replica outside the ISR when none is left (may lose "
        "acknowledged records); a topic config overrides it.",
    )
    metadata_log_max_record_bytes_between_snapshots: int = Field(
        20 * 1024 * 1024,
        alias="metadata.log.max.record.bytes.between.snapshots",
        gt=0,
        description="Metadata record bytes applied before a node snapshots its image.",
    )
    cluster_id: str | None = Field(
        None,
        alias="cluster.id",
        description="Sluice's key: the cluster id a new data dir is formatted with; default: "
        "derived from controller.quorum.voters (Kafka takes it from kafka-storage format).",
    )
    log_dirs: str = Field("data/log", alias="log.dirs", description="The data directory.")
    num_partitions: int = Field(
        1, alias="num.partitions", ge=1, description="Partitions of auto-created topics."
    )
    default_replication_factor: int = Field(
        1,
        alias="default.replication.factor",
        ge=1,
        description="Replication factor of auto-created topics.",
    )
    auto_create_topics_enable: bool = Field(
        True,
        alias="auto.create.topics.enable",
        description="Create a topic when a client asks for its metadata.",
    )
    message_max_bytes: int = Field(
        1_048_588,
        alias="message.max.bytes",
        ge=0,
        description="Largest record batch a topic accepts unless it overrides it.",
    )
    socket_request_max_bytes: int = Field(
        104_857_600,
        alias="socket.request.max.bytes",
        ge=1024,
        description="Largest request frame; larger frames close the connection.",
    )
    connections_max_idle_ms: int = Field(
        600_000,
        alias="connections.max.idle.ms",
        ge=1000,
        description="Idle connections are closed after this long.",
    )
    socket_request_body_timeout_ms: int = Field(
        30_000,
        alias="socket.request.body.timeout.ms",
        ge=100,
        description=(
            "A request whose body has not fully arrived this long after its size "
            "prefix closes the connection (slowloris, stalled frames). Sluice's own "
            "key: Kafka relies on connections.max.idle.ms only."
        ),
    )
    queued_max_request_bytes: int = Field(
        256 * 1024 * 1024,
        alias="queued.max.request.bytes",
        ge=-1,
        description=(
            "Bytes of large request bodies (received, being read or being handled) "
            "all connections may hold at once; a connection that would exceed it "
            "stops reading until memory frees. -1: unbounded (Kafka's default). "
            "Sluice's default, 256 MiB, is 2.5 full socket.request.max.bytes frames."
        ),
    )
    max_connections: int = Field(
        1000,
        alias="max.connections",
        ge=1,
        description=(
            "Connections the broker keeps open at once; new ones over it are closed. "
            "Each holds a 64 KiB receive buffer, so the default bounds those to 64 MiB."
        ),
    )
    max_connections_per_ip: int = Field(
        2_147_483_647,
        alias="max.connections.per.ip",
        ge=1,
        description="Connections one client address may keep open; new ones over it are closed.",
    )
    max_connections_per_ip_overrides: str = Field(
        "",
        alias="max.connections.per.ip.overrides",
        description="Per-address limits: 'host:count,host:count' (addresses, not names).",
    )
    log_maintenance_interval_ms: int = Field(
        1_000,
        alias="log.retention.check.interval.ms",
        ge=10,
        description="How often retention, compaction, flush.ms and checkpoints run.",
    )
    group_initial_rebalance_delay_ms: int = Field(
        3_000,
        alias="group.initial.rebalance.delay.ms",
        ge=0,
        description="Wait for more members before the first rebalance of an empty group.",
    )
    group_min_session_timeout_ms: int = Field(
        6_000,
        alias="group.min.session.timeout.ms",
        ge=1,
        description="Smallest session timeout a member may ask for.",
    )
    group_max_session_timeout_ms: int = Field(
        1_800_000,
        alias="group.max.session.timeout.ms",
        ge=1,
        description="Largest session timeout a member may ask for.",
    )
    offsets_topic_num_partitions: int = Field(
        50,
        alias="offsets.topic.num.partitions",
        ge=1,
        description="Partitions of __consumer_offsets.",
    )
    offsets_topic_replication_factor: int = Field(
        3,
        alias="offsets.topic.replication.factor",
        ge=1,
        description=(
            "Replication factor of __consumer_offsets in a cluster (created through the "
            "controller on the first FindCoordinator). Capped at the cluster's size (the "
            "larger of its controller voters and registered brokers), with a warning; the "
            "creation waits until that many brokers are unfenced."
        ),
    )
    offsets_commit_timeout_ms: int = Field(
        5000,
        alias="offsets.commit.timeout.ms",
        ge=1,
        description=(
            "An offset commit in a cluster waits this long for the in-sync replicas of "
            "its __consumer_offsets partition, then fails with COORDINATOR_NOT_AVAILABLE."
        ),
    )
    offsets_topic_segment_bytes: int = Field(
        104_857_600,
        alias="offsets.topic.segment.bytes",
        ge=1024,
        description="Segment size of __consumer_offsets (small so compaction runs).",
    )
    offsets_retention_minutes: int = Field(
        10_080,
        alias="offsets.retention.minutes",
        ge=1,
        description="Committed offsets of empty groups expire after this long.",
    )
    replica_lag_time_max_ms: int = Field(
        30_000,
        alias="replica.lag.time.max.ms",
        ge=1,
        description=(
            "A follower that has not caught up with the leader's log end for this long "
            "leaves the ISR (through the controller)."
        ),
    )
    replica_fetch_wait_max_ms: int = Field(
        500,
        alias="replica.fetch.wait.max.ms",
        ge=0,
        description="How long a follower's Fetch may wait at the leader for new data.",
    )
    replica_fetch_max_bytes: int = Field(
        1_048_576,
        alias="replica.fetch.max.bytes",
        ge=1024,
        description=(
            "Bytes a follower asks for per partition (at least one whole batch is "
            "returned even when larger)."
        ),
    )
    replica_high_watermark_checkpoint_interval_ms: int = Field(
        5_000,
        alias="replica.high.watermark.checkpoint.interval.ms",
        ge=10,
        description="How often replicated partitions' high watermarks are saved to disk.",
    )
    num_replica_fetchers: int = Field(
        1,
        alias="num.replica.fetchers",
        ge=1,
        le=64,
        description="Fetcher tasks per leader broker; partitions are spread over them.",
    )
    metrics_listeners: str | None = Field(
        None,
        alias="metrics.listeners",
        description="Sluice's key: http://host:port of the Prometheus GET /metrics endpoint "
        "(docs/metrics.md); unset: no endpoint, nothing measured.",
    )
    authorizer_class_name: str = Field(
        "",
        alias="authorizer.class.name",
        description="Turns ACL authorization on: Kafka's "
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer or "
        "kafka.security.authorizer.AclAuthorizer (both mean Sluice's authorizer); "
        "empty: every client may do everything (docs/security.md).",
    )
    super_users: str = Field(
        "",
        alias="super.users",
        description="Principals that pass every ACL check, separated by ';' "
        "(User:admin;User:CN=broker.example.com).",
    )
    allow_everyone_if_no_acl_found: bool = Field(
        False,
        alias="allow.everyone.if.no.acl.found",
        description="With the authorizer on, allow a request on a resource no ACL names.",
    )
    log_settings: dict[str, str] = Field(
        default_factory=dict, description="Raw log.* settings (see default_topic_properties)."
    )
    security_settings: dict[str, str] = Field(
        default_factory=dict,
        description="Raw ssl.*, sasl.* and listener.name.* settings (docs/security.md).",
    )

    @field_validator("authorizer_class_name")
    @classmethod
    def _known_authorizer(cls, value: str) -> str:
        value = value.strip()
        if value and value not in AUTHORIZER_CLASS_NAMES:
            raise ValueError(
                f"{value!r} is not an authorizer Sluice has: leave it empty (no "
                f"authorization) or set one of {', '.join(AUTHORIZER_CLASS_NAMES)}"
            )
        return value

    @field_validator("super_users")
    @classmethod
    def _principals(cls, value: str) -> str:
        for item in value.split(";"):
            kind, sep, name = item.strip().partition(":")
            if item.strip() and not (sep and kind and name):
                raise ValueError(f"{item.strip()!r} is not a principal of the form User:name")
        return value

    @property
    def super_user_set(self) -> frozenset[str]:
        """``super.users`` as a set of principals."""
        return frozenset(p.strip() for p in self.super_users.split(";") if p.strip())

    @field_validator("queued_max_request_bytes")
    @classmethod
    def _positive_or_unbounded(cls, value: int) -> int:
        if value == 0:
            raise ValueError("must be positive, or -1 for unbounded")
        return value

    @field_validator("metrics_listeners")
    @classmethod
    def _check_metrics_listeners(cls, value: str | None) -> str | None:
        if value is not None and value.strip():
            parse_metrics_listener(value)
            return value.strip()
        return None

    @field_validator("max_connections_per_ip_overrides")
    @classmethod
    def _parse_overrides(cls, value: str) -> str:
        parse_ip_overrides(value)
        return value

    @property
    def connection_limits_per_ip(self) -> dict[str, int]:
        """``max.connections.per.ip.overrides`` as a map."""
        return parse_ip_overrides(self.max_connections_per_ip_overrides)

    @field_validator("listener_security_protocol_map")
    @classmethod
    def _check_protocol_map(cls, value: str) -> str:
        parse_protocol_map(value)
        return value

    @model_validator(mode="after")
    def _check_listeners_and_cluster(self) -> BrokerConfig:
        protocols = self.protocol_map
        for value in (self.listeners, self.advertised_listeners):
            if value is not None:
                for item in value.split(","):
                    Listener.parse(item, protocols)
        _ = self.cluster  # raises on inconsistent cluster keys
        return self

    @property
    def protocol_map(self) -> dict[str, str]:
        return parse_protocol_map(self.listener_security_protocol_map)

    def all_listeners(self) -> list[Listener]:
        """Every entry of ``listeners``."""
        return [Listener.parse(item, self.protocol_map) for item in self.listeners.split(",")]

    @property
    def cluster(self) -> ClusterConfig | None:
        """The KRaft cluster keys, checked together; None for a single node (no voters)."""
        cluster = self._parse_cluster()
        if cluster is None:
            return None
        name = cluster.controller_listener_name
        protocol = self.protocol_map.get(name, "PLAINTEXT")
        if protocol not in SECURITY_PROTOCOLS:
            raise ValueError(
                f"controller listener {name}: unknown security protocol {protocol} "
                f"(one of {', '.join(SECURITY_PROTOCOLS)})"
            )
        if protocol == "PLAINTEXT":
            return cluster
        try:
            client = client_settings(
                name, protocol, self.security_settings, CONTROLLER_MECHANISM
            )
        except SecurityConfigError as exc:
            raise ValueError(f"controller listener {name}: {exc}") from None
        return dataclasses.replace(cluster, controller_client=client)

    def _parse_cluster(self) -> ClusterConfig | None:
        return parse_cluster(
            node_id=self.node_id,
            process_roles=self.process_roles,
            quorum_voters=self.controller_quorum_voters,
            controller_listener_names=self.controller_listener_names,
            listeners=self.all_listeners(),
            inter_broker_listener_name=self.inter_broker_name,
            cluster_id=self.cluster_id,
            election_timeout_ms=self.controller_quorum_election_timeout_ms,
            fetch_timeout_ms=self.controller_quorum_fetch_timeout_ms,
            request_timeout_ms=self.controller_quorum_request_timeout_ms,
        )

    @property
    def inter_broker_name(self) -> str | None:
        """``inter.broker.listener.name``, else ``security.inter.broker.protocol`` (the
        listener of that name, as Kafka reads it), else None (the first client listener)."""
        if self.inter_broker_listener_name and self.security_inter_broker_protocol:
            raise BrokerConfigError(
                "set inter.broker.listener.name or security.inter.broker.protocol, not both"
            )
        return self.inter_broker_listener_name or self.security_inter_broker_protocol

    def _controller_names(self) -> set[str]:
        names = self.controller_listener_names or ""
        return {n.strip().upper() for n in names.split(",") if n.strip()}

    @classmethod
    def from_properties(cls, props: dict[str, str]) -> BrokerConfig:
        """Build from a properties map; unknown keys are logged, bad values raise."""
        known = {f.alias or name for name, f in cls.model_fields.items()}
        log_keys = {k: v for k, v in props.items() if k in _LOG_TO_TOPIC or k in _TOPIC_PASS}
        security = {k: v for k, v in props.items() if k.startswith(SECURITY_PREFIXES)}
        unknown = sorted(set(props) - known - set(log_keys) - set(security))
        for key in unknown:
            log.warning("unknown broker setting %r ignored", key)
        values: dict[str, Any] = {k: v for k, v in props.items() if k in known}
        values["log_settings"] = log_keys
        values["security_settings"] = security
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise BrokerConfigError(_explain(exc)) from None

    @property
    def broker_listeners(self) -> list[Listener]:
        """Every client listener the broker binds (each entry of ``listeners`` that is
        not a controller listener), each with its own security protocol."""
        brokers = [
            listener
            for listener in self.all_listeners()
            if listener.name not in self._controller_names()
        ]
        if not brokers:
            raise BrokerConfigError("listeners has no broker listener (controller-only node)")
        return brokers

    @property
    def listener(self) -> Listener:
        """The inter-broker listener: ``inter.broker.listener.name``, else the first
        client listener (followers fetch from leaders through it)."""
        brokers = self.broker_listeners
        wanted = (self.inter_broker_name or "").upper()
        return next((listener for listener in brokers if listener.name == wanted), brokers[0])

    @property
    def advertised_listener(self) -> Listener:
        """The inter-broker listener's advertised address."""
        return self.advertised_for(self.listener)

    def advertised_for(self, bound: Listener) -> Listener:
        """The address handed to clients of listener ``bound`` in metadata: its
        ``advertised.listeners`` entry, else its bound address (0.0.0.0 -> 127.0.0.1)."""
        if self.advertised_listeners:
            advertised = [
                Listener.parse(item, self.protocol_map)
                for item in self.advertised_listeners.split(",")
            ]
            match = next((a for a in advertised if a.name == bound.name), None)
            if match is not None:
                return match
            if (
                len(self.broker_listeners) == 1
                and advertised[0].name not in self._controller_names()
            ):
                return advertised[0]
        host = bound.host if bound.host not in ("", "0.0.0.0", "::") else "127.0.0.1"
        return Listener(bound.name, host, bound.port, bound.protocol)

    @property
    def metrics_address(self) -> tuple[str, int] | None:
        """``metrics.listeners`` as (host, port); None when unset (metrics off)."""
        if self.metrics_listeners is None:
            return None
        return parse_metrics_listener(self.metrics_listeners)

    @property
    def log_dir(self) -> Path:
        return Path(self.log_dirs.split(",")[0])

    def default_topic_properties(self) -> dict[str, str]:
        """Broker ``log.*`` settings as topic-level config names (the topic defaults)."""
        topic: dict[str, str] = {"max.message.bytes": str(self.message_max_bytes)}
        for key, value in self.log_settings.items():
            if key in _TOPIC_PASS:
                topic[key] = value
                continue
            name, scale = _LOG_TO_TOPIC[key]
            topic[name] = value if scale == 1 else str(int(value) * scale)
        # Kafka: a more precise unit wins over a coarser one.
        for name, keys in _PRECEDENCE.items():
            for key in keys:
                if key in self.log_settings:
                    scale = _LOG_TO_TOPIC[key][1]
                    topic[name] = str(int(self.log_settings[key]) * scale)
                    break
        return topic


# broker key -> (topic key, multiplier to the topic key's unit)
_LOG_TO_TOPIC: dict[str, tuple[str, int]] = {
    "log.segment.bytes": ("segment.bytes", 1),
    "log.roll.ms": ("segment.ms", 1),
    "log.roll.hours": ("segment.ms", _HOUR_MS),
    "log.retention.ms": ("retention.ms", 1),
    "log.retention.minutes": ("retention.ms", _MINUTE_MS),
    "log.retention.hours": ("retention.ms", _HOUR_MS),
    "log.retention.bytes": ("retention.bytes", 1),
    "log.cleanup.policy": ("cleanup.policy", 1),
    "log.flush.interval.messages": ("flush.messages", 1),
    "log.flush.interval.ms": ("flush.ms", 1),
    "log.index.interval.bytes": ("index.interval.bytes", 1),
    "log.index.size.max.bytes": ("segment.index.bytes", 1),
    "log.message.timestamp.type": ("message.timestamp.type", 1),
    "log.cleaner.delete.retention.ms": ("delete.retention.ms", 1),
    "log.cleaner.min.cleanable.ratio": ("min.cleanable.dirty.ratio", 1),
    "log.cleaner.min.compaction.lag.ms": ("min.compaction.lag.ms", 1),
    "log.segment.delete.delay.ms": ("file.delete.delay.ms", 1),
}
_TOPIC_PASS = {"compression.type", "min.insync.replicas"}
_PRECEDENCE = {
    "retention.ms": ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
    "segment.ms": ("log.roll.ms", "log.roll.hours"),
}


def parse_metrics_listener(text: str) -> tuple[str, int]:
    """``metrics.listeners``: one ``http://host:port`` (host may be empty or ``[::1]``)."""
    scheme, sep, address = text.strip().partition("://")
    host, colon, port = address.rpartition(":")
    if scheme.lower() != "http" or not sep or not colon or not port.isdigit():
        raise ValueError(f"{text!r} is not http://host:port (one listener, plain HTTP)")
    if int(port) > 65535:
        raise ValueError(f"{text!r}: port {port} is above 65535")
    return host.strip("[]"), int(port)


def parse_ip_overrides(text: str) -> dict[str, int]:
    """``host:count,host:count`` (IPv6 hosts in brackets or with the last colon) as a map."""
    limits: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        host, colon, count = item.rpartition(":")
        if not colon or not host or not count.isdigit():
            raise ValueError(f"{item!r} is not host:count")
        limits[host.strip("[]")] = int(count)
    return limits


def _explain(exc: ValidationError) -> str:
    lines = []
    for error in exc.errors():
        if not error["loc"]:  # a rule across keys: its message names them
            lines.append(str(error["msg"]).removeprefix("Value error, "))
            continue
        where = ".".join(str(p) for p in error["loc"])
        lines.append(f"{where}: {error['msg']} (got {error.get('input')!r})")
    return "invalid broker config: " + "; ".join(lines)
