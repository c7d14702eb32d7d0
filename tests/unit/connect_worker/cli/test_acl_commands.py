"""``sluice acls add``'s bindings, and its refusals, without a broker."""

from __future__ import annotations

import pytest

from connect_worker.cli.main import _parser
from connect_worker.cli.security_commands import CliUsageError, add_bindings


def _bindings(*argv: str) -> set[tuple[str, str, str, str, str, str]]:
    args = _parser().parse_args(["acls", "add", *argv])
    return {
        (b.resource_type.name, b.resource_name, b.pattern_type.name, b.principal,
         b.operation.name, b.permission.name)
        for b in add_bindings(args)
    }


def test_every_resource_principal_and_operation() -> None:
    got = _bindings(
        "--allow-principal", "User:alice", "--deny-principal", "User:bob",
        "--operation", "Read", "--operation", "DescribeConfigs", "--topic", "t",
        "--resource-pattern-type", "prefixed",
    )  # fmt: skip
    assert got == {
        ("TOPIC", "t", "PREFIXED", user, op, perm)
        for user, perm in (("User:alice", "ALLOW"), ("User:bob", "DENY"))
        for op in ("READ", "DESCRIBE_CONFIGS")
    }


def test_producer_and_consumer_shortcuts() -> None:
    producer = _bindings(
        "--allow-principal", "User:p", "--producer", "--idempotent", "--topic", "t",
        "--transactional-id", "tx",
    )  # fmt: skip
    assert producer == {
        ("TOPIC", "t", "LITERAL", "User:p", "WRITE", "ALLOW"),
        ("TOPIC", "t", "LITERAL", "User:p", "DESCRIBE", "ALLOW"),
        ("TOPIC", "t", "LITERAL", "User:p", "CREATE", "ALLOW"),
        ("TRANSACTIONAL_ID", "tx", "LITERAL", "User:p", "WRITE", "ALLOW"),
        ("TRANSACTIONAL_ID", "tx", "LITERAL", "User:p", "DESCRIBE", "ALLOW"),
        ("CLUSTER", "kafka-cluster", "LITERAL", "User:p", "IDEMPOTENT_WRITE", "ALLOW"),
    }
    consumer = _bindings(
        "--allow-principal", "User:c", "--consumer", "--topic", "t", "--group", "g"
    )
    assert consumer == {
        ("TOPIC", "t", "LITERAL", "User:c", "READ", "ALLOW"),
        ("TOPIC", "t", "LITERAL", "User:c", "DESCRIBE", "ALLOW"),
        ("GROUP", "g", "LITERAL", "User:c", "READ", "ALLOW"),
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--allow-principal", "User:a", "--operation", "Read"], "name a resource"),
        (["--operation", "Read", "--topic", "t"], "name a principal"),
        (["--allow-principal", "User:a", "--topic", "t"], "name an operation"),
        (["--allow-principal", "User:a", "--consumer", "--topic", "t"], "needs --group"),
        (["--allow-principal", "User:a", "--operation", "Fly", "--topic", "t"], "'Fly'"),
        (["--allow-principal", "a", "--operation", "Read", "--topic", "t"], "Type:name"),
        (["--allow-principal", "User:a", "--operation", "Read", "--topic", "t",
          "--resource-pattern-type", "match"], "LITERAL or PREFIXED"),
    ],
)
def test_refusals_name_the_problem(argv: list[str], message: str) -> None:
    args = _parser().parse_args(["acls", "add", *argv])
    with pytest.raises(CliUsageError, match=message):
        add_bindings(args)


def test_operation_names_as_kafka_acls_writes_them() -> None:
    got = _bindings(
        "--allow-principal", "User:a", "--cluster", "--operation", "ClusterAction",
        "--operation", "IdempotentWrite", "--operation", "alter_configs", "--operation", "ALL",
    )  # fmt: skip
    assert {g[4] for g in got} == {"CLUSTER_ACTION", "IDEMPOTENT_WRITE", "ALTER_CONFIGS", "ALL"}
