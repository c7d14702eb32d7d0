"""Blocking facade over :class:`~log_engine.client.admin.Admin` for plain threads.

Each method runs the async call on a :class:`~log_engine.client.loop_thread.LoopThread`
and waits at most ``default.api.timeout.ms`` (plus a margin) for it.
"""

from __future__ import annotations

from collections.abc import Coroutine, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from log_engine.acls import AclBinding, AclFilter
from log_engine.client.admin import Admin
from log_engine.client.admin_types import (
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    GroupDescription,
    GroupListing,
    NewTopic,
    OffsetSpec,
    TopicDescription,
)
from log_engine.client.config import AdminConfig
from log_engine.client.log_dirs import LogDirDescription
from log_engine.client.loop_thread import LoopThread
from log_engine.client.types import OffsetAndMetadata, TopicPartition

T = TypeVar("T")
_MARGIN_S = 5.0


class SyncAdmin:
    """The admin client for threads: the same methods as :class:`Admin`, blocking."""

    def __init__(
        self,
        config: AdminConfig | Mapping[str, Any] | None = None,
        *,
        loop_thread: LoopThread | None = None,
        **overrides: Any,
    ) -> None:
        self._owns_loop = loop_thread is None
        self._runner = loop_thread or LoopThread("sluice-admin")
        self._admin = Admin(config, **overrides)
        self.config = self._admin.config
        self._timeout_s = self.config.default_api_timeout_ms / 1000 + _MARGIN_S

    def __enter__(self) -> SyncAdmin:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._runner.run(coro, self._timeout_s)

    def create_topics(
        self,
        topics: Sequence[NewTopic],
        *,
        if_not_exists: bool = False,
        validate_only: bool = False,
    ) -> None:
        self._run(
            self._admin.create_topics(
                topics, if_not_exists=if_not_exists, validate_only=validate_only
            )
        )

    def create_topic(
        self,
        name: str,
        num_partitions: int = 1,
        replication_factor: int = 1,
        configs: Mapping[str, str] | None = None,
        *,
        if_not_exists: bool = False,
    ) -> None:
        self._run(
            self._admin.create_topic(
                name, num_partitions, replication_factor, configs, if_not_exists=if_not_exists
            )
        )

    def delete_topics(self, names: Iterable[str], *, if_exists: bool = False) -> None:
        self._run(self._admin.delete_topics(list(names), if_exists=if_exists))

    def list_topics(self, *, include_internal: bool = False) -> list[str]:
        return self._run(self._admin.list_topics(include_internal=include_internal))

    def describe_topics(self, names: Iterable[str] | None = None) -> dict[str, TopicDescription]:
        return self._run(self._admin.describe_topics(None if names is None else list(names)))

    def describe_cluster(self) -> ClusterDescription:
        return self._run(self._admin.describe_cluster())

    def create_partitions(self, counts: Mapping[str, int], *, validate_only: bool = False) -> None:
        self._run(self._admin.create_partitions(counts, validate_only=validate_only))

    def describe_configs(
        self, resources: Iterable[ConfigResource]
    ) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        return self._run(self._admin.describe_configs(list(resources)))

    def delete_records(self, before: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        return self._run(self._admin.delete_records(before))

    def describe_log_dirs(
        self, topics: Iterable[str] | None = None
    ) -> dict[int, list[LogDirDescription]]:
        return self._run(self._admin.describe_log_dirs(None if topics is None else list(topics)))

    def list_offsets(
        self, specs: Mapping[TopicPartition, OffsetSpec], *, read_committed: bool = False
    ) -> dict[TopicPartition, tuple[int, int]]:
        return self._run(self._admin.list_offsets(specs, read_committed=read_committed))

    def list_groups(self) -> list[GroupListing]:
        return self._run(self._admin.list_groups())

    def describe_groups(self, group_ids: Iterable[str]) -> dict[str, GroupDescription]:
        return self._run(self._admin.describe_groups(list(group_ids)))

    def list_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        wanted = None if partitions is None else list(partitions)
        return self._run(self._admin.list_consumer_group_offsets(group_id, wanted))

    def alter_consumer_group_offsets(
        self, group_id: str, offsets: Mapping[TopicPartition, int | OffsetAndMetadata]
    ) -> None:
        self._run(self._admin.alter_consumer_group_offsets(group_id, offsets))

    def reset_consumer_group_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition], to: OffsetSpec
    ) -> dict[TopicPartition, int]:
        return self._run(self._admin.reset_consumer_group_offsets(group_id, list(partitions), to))

    def create_acls(self, bindings: Sequence[AclBinding]) -> None:
        self._run(self._admin.create_acls(bindings))

    def describe_acls(self, acl_filter: AclFilter) -> list[AclBinding]:
        return self._run(self._admin.describe_acls(acl_filter))

    def delete_acls(self, filters: Sequence[AclFilter]) -> list[AclBinding]:
        return self._run(self._admin.delete_acls(filters))

    def describe_user_scram_credentials(
        self, users: Sequence[str] | None = None
    ) -> dict[str, dict[str, int]]:
        return self._run(self._admin.describe_user_scram_credentials(users))

    def upsert_user_scram_credential(
        self, user: str, mechanism: str, password: str, iterations: int = 8192
    ) -> None:
        self._run(self._admin.upsert_user_scram_credential(user, mechanism, password, iterations))

    def delete_user_scram_credential(self, user: str, mechanism: str) -> None:
        self._run(self._admin.delete_user_scram_credential(user, mechanism))

    def close(self) -> None:
        if not self._runner.running:
            return
        try:
            self._run(self._admin.close())
        finally:
            if self._owns_loop:
                self._runner.stop()
