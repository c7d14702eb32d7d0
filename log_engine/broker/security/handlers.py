"""The security APIs the client listener serves besides ``handlers.HANDLERS``
(kept here so the broker's handler table stays untouched)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from log_engine.broker.handlers.context import RequestContext
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
