"""A distributed worker's settings: the standalone ones plus Kafka Connect's cluster keys.

Group keys (``group.id``, ``session.timeout.ms``, ``heartbeat.interval.ms``,
``rebalance.timeout.ms``, ``scheduled.rebalance.max.delay.ms``,
``connect.protocol``) are declared by
:class:`~connect_worker.distributed.membership.GroupSettings` and checked
together with these by :meth:`DistributedConfig.from_properties`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Self

from pydantic import Field, ValidationError, model_validator

from connect_worker.distributed.membership import GroupSettings
from connect_worker.herder.request_signing import ALGORITHMS
from connect_worker.worker_config import WorkerConfig
from connectors.api import ConfigError


class DistributedConfig(WorkerConfig):
    """``sluice distributed worker.properties``: where the cluster's state lives."""

    config_storage_topic: str = Field(
        "connect-configs", min_length=1, alias="config.storage.topic",
        description="Compacted topic (one partition) holding connector and task configs",
    )  # fmt: skip
    config_storage_replication_factor: int = Field(
        -1, alias="config.storage.replication.factor",
        description="Replication factor of the config topic (-1: the broker's default)",
    )  # fmt: skip
    offset_storage_topic: str = Field(
        "connect-offsets", min_length=1, alias="offset.storage.topic",
        description="Compacted topic holding source connectors' offsets",
    )  # fmt: skip
    offset_storage_partitions: int = Field(
        25, ge=1, alias="offset.storage.partitions",
        description="Partitions of the offset topic when it is created",
    )  # fmt: skip
    offset_storage_replication_factor: int = Field(
        -1, alias="offset.storage.replication.factor",
        description="Replication factor of the offset topic (-1: the broker's default)",
    )  # fmt: skip
    status_storage_topic: str = Field(
        "connect-status", min_length=1, alias="status.storage.topic",
        description="Compacted topic holding connector and task statuses",
    )  # fmt: skip
    status_storage_partitions: int = Field(
        5, ge=1, alias="status.storage.partitions",
        description="Partitions of the status topic when it is created",
    )  # fmt: skip
    status_storage_replication_factor: int = Field(
        -1, alias="status.storage.replication.factor",
        description="Replication factor of the status topic (-1: the broker's default)",
    )  # fmt: skip
    worker_sync_timeout_ms: int = Field(
        3000, ge=1, alias="worker.sync.timeout.ms",
        description="How long a worker reads its config topic to the offset the group's "
        "leader assigned at before giving up on that assignment and rejoining",
    )  # fmt: skip
    inter_worker_key_ttl_ms: int = Field(
        3_600_000, ge=0, le=2**31 - 1, alias="inter.worker.key.ttl.ms",
        description="How long the leader's session key for signing internal requests lives "
        "before the leader writes a new one",
    )  # fmt: skip
    inter_worker_key_generation_algorithm: str = Field(
        "HmacSHA256", alias="inter.worker.key.generation.algorithm",
        description="The Mac algorithm the session key is made for",
    )  # fmt: skip
    inter_worker_key_size: int | None = Field(
        None, ge=1, alias="inter.worker.key.size",
        description="Session key size in bits (default: 256)",
    )  # fmt: skip
    inter_worker_signature_algorithm: str = Field(
        "HmacSHA256", alias="inter.worker.signature.algorithm",
        description="The Mac algorithm this worker signs internal requests with",
    )  # fmt: skip
    inter_worker_verification_algorithms: str = Field(
        "HmacSHA256", alias="inter.worker.verification.algorithms",
        description="Comma-separated Mac algorithms accepted on internal requests",
    )  # fmt: skip
    rest_advertised_host_name: str | None = Field(
        None, alias="rest.advertised.host.name",
        description="Host other workers use to reach this one (default: the listener's)",
    )  # fmt: skip
    rest_advertised_port: int | None = Field(
        None, ge=1, le=65535, alias="rest.advertised.port",
        description="Port other workers use to reach this one (default: the listener's)",
    )  # fmt: skip
    rest_advertised_listener: str | None = Field(
        None, alias="rest.advertised.listener",
        description="Scheme other workers use, http or https: the first listener of that "
        "scheme is advertised (default: the first listener)",
    )  # fmt: skip

    @model_validator(mode="after")
    def _known_algorithms(self) -> Self:
        accepted = self.verification_algorithms
        for key, names in (
            ("inter.worker.key.generation.algorithm", [self.inter_worker_key_generation_algorithm]),
            ("inter.worker.signature.algorithm", [self.inter_worker_signature_algorithm]),
            ("inter.worker.verification.algorithms", list(accepted)),
        ):
            unknown = [n for n in names if n not in ALGORITHMS]
            if unknown or not names:
                raise ValueError(
                    f"{key}: {', '.join(unknown) or 'empty'} is not one of "
                    f"{', '.join(ALGORITHMS)}"
                )
        if self.inter_worker_signature_algorithm not in accepted:
            raise ValueError(
                "inter.worker.verification.algorithms must include "
                f"inter.worker.signature.algorithm ({self.inter_worker_signature_algorithm})"
            )
        return self

    @property
    def verification_algorithms(self) -> tuple[str, ...]:
        """``inter.worker.verification.algorithms`` as a tuple."""
        names = self.inter_worker_verification_algorithms.split(",")
        return tuple(n.strip() for n in names if n.strip())

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> Self:
        """Validate; ConfigError names every bad key (group keys included)."""
        if not str(props.get("bootstrap.servers", "")).strip():
            raise ConfigError("bootstrap.servers: required in distributed mode")
        config = super().from_properties(props)
        wanted = config.rest_advertised_listener
        if wanted is not None and wanted.lower() not in {s for s, _, _ in config.rest_listeners}:
            raise ConfigError(
                f"rest.advertised.listener: {wanted!r} names no listener's scheme "
                f"(listeners={','.join(config.listeners)})"
            )
        try:
            config._group = GroupSettings.from_mapping(props)
        except ValidationError as exc:
            problems = [
                f"{'.'.join(str(p) for p in e['loc']) or 'group'}: {e['msg']}"
                for e in exc.errors()
            ]
            raise ConfigError("; ".join(problems)) from None
        return config

    _group: GroupSettings | None = None

    @property
    def group(self) -> GroupSettings:
        assert self._group is not None, "built by from_properties"
        return self._group

    @property
    def advertised_url(self) -> str:
        """``scheme://host:port/`` other workers forward requests to."""
        scheme, host, port = self.rest_listener
        if self.rest_advertised_listener is not None:
            wanted = self.rest_advertised_listener.lower()
            scheme, host, port = next(
                listener for listener in self.rest_listeners if listener[0] == wanted
            )
        host = self.rest_advertised_host_name or host
        return f"{scheme}://{host}:{self.rest_advertised_port or port}/"

    @property
    def worker_id(self) -> str:
        """``host:port`` as other workers reach this one (Kafka's worker id)."""
        _, _, rest = self.advertised_url.rstrip("/").partition("://")
        return rest
