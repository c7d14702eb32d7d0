"""DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554).

Both work on the broker's salted credential store (``__scram_credentials.json``
in the log dir). An upsertion brings salt and salted password; the broker
keeps StoredKey and ServerKey derived from them (RFC 5802), never the salted
password. With no authorizer any authenticated client may call these (Kafka
with no authorizer allows the same); with one, DESCRIBE / ALTER on the
cluster (``log_engine.broker.authorization.admin``); see docs/security.md.
"""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter
from typing import Any

from log_engine.broker.cluster.scram import ClusterScramStore
from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.security.scram_store import (
    MIN_ITERATIONS,
    ScramCredential,
    ScramCredentialStore,
    ScramLookup,
    store_for,
)
from log_engine.metadata.records import UserScramCredentialRecord

MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
MECHANISM_CODES = {name: code for code, name in MECHANISMS.items()}
MAX_ITERATIONS = 16384
_HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}
UNSUPPORTED_SASL_MECHANISM = 33
RESOURCE_NOT_FOUND = 91
DUPLICATE_RESOURCE = 92
UNACCEPTABLE_CREDENTIAL = 93


def _credential(mechanism: str, iterations: int, salt: bytes, salted: bytes) -> ScramCredential:
    digest = _HASHES[mechanism]
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    server_key = hmac.new(salted, b"Server Key", digest).digest()
    return ScramCredential(salt, digest(client_key).digest(), server_key, iterations)


def scram_record(upsertion: dict[str, Any]) -> UserScramCredentialRecord:
    """The metadata record of one (checked) upsertion: StoredKey and ServerKey, no
    salted password."""
    mechanism = MECHANISMS[upsertion["mechanism"]]
    c = _credential(
        mechanism, upsertion["iterations"], upsertion["salt"], upsertion["salted_password"]
    )
    return UserScramCredentialRecord(
        upsertion["name"], upsertion["mechanism"], c.salt, c.stored_key, c.server_key,
        c.iterations,
    )  # fmt: skip


def _lookup(context: RequestContext) -> ScramLookup:
    node = context.broker.cluster_node
    if node is not None:  # the metadata log's credentials
        return ClusterScramStore(node, None)
    return store_for(context.broker.config.log_dir)


async def handle_describe_user_scram_credentials(
    context: RequestContext, body: dict[str, Any]
) -> dict[str, Any]:
    users = _lookup(context).users()
    wanted = body["users"]
    names = sorted(users) if not wanted else [u["name"] for u in wanted]
    duplicates = {name for name, n in Counter(names).items() if n > 1}
    results = []
    for name in dict.fromkeys(names):
        if name in duplicates:
            code, message = DUPLICATE_RESOURCE, f"Cannot describe user {name} more than once"
        elif name not in users:
            code = RESOURCE_NOT_FOUND
            message = f"Attempt to describe a user credential that does not exist: {name}"
        else:
            code, message = 0, None
        infos = [
            {"mechanism": MECHANISM_CODES[m], "iterations": i}
            for m, i in sorted(users.get(name, {}).items())
        ] if code == 0 else []
        results.append(
            {"user": name, "error_code": code, "error_message": message, "credential_infos": infos}
        )
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "results": results}


async def handle_alter_user_scram_credentials(
    context: RequestContext, body: dict[str, Any]
) -> dict[str, Any]:
    store = _lookup(context)
    counts = Counter(
        (item["name"], item["mechanism"]) for item in body["deletions"] + body["upsertions"]
    )
    errors: dict[str, tuple[int, str]] = {}
    order: list[str] = []
    for item in body["deletions"] + body["upsertions"]:
        name = item["name"]
        if name not in order:
            order.append(name)
        if name in errors:
            continue
        mechanism = MECHANISMS.get(item["mechanism"])
        if not name:
            errors[name] = (UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        elif mechanism is None:
            errors[name] = (
                UNSUPPORTED_SASL_MECHANISM,
                f"Unknown SCRAM mechanism {item['mechanism']}",
            )
        elif counts[(name, item["mechanism"])] > 1:
            errors[name] = (
                DUPLICATE_RESOURCE,
                f"A user credential cannot be altered twice in the same request: {name}",
            )
        elif "iterations" in item and not MIN_ITERATIONS <= item["iterations"] <= MAX_ITERATIONS:
            errors[name] = (
                UNACCEPTABLE_CREDENTIAL,
                f"Iterations must be between {MIN_ITERATIONS} and {MAX_ITERATIONS}",
            )
        elif "iterations" not in item and store.get(mechanism, name) is None:
            errors[name] = (
                RESOURCE_NOT_FOUND,
                f"Attempt to delete a user credential that does not exist: {name}",
            )
    deletions = [i for i in body["deletions"] if i["name"] not in errors]
    upsertions = [i for i in body["upsertions"] if i["name"] not in errors]
    if isinstance(store, ClusterScramStore):
        failure = await store.alter(deletions, upsertions)
        if failure is not None:
            for item in deletions + upsertions:
                errors[item["name"]] = failure
    else:
        assert isinstance(store, ScramCredentialStore)
        for item in deletions:
            store.delete(MECHANISMS[item["mechanism"]], item["name"])
        for item in upsertions:
            mechanism = MECHANISMS[item["mechanism"]]
            store.set(
                mechanism,
                item["name"],
                _credential(mechanism, item["iterations"], item["salt"], item["salted_password"]),
            )
    results = [
        {
            "user": name,
            "error_code": errors.get(name, (0, None))[0],
            "error_message": errors.get(name, (0, None))[1],
        }
        for name in order
    ]
    return {"throttle_time_ms": 0, "results": results}


CLUSTER_AUTHORIZATION_FAILED = 31
_ANONYMOUS_MESSAGE = (
    "managing SCRAM credentials needs an authenticated principal (a SASL or "
    "mutual-TLS listener) when no authorizer is configured"
)


def anonymous_refusal(api_key: int, body: dict[str, Any]) -> dict[str, Any]:
    """The answer to a credentials API from an unauthenticated connection when the
    broker has no authorizer: every user gets CLUSTER_AUTHORIZATION_FAILED
    (stricter than Kafka with no authorizer, which lets anyone in). With an
    authorizer, ACLs decide (DESCRIBE / ALTER on the cluster)."""
    return cluster_refusal(api_key, body, _ANONYMOUS_MESSAGE)


def cluster_refusal(api_key: int, body: dict[str, Any], message: str) -> dict[str, Any]:
    """A credentials API answered CLUSTER_AUTHORIZATION_FAILED for every user."""
    if api_key == 50:
        return {
            "throttle_time_ms": 0,
            "error_code": CLUSTER_AUTHORIZATION_FAILED,
            "error_message": message,
            "results": [],
        }
    names = dict.fromkeys(i["name"] for i in body["deletions"] + body["upsertions"])
    return {
        "throttle_time_ms": 0,
        "results": [
            {"user": name, "error_code": CLUSTER_AUTHORIZATION_FAILED, "error_message": message}
            for name in names
        ],
    }
