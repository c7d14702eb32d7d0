"""The broker's ACL authorizer: may this principal, from this host, do this?

Kafka's decision, step by step (:meth:`Authorizer.authorize`):

1. a principal in ``super.users`` may do everything;
2. the bindings that apply are those whose pattern covers the resource
   (LITERAL name, LITERAL ``*``, or a PREFIXED prefix of the name); if there
   are none at all (for any principal), ``allow.everyone.if.no.acl.found``
   decides;
3. a DENY for the principal (or ``User:*``), from the host (or ``*``), of the
   operation (or ALL) refuses: deny wins;
4. else an ALLOW of the operation, of ALL, or of an operation implying it
   (READ/WRITE/DELETE/ALTER imply DESCRIBE, ALTER_CONFIGS implies
   DESCRIBE_CONFIGS) allows; else refused.

Bindings are indexed by resource (LITERAL by type and name, PREFIXED by type)
and decisions cached per (principal, host, operation, resource), both rebuilt
when the store's bindings change.
"""

from __future__ import annotations

from collections.abc import Iterable

from log_engine.acls import (
    WILDCARD,
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    implied_by,
)
from log_engine.broker.security.acl_store import AclStore

ANONYMOUS = "User:ANONYMOUS"
_ANY_USER = "User:*"
_CACHE_ENTRIES_MAX = 100_000

_CacheKey = tuple[str, str, AclOperation, ResourceType, str]


class Authorizer:
    """ACL decisions over an :class:`AclStore`."""

    def __init__(
        self,
        store: AclStore,
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self.store = store
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._cache: dict[_CacheKey, bool] = {}
        self._cache_version = -1
        self._literal: dict[tuple[ResourceType, str], list[AclBinding]] = {}
        self._prefixed: dict[ResourceType, list[AclBinding]] = {}

    def authorize(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        """Whether ``principal`` connected from ``host`` may do ``operation`` on the resource."""
        if principal in self.super_users:
            return True
        if self._cache_version != self.store.version:
            self._reindex()
        key = (principal, host, operation, resource_type, name)
        decision = self._cache.get(key)
        if decision is None:
            decision = self._decide(principal, host, operation, resource_type, name)
            if len(self._cache) >= _CACHE_ENTRIES_MAX:
                self._cache.clear()
            self._cache[key] = decision
        return decision

    def _reindex(self) -> None:
        """Forget the decisions and index the bindings by resource (store changed)."""
        self._cache.clear()
        self._cache_version = self.store.version
        self._literal = {}
        self._prefixed = {}
        for b in self.store.bindings():
            if b.pattern_type == PatternType.PREFIXED:
                self._prefixed.setdefault(b.resource_type, []).append(b)
            else:
                self._literal.setdefault((b.resource_type, b.resource_name), []).append(b)

    def _applying(self, resource_type: ResourceType, name: str) -> list[AclBinding]:
        """The bindings whose pattern covers the resource."""
        applying = list(self._literal.get((resource_type, name), ()))
        if name != WILDCARD:
            applying += self._literal.get((resource_type, WILDCARD), ())
        prefixed = self._prefixed.get(resource_type, ())
        applying += (b for b in prefixed if name.startswith(b.resource_name))
        return applying

    def _decide(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        applying = self._applying(resource_type, name)
        if not applying:
            return self.allow_everyone_if_no_acl_found
        mine = [
            b
            for b in applying
            if b.principal in (principal, _ANY_USER) and b.host in (host, WILDCARD)
        ]
        if any(
            b.permission == AclPermissionType.DENY
            and b.operation in (operation, AclOperation.ALL)
            for b in mine
        ):
            return False
        allowing = implied_by(operation)
        return any(
            b.permission == AclPermissionType.ALLOW and b.operation in allowing for b in mine
        )

    def authorize_any(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Whether some resource of ``resource_type`` allows ``operation`` (KIP-679:
        an idempotent producer needs WRITE on some topic, or IDEMPOTENT_WRITE).

        Allowed when an ALLOW binding for the principal, host and operation exists
        on that resource type and no DENY for them covers every name (LITERAL ``*``
        or an empty PREFIXED)."""
        if principal in self.super_users:
            return True
        allowing = implied_by(operation)
        mine = [
            b
            for b in self.store.bindings()
            if b.resource_type == resource_type
            and b.principal in (principal, _ANY_USER)
            and b.host in (host, WILDCARD)
        ]
        for b in mine:
            if (
                b.permission == AclPermissionType.DENY
                and b.operation in (operation, AclOperation.ALL)
                and (
                    (b.pattern_type == PatternType.LITERAL and b.resource_name == WILDCARD)
                    or (b.pattern_type == PatternType.PREFIXED and not b.resource_name)
                )
            ):
                return False
        return any(
            b.permission == AclPermissionType.ALLOW and b.operation in allowing for b in mine
        )

    def describe(self, acl_filter: AclFilter) -> list[AclBinding]:
        """The stored bindings the filter matches."""
        return [b for b in self.store.bindings() if acl_filter.matches(b)]

    async def create(self, bindings: list[AclBinding]) -> None:
        await self.store.add(bindings)

    async def delete(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        return await self.store.remove(filters)
