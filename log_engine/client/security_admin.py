"""The admin client's ACL and SCRAM-credential calls (KIP-554, CreateAcls & co).

Each function takes ``send``, which delivers one request to a broker and
returns the response body (the :class:`~log_engine.client.admin.Admin` passes
its retrying sender). A SCRAM upsertion is salted here (PBKDF2 through
``hashlib``): the password never leaves the client.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from log_engine.acls import AclBinding, AclFilter
from log_engine.client import errors
from log_engine.protocol import ApiKey
from log_engine.protocol.acl_bodies import (
    binding_from_matching,
    creation_body,
    filter_body,
)

Send = Callable[[ApiKey, dict[str, Any]], Awaitable[dict[str, Any]]]

SCRAM_MECHANISMS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
"""Mechanism name -> the int8 KIP-554 sends."""
_MECHANISM_NAMES = {code: name for name, code in SCRAM_MECHANISMS.items()}
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
_SALT_BYTES = 32


def _check(code: int, message: str | None, context: str) -> None:
    if code:
        errors.check_error(code, f"{context}: {message}" if message else context)


async def create_acls(send: Send, bindings: Sequence[AclBinding]) -> None:
    """Create the bindings; the first refused one raises its KafkaError."""
    creations = [creation_body(b) for b in bindings]
    response = await send(ApiKey.CREATE_ACLS, {"creations": creations})
    for binding, result in zip(bindings, response["results"], strict=True):
        _check(result["error_code"], result["error_message"], f"creating ACL {binding}")


async def describe_acls(send: Send, acl_filter: AclFilter) -> list[AclBinding]:
    """The bindings the broker holds that match the filter."""
    response = await send(ApiKey.DESCRIBE_ACLS, filter_body(acl_filter))
    _check(response["error_code"], response["error_message"], "describing ACLs")
    return [
        binding_from_matching(
            {**a, "resource_type": r["resource_type"], "resource_name": r["resource_name"],
             "pattern_type": r["pattern_type"]}
        )
        for r in response["resources"]
        for a in r["acls"]
    ]


async def delete_acls(send: Send, filters: Sequence[AclFilter]) -> list[AclBinding]:
    """Delete what the filters match; the deleted bindings."""
    response = await send(ApiKey.DELETE_ACLS, {"filters": [filter_body(f) for f in filters]})
    deleted: list[AclBinding] = []
    for result in response["filter_results"]:
        _check(result["error_code"], result["error_message"], "deleting ACLs")
        for m in result["matching_acls"]:
            _check(m["error_code"], m["error_message"], "deleting an ACL")
            deleted.append(binding_from_matching(m))
    return deleted


async def describe_user_scram_credentials(
    send: Send, users: Sequence[str] | None = None
) -> dict[str, dict[str, int]]:
    """user -> mechanism -> iterations (every user with credentials when ``users`` is None)."""
    body = {"users": None if users is None else [{"name": u} for u in users]}
    response = await send(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, body)
    _check(response["error_code"], response["error_message"], "describing SCRAM users")
    out: dict[str, dict[str, int]] = {}
    for result in response["results"]:
        _check(result["error_code"], result["error_message"], f"user {result['user']}")
        out[result["user"]] = {
            _MECHANISM_NAMES.get(i["mechanism"], str(i["mechanism"])): i["iterations"]
            for i in result["credential_infos"]
        }
    return out


def _mechanism_code(mechanism: str) -> int:
    code = SCRAM_MECHANISMS.get(mechanism.upper())
    if code is None:
        raise ValueError(f"{mechanism!r}: one of {', '.join(SCRAM_MECHANISMS)}")
    return code


async def upsert_user_scram_credential(
    send: Send, user: str, mechanism: str, password: str, iterations: int = 8192
) -> None:
    """Set ``user``'s password for ``mechanism`` (salted here, sent salted)."""
    code = _mechanism_code(mechanism)
    salt = os.urandom(_SALT_BYTES)
    salted = hashlib.pbkdf2_hmac(
        _HASHES[mechanism.upper()], password.encode(), salt, iterations
    )
    body = {
        "deletions": [],
        "upsertions": [
            {"name": user, "mechanism": code, "iterations": iterations, "salt": salt,
             "salted_password": salted}
        ],
    }
    await _alter(send, body)


async def delete_user_scram_credential(send: Send, user: str, mechanism: str) -> None:
    body = {"deletions": [{"name": user, "mechanism": _mechanism_code(mechanism)}],
            "upsertions": []}
    await _alter(send, body)


async def _alter(send: Send, body: dict[str, Any]) -> None:
    response = await send(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, body)
    for result in response["results"]:
        _check(result["error_code"], result["error_message"], f"user {result['user']}")
