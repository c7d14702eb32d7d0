"""The admin client: topics, partitions, configs, records, groups and their offsets.

Each call sends the request to the broker that must answer it: topic
creation, deletion and partition growth to the controller (any broker when
none is advertised), record deletion and offset lookups to partition leaders,
group calls to the group's coordinator. Retriable errors (NOT_CONTROLLER,
leadership moves, coordinator changes, dropped connections) are retried after
``retry.backoff.ms`` until ``default.api.timeout.ms``; any other error is
raised as the protocol's :class:`KafkaError`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from log_engine.acls import AclBinding, AclFilter
from log_engine.client import errors, security_admin
from log_engine.client.admin_types import (
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    GroupDescription,
    GroupListing,
    MemberDescription,
    NewTopic,
    OffsetSpec,
    TopicDescription,
)
from log_engine.client.cluster import Cluster
from log_engine.client.config import AdminConfig
from log_engine.client.connection import BrokerConnection
from log_engine.client.consumer_protocol import Assignment, ConsumerProtocolError
from log_engine.client.coordinator_lookup import find_coordinator
from log_engine.client.log_dirs import LogDirDescription, describe_log_dirs
from log_engine.client.offsets import (
    EARLIEST,
    LATEST,
    commit_offsets,
    fetch_committed,
    list_offsets,
)
from log_engine.client.types import OffsetAndMetadata, TopicPartition
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

T = TypeVar("T")
_RESOURCE_TYPES = {"topic": 2, "broker": 4}


class Admin:
    """Asynchronous admin client; ``async with Admin(config) as admin:``."""

    def __init__(
        self, config: AdminConfig | Mapping[str, Any] | None = None, **overrides: Any
    ) -> None:
        self.config = (
            config
            if isinstance(config, AdminConfig)
            else AdminConfig.from_mapping(config, **overrides)
        )
        self._cluster = Cluster(self.config)
        self._started = False

    async def __aenter__(self) -> Admin:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Fetch the cluster metadata (every call does this on first use)."""
        if not self._started:
            self._started = True
            await self._cluster.bootstrap()

    async def close(self) -> None:
        """Close the connections."""
        await self._cluster.close()

    # -- topics --------------------------------------------------------------------------

    async def create_topics(
        self,
        topics: Sequence[NewTopic],
        *,
        if_not_exists: bool = False,
        validate_only: bool = False,
    ) -> None:
        """Create ``topics``; with ``if_not_exists`` an existing topic is not an error."""
        body = {
            "topics": [
                {
                    "name": t.name,
                    "num_partitions": t.num_partitions,
                    "replication_factor": t.replication_factor,
                    "assignments": [],
                    "configs": [{"name": k, "value": v} for k, v in t.configs.items()],
                }
                for t in topics
            ],
            "timeout_ms": self.config.request_timeout_ms,
            "validate_only": validate_only,
        }
        response = await self._to_controller(ApiKey.CREATE_TOPICS, body)
        for result in response["topics"]:
            code = result["error_code"]
            if code == _TOPIC_ALREADY_EXISTS and if_not_exists:
                continue
            _check(code, result.get("error_message"), f"creating topic {result['name']!r}")
        await self._cluster.refresh([t.name for t in topics])

    async def create_topic(
        self,
        name: str,
        num_partitions: int = 1,
        replication_factor: int = 1,
        configs: Mapping[str, str] | None = None,
        *,
        if_not_exists: bool = False,
    ) -> None:
        """Create one topic."""
        topic = NewTopic(name, num_partitions, replication_factor, dict(configs or {}))
        await self.create_topics([topic], if_not_exists=if_not_exists)

    async def delete_topics(self, names: Iterable[str], *, if_exists: bool = False) -> None:
        """Delete topics; with ``if_exists`` a missing topic is not an error."""
        names = list(names)
        body = {
            "topic_names": names,  # v0-5
            "topics": [{"name": name} for name in names],  # v6+: by name or id
            "timeout_ms": self.config.request_timeout_ms,
        }
        response = await self._to_controller(ApiKey.DELETE_TOPICS, body)
        for result in response["responses"]:
            code = result["error_code"]
            if code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and if_exists:
                continue
            _check(code, result.get("error_message"), f"deleting topic {result['name']!r}")

    async def list_topics(self, *, include_internal: bool = False) -> list[str]:
        """The names of all topics."""
        metadata = await self._with_retries(lambda: self._cluster.refresh(all_topics=True))
        return sorted(
            n for n, t in metadata.topics.items() if include_internal or not t.is_internal
        )

    async def describe_topics(
        self, names: Iterable[str] | None = None
    ) -> dict[str, TopicDescription]:
        """Partitions, leaders and replicas of ``names`` (all topics when None)."""
        wanted = None if names is None else list(names)
        metadata = await self._with_retries(
            lambda: self._cluster.refresh(wanted or (), all_topics=wanted is None)
        )
        out: dict[str, TopicDescription] = {}
        for name in wanted if wanted is not None else sorted(metadata.topics):
            info = metadata.topics.get(name)
            if info is None:
                raise errors.kafka_error(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {name!r}")
            errors.check_error(info.error_code, f"describing topic {name!r}")
            partitions = [info.partitions[p] for p in sorted(info.partitions)]
            out[name] = TopicDescription(name, info.is_internal, partitions)
        return out

    async def describe_cluster(self) -> ClusterDescription:
        """Cluster id, controller and brokers."""
        metadata = await self._with_retries(lambda: self._cluster.refresh())
        brokers = [metadata.brokers[b] for b in sorted(metadata.brokers)]
        return ClusterDescription(metadata.cluster_id, metadata.controller_id, brokers)

    async def create_partitions(
        self, counts: Mapping[str, int], *, validate_only: bool = False
    ) -> None:
        """Grow each topic to the given total partition count."""
        body = {
            "topics": [{"name": n, "count": c, "assignments": None} for n, c in counts.items()],
            "timeout_ms": self.config.request_timeout_ms,
            "validate_only": validate_only,
        }
        response = await self._to_controller(ApiKey.CREATE_PARTITIONS, body)
        for result in response["results"]:
            _check(
                result["error_code"],
                result.get("error_message"),
                f"adding partitions to {result['name']!r}",
            )
        await self._cluster.refresh(list(counts))

    async def describe_configs(
        self, resources: Iterable[ConfigResource]
    ) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        """The current configs of topics and brokers."""
        wanted = list(resources)
        body = {
            "resources": [
                {
                    "resource_type": _RESOURCE_TYPES[r.type],
                    "resource_name": r.name,
                    "configuration_keys": None,
                }
                for r in wanted
            ],
            "include_synonyms": False,
            "include_documentation": False,
        }
        response = await self._with_retries(lambda: self._send_any(ApiKey.DESCRIBE_CONFIGS, body))
        by_key = {(_RESOURCE_TYPES[r.type], r.name): r for r in wanted}
        out: dict[ConfigResource, dict[str, ConfigEntry]] = {}
        for result in response["results"]:
            resource = by_key[(result["resource_type"], result["resource_name"])]
            _check(result["error_code"], result.get("error_message"), f"describing {resource}")
            out[resource] = {
                c["name"]: ConfigEntry(
                    c["name"],
                    c["value"],
                    c["read_only"],
                    c.get("config_source", -1) == 5 or bool(c.get("is_default", False)),
                    c["is_sensitive"],
                )
                for c in result["configs"]
            }
        return out

    async def delete_records(
        self, before: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, int]:
        """Delete records below each offset (-1: the high watermark); returns low watermarks."""
        pending = dict(before)

        async def attempt() -> dict[TopicPartition, int]:
            await self._cluster.refresh({tp.topic for tp in pending})
            by_leader: dict[int, dict[TopicPartition, int]] = {}
            for tp, offset in pending.items():
                by_leader.setdefault(self._cluster.metadata.leader(tp), {})[tp] = offset
            out: dict[TopicPartition, int] = {}
            for leader, offsets in by_leader.items():
                if leader < 0:
                    raise errors.kafka_error(ErrorCode.LEADER_NOT_AVAILABLE, f"{sorted(offsets)}")
                out.update(await self._delete_records_on(leader, offsets))
            return out

        return await self._with_retries(attempt)

    async def _delete_records_on(
        self, leader: int, offsets: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, int]:
        topics: dict[str, list[dict[str, int]]] = {}
        for tp, offset in offsets.items():
            topics.setdefault(tp.topic, []).append(
                {"partition_index": tp.partition, "offset": offset}
            )
        body = {
            "topics": [{"name": n, "partitions": ps} for n, ps in topics.items()],
            "timeout_ms": self.config.request_timeout_ms,
        }
        conn = await self._cluster.connection(leader)
        response = await conn.send(ApiKey.DELETE_RECORDS, body)
        out: dict[TopicPartition, int] = {}
        for topic in response["topics"]:
            for part in topic["partitions"]:
                tp = TopicPartition(topic["name"], part["partition_index"])
                errors.check_error(part["error_code"], f"deleting records of {tp}")
                out[tp] = part["low_watermark"]
        return out

    async def list_offsets(
        self, specs: Mapping[TopicPartition, OffsetSpec], *, read_committed: bool = False
    ) -> dict[TopicPartition, tuple[int, int]]:
        """``(offset, timestamp)`` per partition: earliest, latest, or first at a timestamp."""
        await self.start()
        resolved = {tp: _spec(s) for tp, s in specs.items()}
        return await list_offsets(
            self._cluster,
            resolved,
            isolation_level=int(read_committed),
            backoff_ms=self.config.retry_backoff_ms,
        )

    async def describe_log_dirs(
        self, topics: Iterable[str] | None = None
    ) -> dict[int, list[LogDirDescription]]:
        """Each broker's log directories with the size of each partition replica in bytes
        (``topics``: only theirs); see :mod:`log_engine.client.log_dirs`."""
        metadata = await self._with_retries(lambda: self._cluster.refresh())
        return await self._with_retries(
            lambda: describe_log_dirs(self._send_to, sorted(metadata.brokers), topics)
        )

    # -- groups --------------------------------------------------------------------------

    async def list_groups(self) -> list[GroupListing]:
        """Every group known to any broker."""
        metadata = await self._with_retries(lambda: self._cluster.refresh())
        found: dict[str, GroupListing] = {}
        for node_id in metadata.brokers:
            response = await self._with_retries(
                partial(self._send_to, node_id, ApiKey.LIST_GROUPS, {})
            )
            errors.check_error(response["error_code"], f"ListGroups on broker {node_id}")
            for group in response["groups"]:
                found[group["group_id"]] = GroupListing(group["group_id"], group["protocol_type"])
        return [found[g] for g in sorted(found)]

    async def describe_groups(self, group_ids: Iterable[str]) -> dict[str, GroupDescription]:
        """State, protocol and members of each group."""
        out: dict[str, GroupDescription] = {}
        for group_id in group_ids:
            response = await self._to_coordinator(
                group_id,
                ApiKey.DESCRIBE_GROUPS,
                {"groups": [group_id], "include_authorized_operations": False},
            )
            (group,) = response["groups"]
            errors.check_error(group["error_code"], f"describing group {group_id!r}")
            out[group_id] = _group_description(group)
        return out

    async def list_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The committed offsets of a group (all its partitions when ``partitions`` is None)."""
        wanted = None if partitions is None else list(partitions)
        found = await self._with_group(
            group_id, lambda conn: fetch_committed(conn, group_id, wanted)
        )
        return {tp: o for tp, o in found.items() if o is not None}

    async def alter_consumer_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int | OffsetAndMetadata]
    ) -> None:
        """Set a group's committed offsets (the group must have no active members)."""
        committed = {
            tp: o if isinstance(o, OffsetAndMetadata) else OffsetAndMetadata(o)
            for tp, o in offsets.items()
        }
        await self._with_group(group_id, lambda conn: commit_offsets(conn, group_id, committed))

    async def reset_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], to: OffsetSpec
    ) -> dict[TopicPartition, int]:
        """Move a group to the earliest, latest or first-at-timestamp offsets; returns them."""
        found = await self.list_offsets(dict.fromkeys(partitions, to))
        offsets = {tp: offset for tp, (offset, _) in found.items()}
        beyond = [tp for tp, offset in offsets.items() if offset < 0]
        if beyond:  # no record at or after the timestamp: the end of the log
            ends = await self.list_offsets(dict.fromkeys(beyond, "latest"))
            offsets.update({tp: offset for tp, (offset, _) in ends.items()})
        await self.alter_consumer_group_offsets(group_id, offsets)
        return offsets

    # -- ACLs and SCRAM credentials (security_admin.py) -----------------------------------

    async def create_acls(self, bindings: Sequence[AclBinding]) -> None:
        await security_admin.create_acls(self._send_retrying, bindings)

    async def describe_acls(self, acl_filter: AclFilter) -> list[AclBinding]:
        return await security_admin.describe_acls(self._send_retrying, acl_filter)

    async def delete_acls(self, filters: Sequence[AclFilter]) -> list[AclBinding]:
        return await security_admin.delete_acls(self._send_retrying, filters)

    async def describe_user_scram_credentials(
        self, users: Sequence[str] | None = None
    ) -> dict[str, dict[str, int]]:
        return await security_admin.describe_user_scram_credentials(self._send_retrying, users)

    async def upsert_user_scram_credential(
        self, user: str, mechanism: str, password: str, iterations: int = 8192
    ) -> None:
        await security_admin.upsert_user_scram_credential(
            self._send_retrying, user, mechanism, password, iterations
        )

    async def delete_user_scram_credential(self, user: str, mechanism: str) -> None:
        await security_admin.delete_user_scram_credential(self._send_retrying, user, mechanism)

    # -- routing and retries -------------------------------------------------------------

    async def _send_retrying(self, api_key: ApiKey, body: dict[str, Any]) -> dict[str, Any]:
        return await self._with_retries(lambda: self._send_any(api_key, body))

    async def _with_retries(self, call: Callable[[], Awaitable[T]]) -> T:
        await self.start()
        deadline = time.monotonic() + self.config.default_api_timeout_ms / 1000
        while True:
            try:
                return await call()
            except errors.KafkaError as exc:
                if not exc.retriable or time.monotonic() >= deadline:
                    raise
                self._cluster.request_refresh()
                await asyncio.sleep(self.config.retry_backoff_ms / 1000)

    async def _send_to(self, node_id: int, api_key: ApiKey, body: dict[str, Any]) -> dict[str, Any]:
        conn = await self._cluster.connection(node_id)
        return await conn.send(api_key, body)

    async def _send_any(self, api_key: ApiKey, body: dict[str, Any]) -> dict[str, Any]:
        conn = await self._cluster.any_connection()
        return await conn.send(api_key, body)

    async def _to_controller(self, api_key: ApiKey, body: dict[str, Any]) -> dict[str, Any]:
        async def attempt() -> dict[str, Any]:
            controller = self._cluster.metadata.controller_id
            if controller >= 0 and controller in self._cluster.metadata.brokers:
                conn = await self._cluster.connection(controller)
            else:
                conn = await self._cluster.any_connection()
            response = await conn.send(api_key, body, timeout_ms=self.config.request_timeout_ms * 2)
            for key in ("topics", "responses", "results"):
                for result in response.get(key) or ():
                    if result.get("error_code") == _NOT_CONTROLLER:
                        await self._cluster.refresh()
                        raise errors.kafka_error(
                            _NOT_CONTROLLER, f"{api_key.name} sent to {conn!r}"
                        )
            return response

        return await self._with_retries(attempt)

    async def _with_group(
        self, group_id: str, call: Callable[[BrokerConnection], Awaitable[T]]
    ) -> T:
        async def attempt() -> T:
            return await call(await self._coordinator(group_id))

        return await self._with_retries(attempt)

    async def _to_coordinator(
        self, group_id: str, api_key: ApiKey, body: dict[str, Any]
    ) -> dict[str, Any]:
        return await self._with_group(group_id, lambda conn: conn.send(api_key, body))

    async def _coordinator(self, group_id: str) -> BrokerConnection:
        conn = await self._cluster.any_connection()
        found = await find_coordinator(conn, group_id)
        self._cluster.add_broker(found.node_id, found.host, found.port)
        return await self._cluster.connection(found.node_id)


