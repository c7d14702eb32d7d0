"""ACL bindings and filters: Kafka's vocabulary and its matching rules (shared by
the broker's authorizer and the admin client).

A binding says *principal* from *host* is ALLOWed or DENYed *operation* on a
resource *pattern* (a resource type, a name, and LITERAL or PREFIXED). The
codes of every enum are Kafka's wire values (``CreateAcls`` and friends carry
them as int8). A filter (DescribeAcls, DeleteAcls) has the same fields, each
possibly "any" (``None`` strings, ``ANY`` enums); pattern type ``MATCH``
selects the bindings that would apply to the named resource.

Authorization rules (:func:`implied_by`): READ, WRITE, DELETE and ALTER each
imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS; ALL implies every
operation. Implications apply to ALLOW bindings only: a DENY of READ does not
deny DESCRIBE.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

CLUSTER_NAME = "kafka-cluster"
"""The only name a CLUSTER resource has (Kafka's)."""
WILDCARD = "*"
"""A literal resource name, principal or host that matches every one."""


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


BINDABLE_RESOURCES = (
    ResourceType.TOPIC,
    ResourceType.GROUP,
    ResourceType.CLUSTER,
    ResourceType.TRANSACTIONAL_ID,
)
"""Resource types a binding may name here (Kafka also has DELEGATION_TOKEN, USER)."""

_IMPLIES: dict[AclOperation, frozenset[AclOperation]] = {
    AclOperation.DESCRIBE: frozenset(
        {AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER}
    ),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.ALTER_CONFIGS}),
}


def implied_by(operation: AclOperation) -> frozenset[AclOperation]:
    """The operations whose ALLOW also allows ``operation`` (itself and ALL included)."""
    return _IMPLIES.get(operation, frozenset()) | {operation, AclOperation.ALL}


class AclError(ValueError):
    """A binding or filter that cannot be used; the message says which field is wrong."""


def check_principal(principal: str) -> None:
    """``Type:name`` (``User:alice``, ``User:*``), as Kafka's principal parser wants."""
    kind, sep, name = principal.partition(":")
    if not sep or not kind or not name:
        raise AclError(
            f"principal {principal!r} is not of the form Type:name (such as User:alice)"
        )


def _enum(kind: type[IntEnum], value: int, what: str) -> IntEnum:
    try:
        return kind(value)
    except ValueError:
        raise AclError(f"unknown {what} code {value}") from None


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: ``principal`` from ``host`` is ``permission`` ``operation`` on the pattern."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: AclPermissionType

    @classmethod
    def build(
        cls,
        resource_type: int,
        resource_name: str,
        pattern_type: int,
        principal: str,
        host: str,
        operation: int,
        permission: int,
    ) -> AclBinding:
        """A checked binding from wire values; :class:`AclError` names the bad field."""
        rtype = _enum(ResourceType, resource_type, "resource type")
        if rtype not in BINDABLE_RESOURCES:
            raise AclError(
                f"resource type {rtype.name} cannot be bound: one of "
                + ", ".join(r.name for r in BINDABLE_RESOURCES)
            )
        ptype = _enum(PatternType, pattern_type, "pattern type")
        if ptype not in (PatternType.LITERAL, PatternType.PREFIXED):
            raise AclError(f"pattern type {ptype.name}: a binding is LITERAL or PREFIXED")
        if not resource_name:
            raise AclError("resource name must not be empty")
        if rtype == ResourceType.CLUSTER and resource_name != CLUSTER_NAME:
            raise AclError(f"a CLUSTER resource is named {CLUSTER_NAME!r}, not {resource_name!r}")
        if ptype == PatternType.PREFIXED and resource_name == WILDCARD:
            raise AclError("a PREFIXED pattern cannot be '*' (use LITERAL '*' for every name)")
        check_principal(principal)
        if not host:
            raise AclError("host must not be empty ('*' for every host)")
        op = _enum(AclOperation, operation, "operation")
        if op in (AclOperation.UNKNOWN, AclOperation.ANY):
            raise AclError(f"operation {op.name} cannot be bound")
        perm = _enum(AclPermissionType, permission, "permission type")
        if perm not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
            raise AclError(f"permission type {perm.name}: ALLOW or DENY")
        return cls(rtype, resource_name, ptype, principal, host, op, perm)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, str]:
        return {
            "resource_type": self.resource_type.name,
            "resource_name": self.resource_name,
            "pattern_type": self.pattern_type.name,
            "principal": self.principal,
            "host": self.host,
            "operation": self.operation.name,
            "permission": self.permission.name,
        }

    @classmethod
    def from_json(cls, raw: dict[str, str]) -> AclBinding:
        try:
            return cls.build(
                ResourceType[raw["resource_type"]],
                raw["resource_name"],
                PatternType[raw["pattern_type"]],
                raw["principal"],
                raw["host"],
                AclOperation[raw["operation"]],
                AclPermissionType[raw["permission"]],
            )
        except KeyError as exc:
            raise AclError(f"unknown or missing value {exc} in {raw!r}") from None

    def __str__(self) -> str:
        return (
            f"{self.permission.name} {self.principal} from {self.host} {self.operation.name} "
            f"on {self.resource_type.name}:{self.pattern_type.name}:{self.resource_name}"
        )


@dataclass(frozen=True, slots=True)
class AclFilter:
    """Which bindings DescribeAcls shows or DeleteAcls removes (``None`` = any)."""

    resource_type: ResourceType
    resource_name: str | None
    pattern_type: PatternType
    principal: str | None
    host: str | None
    operation: AclOperation
    permission: AclPermissionType

    @classmethod
    def build(
        cls,
        resource_type: int,
        resource_name: str | None,
        pattern_type: int,
        principal: str | None,
        host: str | None,
        operation: int,
        permission: int,
    ) -> AclFilter:
        """A checked filter from wire values; :class:`AclError` for UNKNOWN codes."""
        rtype = _enum(ResourceType, resource_type, "resource type")
        ptype = _enum(PatternType, pattern_type, "pattern type")
        op = _enum(AclOperation, operation, "operation")
        perm = _enum(AclPermissionType, permission, "permission type")
        for value, what in ((rtype, "resource type"), (ptype, "pattern type"),
                            (op, "operation"), (perm, "permission type")):
            if value == 0:
                raise AclError(f"a filter cannot have an UNKNOWN {what}")
        if principal is not None:
            check_principal(principal)
        return cls(rtype, resource_name, ptype, principal, host, op, perm)  # type: ignore[arg-type]

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type not in (ResourceType.ANY, acl.resource_type):
            return False
        if not self._pattern_matches(acl):
            return False
        if self.principal is not None and self.principal != acl.principal:
            return False
        if self.host is not None and self.host != acl.host:
            return False
        if self.operation not in (AclOperation.ANY, acl.operation):
            return False
        return self.permission in (AclPermissionType.ANY, acl.permission)

    def _pattern_matches(self, acl: AclBinding) -> bool:
        if self.pattern_type == PatternType.MATCH:
            if self.resource_name is None:
                return True
            if acl.pattern_type == PatternType.PREFIXED:
                return self.resource_name.startswith(acl.resource_name)
            return acl.resource_name in (self.resource_name, WILDCARD)
        if self.pattern_type not in (PatternType.ANY, acl.pattern_type):
            return False
        return self.resource_name is None or self.resource_name == acl.resource_name
