"""The ACL model and the authorizer's decisions (Kafka's rules), and the file store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from log_engine.acls import (
    AclBinding,
    AclError,
    AclFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from log_engine.broker.authorization import GATES, UNGATED
from log_engine.broker.handlers import HANDLERS
from log_engine.broker.security.acl_store import AclStoreError, FileAclStore
from log_engine.broker.security.authorizer import Authorizer
from log_engine.broker.security.handlers import ACL_HANDLERS, SECURITY_HANDLERS

OP = AclOperation
RT = ResourceType
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED = PatternType.LITERAL, PatternType.PREFIXED
ALICE = "User:alice"


def acl(
    name: str,
    op: AclOperation,
    perm: AclPermissionType = ALLOW,
    *,
    rtype: ResourceType = RT.TOPIC,
    pattern: PatternType = LITERAL,
    principal: str = ALICE,
    host: str = "*",
) -> AclBinding:
    return AclBinding.build(rtype, name, pattern, principal, host, op, perm)


class MemoryStore:
    def __init__(self, *bindings: AclBinding) -> None:
        self.items = list(bindings)
        self.version = 0

    def bindings(self) -> list[AclBinding]:
        return self.items

    async def add(self, bindings: list[AclBinding]) -> None:
        self.items += bindings
        self.version += 1

    async def remove(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        raise NotImplementedError


def authorizer(*bindings: AclBinding, **kwargs: object) -> Authorizer:
    return Authorizer(MemoryStore(*bindings), **kwargs)  # type: ignore[arg-type]


def may(auth: Authorizer, op: AclOperation, name: str = "orders", *,
        rtype: ResourceType = RT.TOPIC, principal: str = ALICE, host: str = "10.0.0.1") -> bool:
    return auth.authorize(principal, host, op, rtype, name)


def test_no_acl_on_the_resource_follows_allow_everyone_if_no_acl_found() -> None:
    assert not may(authorizer(), OP.READ)
    assert may(authorizer(allow_everyone_if_no_acl_found=True), OP.READ)
    # an ACL for someone else on the resource: the default no longer applies
    other = acl("orders", OP.READ, principal="User:bob")
    assert not may(authorizer(other, allow_everyone_if_no_acl_found=True), OP.READ)


def test_allow_grants_only_its_operation_and_the_implied_describe() -> None:
    auth = authorizer(acl("orders", OP.WRITE))
    assert may(auth, OP.WRITE)
    assert may(auth, OP.DESCRIBE)  # WRITE implies DESCRIBE
    assert not may(auth, OP.READ)
    assert not may(auth, OP.DELETE)
    configs = authorizer(acl("orders", OP.ALTER_CONFIGS))
    assert may(configs, OP.DESCRIBE_CONFIGS)
    assert not may(configs, OP.DESCRIBE)


def test_all_allows_every_operation() -> None:
    auth = authorizer(acl("orders", OP.ALL))
    assert all(may(auth, op) for op in (OP.READ, OP.WRITE, OP.DESCRIBE, OP.ALTER_CONFIGS))


def test_deny_wins_over_allow_and_is_not_implied() -> None:
    auth = authorizer(acl("orders", OP.ALL), acl("orders", OP.WRITE, DENY))
    assert not may(auth, OP.WRITE)
    assert may(auth, OP.READ)
    # a DENY of READ does not deny DESCRIBE, which READ would imply
    reader = authorizer(acl("orders", OP.DESCRIBE), acl("orders", OP.READ, DENY))
    assert may(reader, OP.DESCRIBE)
    # a DENY of ALL denies everything
    assert not may(authorizer(acl("orders", OP.READ), acl("*", OP.ALL, DENY)), OP.READ)


def test_literal_wildcard_and_prefixed_patterns() -> None:
    auth = authorizer(acl("sales-", OP.READ, pattern=PREFIXED), acl("*", OP.DESCRIBE))
    assert may(auth, OP.READ, "sales-eu")
    assert not may(auth, OP.READ, "sale")
    assert not may(auth, OP.READ, "orders")
    assert may(auth, OP.DESCRIBE, "anything")
    literal = authorizer(acl("sales-", OP.READ))
    assert not may(literal, OP.READ, "sales-eu")


def test_principal_and_host_matching() -> None:
    auth = authorizer(
        acl("orders", OP.READ, principal="User:*", host="10.0.0.1"),
    )
    assert may(auth, OP.READ, principal="User:bob", host="10.0.0.1")
    assert not may(auth, OP.READ, principal="User:bob", host="10.0.0.2")
    denied_host = authorizer(acl("orders", OP.READ), acl("orders", OP.READ, DENY, host="10.0.0.9"))
    assert may(denied_host, OP.READ, host="10.0.0.1")
    assert not may(denied_host, OP.READ, host="10.0.0.9")


def test_resource_types_are_separate() -> None:
    auth = authorizer(acl("orders", OP.READ, rtype=RT.GROUP))
    assert may(auth, OP.READ, rtype=RT.GROUP)
    assert not may(auth, OP.READ, rtype=RT.TOPIC)


def test_super_users_pass_even_a_deny() -> None:
    auth = authorizer(acl("*", OP.ALL, DENY, principal="User:*"), super_users={"User:admin"})
    assert may(auth, OP.DELETE, principal="User:admin")
    assert not may(auth, OP.DELETE, principal="User:bob")


def test_decisions_follow_store_changes() -> None:
    auth = authorizer()
    assert not may(auth, OP.READ)
    asyncio.run(auth.create([acl("orders", OP.READ)]))
    assert may(auth, OP.READ)


def test_authorize_any_for_idempotent_producers() -> None:
    auth = authorizer(acl("orders", OP.WRITE))
    assert auth.authorize_any(ALICE, "h", OP.WRITE, RT.TOPIC)
    assert not auth.authorize_any("User:bob", "h", OP.WRITE, RT.TOPIC)
    blocked = authorizer(acl("orders", OP.WRITE), acl("*", OP.WRITE, DENY))
    assert not blocked.authorize_any(ALICE, "h", OP.WRITE, RT.TOPIC)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((RT.ANY, "x", LITERAL, ALICE, "*", OP.READ, ALLOW), "cannot be bound"),
        ((RT.TOPIC, "x", PatternType.MATCH, ALICE, "*", OP.READ, ALLOW), "LITERAL or PREFIXED"),
        ((RT.TOPIC, "x", LITERAL, "alice", "*", OP.READ, ALLOW), "Type:name"),
        ((RT.TOPIC, "x", LITERAL, ALICE, "*", OP.ANY, ALLOW), "cannot be bound"),
        ((RT.TOPIC, "x", LITERAL, ALICE, "*", OP.READ, AclPermissionType.ANY), "ALLOW or DENY"),
        ((RT.CLUSTER, "x", LITERAL, ALICE, "*", OP.ALTER, ALLOW), "kafka-cluster"),
        ((RT.TOPIC, "", LITERAL, ALICE, "*", OP.READ, ALLOW), "empty"),
        ((RT.TOPIC, "x", LITERAL, ALICE, "*", 99, ALLOW), "unknown operation code 99"),
    ],
)
def test_bad_bindings_are_refused_with_the_field_named(args: tuple, message: str) -> None:
    with pytest.raises(AclError, match=message):
        AclBinding.build(*args)


def test_filters() -> None:
    prefixed = acl("sales-", OP.READ, pattern=PREFIXED)
    literal = acl("sales-eu", OP.WRITE, DENY)
    wildcard = acl("*", OP.DESCRIBE, principal="User:bob")
    group = acl("g", OP.READ, rtype=RT.GROUP)
    every = [prefixed, literal, wildcard, group]

    def selected(*args: object) -> list[AclBinding]:
        f = AclFilter.build(*args)  # type: ignore[arg-type]
        return [b for b in every if f.matches(b)]

    any_args = (RT.ANY, None, PatternType.ANY, None, None, OP.ANY, AclPermissionType.ANY)
    assert selected(*any_args) == every
    assert selected(RT.TOPIC, None, PatternType.ANY, None, None, OP.ANY, AclPermissionType.ANY) == [
        prefixed, literal, wildcard]
    assert selected(RT.TOPIC, "sales-eu", PatternType.MATCH, None, None, OP.ANY,
                    AclPermissionType.ANY) == [prefixed, literal, wildcard]
    assert selected(RT.TOPIC, "sales-", PREFIXED, None, None, OP.ANY,
                    AclPermissionType.ANY) == [prefixed]
    assert selected(RT.ANY, None, PatternType.ANY, "User:bob", None, OP.ANY,
                    AclPermissionType.ANY) == [wildcard]
    assert selected(RT.ANY, None, PatternType.ANY, None, None, OP.ANY, DENY) == [literal]
    with pytest.raises(AclError, match="UNKNOWN"):
        AclFilter.build(RT.UNKNOWN, None, PatternType.ANY, None, None, OP.ANY, ALLOW)


def test_file_store_persists_and_refuses_a_corrupt_file(tmp_path: Path) -> None:
    store = FileAclStore(tmp_path)
    asyncio.run(store.add([acl("orders", OP.READ), acl("orders", OP.READ)]))
    asyncio.run(store.add([acl("p-", OP.WRITE, pattern=PREFIXED)]))
    again = FileAclStore(tmp_path)
    assert again.bindings() == [acl("orders", OP.READ), acl("p-", OP.WRITE, pattern=PREFIXED)]
    any_write = AclFilter.build(RT.ANY, None, PatternType.ANY, None, None, OP.WRITE,
                                AclPermissionType.ANY)
    assert asyncio.run(again.remove([any_write])) == [[acl("p-", OP.WRITE, pattern=PREFIXED)]]
    assert FileAclStore(tmp_path).bindings() == [acl("orders", OP.READ)]
    path = tmp_path / "__acls.json"
    path.write_text(path.read_text()[:-10])
    with pytest.raises(AclStoreError, match=r"__acls\.json cannot be read"):
        FileAclStore(tmp_path)
    raw = {"version": 1, "acls": [{**acl("o", OP.READ).to_json(), "operation": "FLY"}]}
    path.write_text(json.dumps(raw))
    with pytest.raises(AclStoreError, match="FLY"):
        FileAclStore(tmp_path)


def test_every_client_api_has_a_gate_or_a_reason() -> None:
    served = set(HANDLERS) | set(SECURITY_HANDLERS) | set(ACL_HANDLERS)
    assert served - set(GATES) - UNGATED == set()
