"""FindCoordinator in every version: one key asked, one coordinator answered.

v0-3 ask for one ``key`` and answer with top-level fields; v4+ ask for a batch
of ``coordinator_keys`` and answer with a ``coordinators`` list (KIP-699). The
body sent carries both shapes (the codec writes only the fields of the version
negotiated), and the answer is read from whichever shape came back.
"""

from __future__ import annotations

from dataclasses import dataclass

from log_engine.client import errors
from log_engine.client.connection import BrokerConnection
from log_engine.protocol import ApiKey

GROUP_KEY_TYPE = 0


@dataclass(frozen=True, slots=True)
class Coordinator:
    """The broker that coordinates one key (a group id)."""

    node_id: int
    host: str
    port: int


async def find_coordinator(
    conn: BrokerConnection, key: str, key_type: int = GROUP_KEY_TYPE
) -> Coordinator:
    """Ask ``conn``'s broker which broker coordinates ``key``; raise its error if any."""
    body = {"key": key, "key_type": key_type, "coordinator_keys": [key]}
    response = await conn.send(ApiKey.FIND_COORDINATOR, body)
    answer = response
    for entry in response["coordinators"]:  # v4+: one entry per key asked
        if entry["key"] == key:
            answer = entry
            break
    else:
        if conn.api_version(ApiKey.FIND_COORDINATOR) >= 4:
            raise errors.network_error(f"FindCoordinator({key}) answer left out the key")
    code = answer["error_code"]
    if code:
        message = answer.get("error_message")
        errors.check_error(code, f"FindCoordinator({key})" + (f": {message}" if message else ""))
    return Coordinator(answer["node_id"], answer["host"], answer["port"])
