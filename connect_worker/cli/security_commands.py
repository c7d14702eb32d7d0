"""``sluice acls add|list|remove`` and ``sluice users scram set|list|delete``.

The kafka-acls.sh and kafka-configs.sh equivalents, over our admin client
(CreateAcls / DescribeAcls / DeleteAcls, Alter/DescribeUserScramCredentials):

::

    sluice acls add --allow-principal User:alice --operation Read --operation Write \\
        --topic orders --resource-pattern-type prefixed \\
        -b host:9092 --command-config admin.properties
    sluice acls list [--topic T | --group G | --cluster | --transactional-id X] [--principal P]
    sluice acls remove --allow-principal User:alice --operation Read --topic orders
    sluice users scram set alice --add-config 'SCRAM-SHA-512=[iterations=8192,password=...]'
    sluice users scram set alice --mechanism SCRAM-SHA-512 --password-stdin
    sluice users scram list [USER ...]
    sluice users scram delete alice --mechanism SCRAM-SHA-512

``--command-config`` is a client properties file (``security.protocol``,
``sasl.mechanism``, ``sasl.jaas.config``, ``ssl.*``) as kafka-*.sh take it.
Passwords are never printed.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from pydantic import ValidationError

from connect_worker.cli.log_commands import DEFAULT_BOOTSTRAP
from connect_worker.properties import PropertiesError, load_properties
from log_engine.acls import (
    CLUSTER_NAME,
    AclBinding,
    AclError,
    AclFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from log_engine.client import SyncAdmin
from log_engine.client.security_admin import SCRAM_MECHANISMS

_SCRAM_SPEC = re.compile(r"^\s*(SCRAM-SHA-(?:256|512))\s*=\s*\[(.*)\]\s*$", re.IGNORECASE)
_DEFAULT_ITERATIONS = 8192


class CliUsageError(PropertiesError):
    """A bad option combination (reported like a bad properties file: exit 2)."""


def add_commands(commands: Any) -> None:
    """Register ``sluice acls`` and ``sluice users`` on the top-level sub-parsers."""
    acls = commands.add_parser("acls", help="add, list and remove ACLs (like kafka-acls.sh)")
    actions = acls.add_subparsers(required=True, metavar="ACTION")
    add = actions.add_parser("add", help="create ACL bindings")
    _binding_options(add)
    add.add_argument(
        "--producer",
        action="store_true",
        help="WRITE, DESCRIBE, CREATE on the topics (WRITE, DESCRIBE on transactional ids)",
    )
    add.add_argument(
        "--idempotent",
        action="store_true",
        help="with --producer: also IDEMPOTENT_WRITE on the cluster",
    )
    add.add_argument(
        "--consumer", action="store_true", help="READ, DESCRIBE on the topics, READ on --group"
    )
    add.set_defaults(run=run_acls_add)
    listing = actions.add_parser("list", help="the ACLs on a resource, or all of them")
    _resource_options(listing)
    listing.add_argument("--principal", help="only the ACLs of this principal (User:name)")
    listing.set_defaults(run=run_acls_list)
    remove = actions.add_parser(
        "remove", help="delete the ACL bindings that match (every field not given: any)"
    )
    _binding_options(remove)
    remove.set_defaults(run=run_acls_remove)
    for parser in (add, listing, remove):
        _connection_options(parser)

    users = commands.add_parser("users", help="SCRAM credentials (like kafka-configs.sh)")
    kinds = users.add_subparsers(required=True, metavar="KIND")
    scram = kinds.add_parser("scram", help="SCRAM-SHA-256/512 credentials of users")
    scram_actions = scram.add_subparsers(required=True, metavar="ACTION")
    set_ = scram_actions.add_parser("set", help="set a user's SCRAM password")
    set_.add_argument("user", help="the user name (as it logs in)")
    set_.add_argument(
        "--add-config",
        metavar="SPEC",
        help="kafka-configs.sh syntax: 'SCRAM-SHA-512=[iterations=8192,password=SECRET]'",
    )
    set_.add_argument(
        "--mechanism",
        type=str.upper,
        choices=sorted(SCRAM_MECHANISMS),
        help="the mechanism (with --password-stdin)",
    )
    set_.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    set_.add_argument("--iterations", type=int, default=None, help="default 8192")
    set_.set_defaults(run=run_scram_set)
    scram_list = scram_actions.add_parser("list", help="users with SCRAM credentials")
    scram_list.add_argument("users", nargs="*", help="only these users")
    scram_list.set_defaults(run=run_scram_list)
    delete = scram_actions.add_parser("delete", help="delete a user's SCRAM credential")
    delete.add_argument("user", help="the user name")
    delete.add_argument(
        "--mechanism",
        type=str.upper,
        choices=sorted(SCRAM_MECHANISMS),
        required=True,
        help="the credential to delete",
    )
    delete.set_defaults(run=run_scram_delete)
    for parser in (set_, scram_list, delete):
        _connection_options(parser)


def _connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-b",
        "--bootstrap-server",
        default=DEFAULT_BOOTSTRAP,
        metavar="HOST:PORT",
        help=f"a broker of the cluster (default: {DEFAULT_BOOTSTRAP})",
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="client properties (security.protocol, sasl.*, ssl.*) for the admin client",
    )


def _resource_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", action="append", default=[], help="a topic (repeatable)")
    parser.add_argument("--group", action="append", default=[], help="a group (repeatable)")
    parser.add_argument("--cluster", action="store_true", help="the cluster")
    parser.add_argument(
        "--transactional-id", action="append", default=[], help="a transactional id (repeatable)"
    )
    parser.add_argument(
        "--resource-pattern-type",
        default=None,
        type=str.upper,
        choices=["LITERAL", "PREFIXED", "ANY", "MATCH"],
        help="how resource names match (add: LITERAL, the default; list/remove: also "
        "ANY and MATCH)",
    )


def _binding_options(parser: argparse.ArgumentParser) -> None:
    _resource_options(parser)
    parser.add_argument(
        "--allow-principal", action="append", default=[], help="User:name to allow (repeatable)"
    )
    parser.add_argument(
        "--deny-principal", action="append", default=[], help="User:name to deny (repeatable)"
    )
    parser.add_argument("--allow-host", default=None, help="host the allow applies from (*)")
    parser.add_argument("--deny-host", default=None, help="host the deny applies from (*)")
    parser.add_argument(
        "--operation",
        action="append",
        default=[],
        help="Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, "
        "AlterConfigs, IdempotentWrite or All (repeatable)",
    )


def _admin(args: argparse.Namespace) -> SyncAdmin:
    props: dict[str, str] = {}
    if args.command_config:
        props = load_properties(args.command_config)
    props["bootstrap.servers"] = args.bootstrap_server
    try:
        return SyncAdmin(props)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'config'}: {e['msg']}" for e in exc.errors()
        )
        raise CliUsageError(f"{args.command_config or 'client config'}: {problems}") from None


def _operation(text: str) -> AclOperation:
    name = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", text.strip()).upper().replace("-", "_")
    try:
        operation = AclOperation[name]
    except KeyError:
        operation = AclOperation.UNKNOWN
    if operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise CliUsageError(f"--operation {text!r}: not an ACL operation")
    return operation


def _resources(args: argparse.Namespace) -> list[tuple[ResourceType, str]]:
    out = [(ResourceType.TOPIC, t) for t in args.topic]
    out += [(ResourceType.GROUP, g) for g in args.group]
    out += [(ResourceType.TRANSACTIONAL_ID, t) for t in args.transactional_id]
    if args.cluster:
        out.append((ResourceType.CLUSTER, CLUSTER_NAME))
    return out


def _entries(
    args: argparse.Namespace,
) -> Iterator[tuple[str, str | None, AclPermissionType]]:
    for principal in args.allow_principal:
        yield principal, args.allow_host, AclPermissionType.ALLOW
    for principal in args.deny_principal:
        yield principal, args.deny_host, AclPermissionType.DENY


_PRODUCER_TOPIC_OPERATIONS = (AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE)
_CONSUMER_TOPIC_OPERATIONS = (AclOperation.READ, AclOperation.DESCRIBE)
_TRANSACTIONAL_OPERATIONS = (AclOperation.WRITE, AclOperation.DESCRIBE)


def add_bindings(args: argparse.Namespace) -> list[AclBinding]:
    """The bindings ``sluice acls add`` creates: every resource x principal x operation,
    plus kafka-acls.sh's ``--producer`` / ``--consumer`` sets."""
    resources = _resources(args)
    if not resources:
        raise CliUsageError("name a resource: --topic, --group, --cluster or --transactional-id")
    if not (args.allow_principal or args.deny_principal):
        raise CliUsageError("name a principal: --allow-principal or --deny-principal")
    if not (args.operation or args.producer or args.consumer):
        raise CliUsageError("name an operation (--operation Read), or --producer / --consumer")
    if args.consumer and not args.group:
        raise CliUsageError("--consumer needs --group (the consumer group to READ)")
    pattern = PatternType[args.resource_pattern_type or "LITERAL"]
    wanted: list[tuple[ResourceType, str, AclOperation]] = [
        (rtype, name, _operation(op)) for rtype, name in resources for op in args.operation
    ]
    for rtype, name in resources:
        if args.producer and rtype == ResourceType.TOPIC:
            wanted += [(rtype, name, op) for op in _PRODUCER_TOPIC_OPERATIONS]
        if args.producer and rtype == ResourceType.TRANSACTIONAL_ID:
            wanted += [(rtype, name, op) for op in _TRANSACTIONAL_OPERATIONS]
        if args.consumer and rtype == ResourceType.TOPIC:
            wanted += [(rtype, name, op) for op in _CONSUMER_TOPIC_OPERATIONS]
        if args.consumer and rtype == ResourceType.GROUP:
            wanted.append((rtype, name, AclOperation.READ))
    if args.producer and args.idempotent:
        wanted.append((ResourceType.CLUSTER, CLUSTER_NAME, AclOperation.IDEMPOTENT_WRITE))
    try:
        bindings = [
            AclBinding.build(
                rtype,
                name,
                PatternType.LITERAL if rtype == ResourceType.CLUSTER else pattern,
                principal,
                host or "*",
                op,
                perm,
            )
            for rtype, name, op in wanted
            for principal, host, perm in _entries(args)
        ]
    except AclError as exc:
        raise CliUsageError(str(exc)) from None
    return list(dict.fromkeys(bindings))


