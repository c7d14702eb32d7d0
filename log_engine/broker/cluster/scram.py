"""SCRAM credentials of a clustered broker: read from the metadata image, written by
the controller (UserScramCredentialRecord / RemoveUserScramCredentialRecord).

Every broker logs users in with the credentials of its own image, so a
password set through any broker works on all of them and after restarts.
AlterUserScramCredentials is checked by the broker that takes it and
forwarded to the active controller; the client is answered once the change
is in this broker's image. A user the metadata log has no credential for
falls back to this broker's local store (``sasl.scram.bootstrap.users``), so
the first admin can log in before any record exists; setting that user's
password through the API puts it in the log, where it wins.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from log_engine.broker.cluster.channel import NOT_CONTROLLER
from log_engine.broker.security.scram_store import ScramCredential, ScramLookup
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey

if TYPE_CHECKING:
    from log_engine.broker.cluster.node import ClusterNode

_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
_CODES = {name: code for code, name in _MECHANISMS.items()}
_TIMEOUT_MS = 30_000
_POLL_S = 0.01
Body = dict[str, Any]


class ClusterScramStore:
    """Credentials of the metadata image, then of ``fallback`` (bootstrap users)."""

    def __init__(self, node: ClusterNode, fallback: ScramLookup | None) -> None:
        self._node = node
        self._fallback = fallback

    def get(self, mechanism: str, user: str) -> ScramCredential | None:
        record = self._node.image.scram.get((user, _CODES.get(mechanism, 0)))
        if record is not None:
            return ScramCredential(
                record.salt, record.stored_key, record.server_key, record.iterations
            )
        return None if self._fallback is None else self._fallback.get(mechanism, user)

    def users(self) -> dict[str, dict[str, int]]:
        """user -> mechanism -> iterations, of the metadata log."""
        out: dict[str, dict[str, int]] = {}
        for (user, code), record in self._node.image.scram.items():
            out.setdefault(user, {})[_MECHANISMS.get(code, str(code))] = record.iterations
        return out

    async def alter(self, deletions: list[Body], upsertions: list[Body]) -> tuple[int, str] | None:
        """Forward checked changes; None once this broker's image has them, else the
        (error code, message) every user of the request gets."""
        if not deletions and not upsertions:
            return None
        answer = await self._node.channel.send(
            ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
            0,
            {"deletions": deletions, "upsertions": upsertions},
            _TIMEOUT_MS,
            retry_if=lambda body: any(
                r["error_code"] == NOT_CONTROLLER for r in body["results"]
            ),
        )
        if answer is None:
            return int(ErrorCode.REQUEST_TIMED_OUT), "no active controller answered"
        for result in answer["results"]:
            if result["error_code"]:
                return result["error_code"], result.get("error_message") or "refused"
        wanted_salts = {(u["name"], u["mechanism"]): u["salt"] for u in upsertions}
        gone = {(d["name"], d["mechanism"]) for d in deletions} - set(wanted_salts)

        def applied() -> bool:
            scram = self._node.image.scram
            return all(
                (key in scram and scram[key].salt == salt) for key, salt in wanted_salts.items()
            ) and not gone.intersection(scram)

        loop = asyncio.get_running_loop()
        deadline = loop.time() + _TIMEOUT_MS / 1000
        while not applied():
            if loop.time() > deadline:
                return int(ErrorCode.REQUEST_TIMED_OUT), "not in this broker's metadata yet"
            await asyncio.sleep(_POLL_S)
        return None
