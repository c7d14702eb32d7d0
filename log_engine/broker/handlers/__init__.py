"""Request handlers, one module per API family, and the table the server dispatches on.

A handler takes the request context and the decoded body (a dict with the
protocol's snake_case field names) and returns the response body, or ``None``
when no response is sent (Produce with ``acks=0``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from log_engine.broker.handlers import (
    admin,
    alter_configs,
    fetch,
    groups,
    log_dirs,
    metadata,
    offset_for_leader_epoch,
    offsets,
    produce,
)
from log_engine.broker.handlers.context import RequestContext
from log_engine.protocol import ApiKey

Handler = Callable[[RequestContext, dict[str, Any]], Awaitable[dict[str, Any] | None]]

HANDLERS: dict[ApiKey, Handler] = {
    ApiKey.API_VERSIONS: metadata.handle_api_versions,
    ApiKey.METADATA: metadata.handle_metadata,
    ApiKey.PRODUCE: produce.handle_produce,
    ApiKey.INIT_PRODUCER_ID: produce.handle_init_producer_id,
    ApiKey.FETCH: fetch.handle_fetch,
    ApiKey.LIST_OFFSETS: offsets.handle_list_offsets,
    ApiKey.OFFSET_COMMIT: offsets.handle_offset_commit,
    ApiKey.OFFSET_FETCH: offsets.handle_offset_fetch,
    ApiKey.FIND_COORDINATOR: groups.handle_find_coordinator,
    ApiKey.JOIN_GROUP: groups.handle_join_group,
    ApiKey.SYNC_GROUP: groups.handle_sync_group,
    ApiKey.HEARTBEAT: groups.handle_heartbeat,
    ApiKey.LEAVE_GROUP: groups.handle_leave_group,
    ApiKey.DESCRIBE_GROUPS: groups.handle_describe_groups,
    ApiKey.LIST_GROUPS: groups.handle_list_groups,
    ApiKey.CREATE_TOPICS: admin.handle_create_topics,
    ApiKey.DELETE_TOPICS: admin.handle_delete_topics,
    ApiKey.INCREMENTAL_ALTER_CONFIGS: alter_configs.handle_incremental_alter_configs,
    ApiKey.CREATE_PARTITIONS: admin.handle_create_partitions,
    ApiKey.DESCRIBE_CONFIGS: admin.handle_describe_configs,
    ApiKey.DELETE_RECORDS: admin.handle_delete_records,
    ApiKey.DESCRIBE_LOG_DIRS: log_dirs.handle_describe_log_dirs,
    ApiKey.OFFSET_FOR_LEADER_EPOCH: offset_for_leader_epoch.handle_offset_for_leader_epoch,
}

__all__ = ["HANDLERS", "Handler", "RequestContext"]