_TOPIC_ALREADY_EXISTS = 36
_NOT_CONTROLLER = 41


def _check(code: int, message: str | None, context: str) -> None:
    if code:
        errors.check_error(code, f"{context}: {message}" if message else context)


def _spec(spec: OffsetSpec) -> int:
    if spec == "earliest":
        return EARLIEST
    if spec == "latest":
        return LATEST
    if isinstance(spec, int) and spec >= 0:
        return spec
    raise ValueError(f"offset spec {spec!r}: use 'earliest', 'latest' or a timestamp in ms")


def _group_description(group: dict[str, Any]) -> GroupDescription:
    members = []
    for m in group["members"]:
        raw = bytes(m["member_assignment"])
        assignment: list[TopicPartition] = []
        if group["protocol_type"] == "consumer" and raw:
            try:
                assignment = list(Assignment.decode(raw).partitions)
            except ConsumerProtocolError:
                assignment = []
        members.append(
            MemberDescription(m["member_id"], m["client_id"], m["client_host"], assignment, raw)
        )
    return GroupDescription(
        group["group_id"],
        group["group_state"],
        group["protocol_type"],
        group["protocol_data"],
        members,
    )


__all__ = [
    "Admin",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "GroupDescription",
    "GroupListing",
    "MemberDescription",
    "NewTopic",
    "TopicDescription",
]
