"""Authorization of every client API, in one place: each API's gate.

A gate (one per API, grouped by family in :mod:`.data`, :mod:`.groups` and
:mod:`.admin`) checks the operations Kafka checks for that API, calls the
handler with the part of the request that is allowed, and adds Kafka's
``*_AUTHORIZATION_FAILED`` answers for the rest. :func:`guard` wraps a handler
table: with no authorizer (``authorizer.class.name`` empty) the handlers run
as before. Every API the client listener serves must have a gate or be listed
in :data:`UNGATED` (a unit test checks it).
"""

from __future__ import annotations

from typing import Any

from log_engine.broker.authorization import admin, data, groups
from log_engine.broker.authorization.checks import Gate, Handler
from log_engine.broker.handlers.context import RequestContext
from log_engine.protocol import ApiKey

GATES: dict[ApiKey, Gate] = {**data.GATES, **groups.GATES, **admin.GATES}

UNGATED = frozenset(
    {
        ApiKey.API_VERSIONS,  # served before authentication too
        ApiKey.SASL_HANDSHAKE,
        ApiKey.SASL_AUTHENTICATE,
        ApiKey.CREATE_ACLS,  # check ALTER / DESCRIBE on the cluster themselves
        ApiKey.DESCRIBE_ACLS,
        ApiKey.DELETE_ACLS,
    }
)
"""APIs with no gate, and why."""


def _guarded(gate: Gate, handler: Handler) -> Handler:
    async def guarded(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any] | None:
        if ctx.broker.authorizer is None:
            return await handler(ctx, body)
        return await gate(ctx, body, handler)

    guarded.__name__ = f"guarded_{getattr(handler, '__name__', 'handler')}"
    return guarded


def guard(handlers: dict[ApiKey, Handler]) -> dict[ApiKey, Handler]:
    """The table with each handler behind its API's gate."""
    missing = set(handlers) - set(GATES) - UNGATED
    if missing:
        raise AssertionError(f"APIs with no authorization gate: {sorted(missing)}")
    return {
        api: _guarded(GATES[api], handler) if api in GATES else handler
        for api, handler in handlers.items()
    }


__all__ = ["GATES", "UNGATED", "guard"]
