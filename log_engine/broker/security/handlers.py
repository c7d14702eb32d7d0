"""The security APIs the client listener serves besides ``handlers.HANDLERS``
(kept here so the broker's handler table stays untouched): SCRAM credentials
and ACLs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.security.acl_admin import (
    handle_create_acls,
    handle_delete_acls,
    handle_describe_acls,
)
from log_engine.broker.security.scram_admin import (
    handle_alter_user_scram_credentials,
    handle_describe_user_scram_credentials,
)
from log_engine.protocol import ApiKey

SECURITY_HANDLERS: dict[
    ApiKey, Callable[[RequestContext, dict[str, Any]], Awaitable[dict[str, Any] | None]]
] = {
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: handle_describe_user_scram_credentials,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: handle_alter_user_scram_credentials,
}

ACL_HANDLERS: dict[
    ApiKey, Callable[[RequestContext, dict[str, Any]], Awaitable[dict[str, Any] | None]]
] = {
    ApiKey.DESCRIBE_ACLS: handle_describe_acls,
    ApiKey.CREATE_ACLS: handle_create_acls,
    ApiKey.DELETE_ACLS: handle_delete_acls,
}
