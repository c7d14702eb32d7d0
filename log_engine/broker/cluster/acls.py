"""ACLs of a clustered broker: read from the metadata image, written by the controller.

Every broker authorizes from the ACL bindings of its own metadata image
(AccessControlEntryRecords replicated by the metadata log), so all brokers
apply the same ACLs and a restarted broker has them again. CreateAcls and
DeleteAcls are forwarded to the active controller on the controller listener
(as CreateTopics is); the client is answered once the change is in this
broker's image, so its next request is decided with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from log_engine.acls import AclBinding, AclFilter
from log_engine.broker.cluster.channel import NOT_CONTROLLER
from log_engine.broker.security.acl_store import AclWriteError
from log_engine.controller.acls import binding_of
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey
from log_engine.protocol.acl_bodies import binding_from_matching, creation_body, filter_body

if TYPE_CHECKING:
    from log_engine.broker.cluster.node import ClusterNode

ACLS_VERSION = 1
_TIMEOUT_MS = 30_000
_POLL_S = 0.01


class ClusterAclStore:
    """The :class:`~log_engine.broker.security.acl_store.AclStore` of a clustered broker."""

    def __init__(self, node: ClusterNode) -> None:
        self._node = node
        self._seen: Any = None
        self._version = 0
        self._bindings: list[AclBinding] = []

    def _refresh(self) -> None:
        acls = self._node.image.acls
        if acls is not self._seen:  # the image shares the map until ACLs change
            self._seen = acls
            self._version += 1
            self._bindings = [binding_of(record) for record in acls.values()]

    @property
    def version(self) -> int:
        self._refresh()
        return self._version

    def bindings(self) -> list[AclBinding]:
        self._refresh()
        return self._bindings

    async def add(self, bindings: Iterable[AclBinding]) -> None:
        wanted = list(bindings)
        if not wanted:
            return
        answer = await self._node.channel.send(
            ApiKey.CREATE_ACLS,
            ACLS_VERSION,
            {"creations": [creation_body(b) for b in wanted]},
            _TIMEOUT_MS,
            retry_if=lambda body: any(
                r["error_code"] == NOT_CONTROLLER for r in body["results"]
            ),
        )
        if answer is None:
            raise AclWriteError(ErrorCode.REQUEST_TIMED_OUT, "no active controller answered")
        for result in answer["results"]:
            if result["error_code"]:
                raise AclWriteError(result["error_code"], result["error_message"])
        await self._wait_for(lambda: all(b in self.bindings() for b in wanted))

    async def remove(self, filters: list[AclFilter]) -> list[list[AclBinding]]:
        if not filters:
            return []
        answer = await self._node.channel.send(
            ApiKey.DELETE_ACLS,
            ACLS_VERSION,
            {"filters": [filter_body(f) for f in filters]},
            _TIMEOUT_MS,
            retry_if=lambda body: any(
                r["error_code"] == NOT_CONTROLLER for r in body["filter_results"]
            ),
        )
        if answer is None:
            raise AclWriteError(ErrorCode.REQUEST_TIMED_OUT, "no active controller answered")
        removed: list[list[AclBinding]] = []
        for result in answer["filter_results"]:
            if result["error_code"]:
                raise AclWriteError(result["error_code"], result["error_message"])
            removed.append([binding_from_matching(m) for m in result["matching_acls"]])
        gone = {b for group in removed for b in group}
        await self._wait_for(lambda: not gone.intersection(self.bindings()))
        return removed

    async def _wait_for(self, done: Any) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _TIMEOUT_MS / 1000
        while not done():
            if loop.time() > deadline:
                raise AclWriteError(
                    ErrorCode.REQUEST_TIMED_OUT,
                    "the controller accepted the change; this broker has not seen it yet",
                )
            await asyncio.sleep(_POLL_S)