def run_acls_add(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    bindings = add_bindings(args)
    with _admin(args) as admin:
        admin.create_acls(bindings)
    for binding in bindings:
        print(f"added: {binding}", file=out)
    return 0


def _list_filters(args: argparse.Namespace, principal: str | None) -> list[AclFilter]:
    pattern = PatternType[args.resource_pattern_type or "ANY"]
    resources: list[tuple[ResourceType, str | None]] = list(_resources(args))
    if not resources:
        resources = [(ResourceType.ANY, None)]
    return [
        AclFilter.build(rtype, name, pattern, principal, None, AclOperation.ANY,
                        AclPermissionType.ANY)
        for rtype, name in resources
    ]


def run_acls_list(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    try:
        filters = _list_filters(args, args.principal)
    except AclError as exc:
        raise CliUsageError(str(exc)) from None
    found: dict[AclBinding, None] = {}
    with _admin(args) as admin:
        for acl_filter in filters:
            found.update(dict.fromkeys(admin.describe_acls(acl_filter)))
    _print_by_resource(list(found), out)
    return 0


def run_acls_remove(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    resources = _resources(args)
    if not resources:
        raise CliUsageError("name a resource: --topic, --group, --cluster or --transactional-id")
    pattern = PatternType[args.resource_pattern_type or "LITERAL"]
    entries: list[tuple[str | None, str | None, AclPermissionType]] = list(_entries(args))
    if not entries:
        entries = [(None, None, AclPermissionType.ANY)]
    operations = [_operation(op) for op in args.operation] or [AclOperation.ANY]
    try:
        filters = [
            AclFilter.build(rtype, name, pattern, principal, host, op, perm)
            for rtype, name in resources
            for principal, host, perm in entries
            for op in operations
        ]
    except AclError as exc:
        raise CliUsageError(str(exc)) from None
    with _admin(args) as admin:
        removed = admin.delete_acls(filters)
    for binding in dict.fromkeys(removed):
        print(f"removed: {binding}", file=out)
    if not removed:
        print("no ACL matched", file=out)
    return 0


def _print_by_resource(bindings: list[AclBinding], out: TextIO) -> None:
    by_resource: dict[tuple[str, str, str], list[AclBinding]] = {}
    for b in bindings:
        key = (b.resource_type.name, b.resource_name, b.pattern_type.name)
        by_resource.setdefault(key, []).append(b)
    for (rtype, name, pattern), items in sorted(by_resource.items()):
        print(
            f"Current ACLs for resource `ResourcePattern(resourceType={rtype}, name={name}, "
            f"patternType={pattern})`:",
            file=out,
        )
        for b in sorted(items, key=lambda b: (b.principal, b.permission, b.operation, b.host)):
            print(
                f"\t(principal={b.principal}, host={b.host}, operation={b.operation.name}, "
                f"permissionType={b.permission.name})",
                file=out,
            )
        print(file=out)


def _scram_request(args: argparse.Namespace) -> tuple[str, str, int]:
    """``(mechanism, password, iterations)`` from --add-config or --mechanism + stdin."""
    if args.add_config:
        match = _SCRAM_SPEC.match(args.add_config)
        if match is None:
            raise CliUsageError(
                "--add-config: expected 'SCRAM-SHA-256=[password=...]' or "
                "'SCRAM-SHA-512=[iterations=8192,password=...]'"
            )
        mechanism = match.group(1).upper()
        options: dict[str, str] = {}
        for part in match.group(2).split(","):
            key, sep, value = part.partition("=")
            if not sep:
                raise CliUsageError(f"--add-config: {key.strip()!r} is not key=value")
            options[key.strip()] = value.strip()
        if "password" not in options:
            raise CliUsageError("--add-config: no password=")
        iterations = options.get("iterations", str(args.iterations or _DEFAULT_ITERATIONS))
        if not iterations.isdigit():
            raise CliUsageError("--add-config: iterations must be a number")
        return mechanism, options["password"], int(iterations)
    if not (args.mechanism and args.password_stdin):
        raise CliUsageError("give --add-config, or --mechanism with --password-stdin")
    password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise CliUsageError("--password-stdin: standard input gave an empty password")
    return args.mechanism, password, args.iterations or _DEFAULT_ITERATIONS


def run_scram_set(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    mechanism, password, iterations = _scram_request(args)
    with _admin(args) as admin:
        admin.upsert_user_scram_credential(args.user, mechanism, password, iterations)
    print(f"set {mechanism} credential of user {args.user} ({iterations} iterations)", file=out)
    return 0


def run_scram_list(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    with _admin(args) as admin:
        users = admin.describe_user_scram_credentials(args.users or None)
    for user, mechanisms in sorted(users.items()):
        described = ", ".join(f"{m} (iterations={i})" for m, i in sorted(mechanisms.items()))
        print(f"{user}: {described}", file=out)
    return 0


def run_scram_delete(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    with _admin(args) as admin:
        admin.delete_user_scram_credential(args.user, args.mechanism)
    print(f"deleted {args.mechanism} credential of user {args.user}", file=out)
    return 0
