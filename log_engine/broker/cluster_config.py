"""The KRaft cluster keys of a broker, checked together (Kafka's names and rules).

A broker whose ``controller.quorum.voters`` and ``process.roles`` are both unset
is a single node as before (:func:`parse_cluster` returns ``None``). Otherwise:

- ``process.roles``: ``broker``, ``controller`` or ``broker,controller``;
- ``controller.quorum.voters``: ``id@host:port,...`` (each id once), the
  controller listeners of the voters;
- ``controller.listener.names``: the listener name(s) the controllers use; the
  first is the one this node binds when it is a controller and the one it
  reaches the voters on;
- a controller's ``node.id`` must be a voter, and its controller listener must
  have that voter's port (and host, unless it binds every address); a
  broker-only node must not be a voter nor bind a controller listener;
- ``cluster.id`` (optional, Sluice's key: Kafka takes it from ``kafka-storage
  format``): without it the cluster id is derived from the voter set (see
  :func:`derive_cluster_id`), so nodes started from the same voter list agree
  with no format step, and a node with another voter list is another cluster.

Every violation raises ``ValueError`` with a message that names the keys; the
broker config turns it into ``BrokerConfigError`` (exit code 2 at the CLI).
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import ValidationError

from log_engine.replication.raft.config import RaftConfig

if TYPE_CHECKING:
    from log_engine.broker.config import Listener

ROLES = frozenset({"broker", "controller"})
_WILDCARD_HOSTS = ("", "0.0.0.0", "::")
_CLUSTER_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class Voter:
    """One ``id@host:port`` entry of ``controller.quorum.voters``."""

    node_id: int
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.node_id}@{self.host}:{self.port}"


def parse_voters(text: str) -> tuple[Voter, ...]:
    """Parse ``controller.quorum.voters``; ``ValueError`` naming the bad entry."""
    voters: list[Voter] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        node, at, address = item.partition("@")
        host, colon, port = address.rpartition(":")
        host = host.strip("[]")
        if not at or not colon or not node.isdigit() or not port.isdigit() or not host:
            raise ValueError(
                f"controller.quorum.voters: {item!r} is not id@host:port "
                f"(e.g. 1@127.0.0.1:9093,2@127.0.0.1:9095)"
            )
        if not 0 < int(port) < 65536:
            raise ValueError(f"controller.quorum.voters: {item!r} has port {port} out of range")
        voter = Voter(int(node), host, int(port))
        if any(v.node_id == voter.node_id for v in voters):
            raise ValueError(f"controller.quorum.voters: node id {voter.node_id} appears twice")
        if any((v.host, v.port) == (voter.host, voter.port) for v in voters):
            raise ValueError(
                f"controller.quorum.voters: {voter.host}:{voter.port} is given to two voters"
            )
        voters.append(voter)
    if not voters:
        raise ValueError("controller.quorum.voters is empty")
    return tuple(sorted(voters, key=lambda v: v.node_id))


def derive_cluster_id(voters: Sequence[Voter]) -> str:
    """A Kafka-shaped cluster id (22 characters, base64url of 16 bytes) of the voter set.

    SHA-256 of the voters sorted by id (``1@host:port,2@host:port,...``), first 16
    bytes. Every node started with the same voter list gets the same id.
    """
    canonical = ",".join(str(v) for v in sorted(voters, key=lambda v: v.node_id))
    digest = hashlib.sha256(canonical.encode()).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """This node's place in a KRaft cluster (see the module docstring for the rules)."""

    node_id: int
    roles: frozenset[str]
    voters: tuple[Voter, ...]
    controller_listener_name: str
    controller_listener: Listener | None
    """What this node binds for the quorum (controllers only)."""
    cluster_id: str
    election_timeout_ms: int
    fetch_timeout_ms: int
    request_timeout_ms: int
    controller_client: Mapping[str, str] = field(default_factory=dict)
    """Client keys this node reaches the controllers' listener with (its security
    protocol and this node's own credentials, ``security/inter_broker.py``); empty:
    PLAINTEXT."""

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def voter_ids(self) -> frozenset[int]:
        return frozenset(v.node_id for v in self.voters)

    def voter(self, node_id: int) -> Voter | None:
        return next((v for v in self.voters if v.node_id == node_id), None)

    def raft_config(self) -> RaftConfig:
        """The Raft core's settings for this node (``ValueError`` if they do not fit)."""
        try:
            return RaftConfig.model_validate(
                {
                    "node.id": self.node_id,
                    "voter_ids": self.voter_ids,
                    "controller.quorum.election.timeout.ms": self.election_timeout_ms,
                    "controller.quorum.fetch.timeout.ms": self.fetch_timeout_ms,
                    "controller.quorum.request.timeout.ms": self.request_timeout_ms,
                }
            )
        except ValidationError as exc:
            problems = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
            raise ValueError(f"controller.quorum.* settings: {problems}") from None


def parse_cluster(
    *,
    node_id: int,
    process_roles: str | None,
    quorum_voters: str | None,
    controller_listener_names: str | None,
    listeners: Sequence[Listener],
    inter_broker_listener_name: str | None,
    cluster_id: str | None,
    election_timeout_ms: int,
    fetch_timeout_ms: int,
    request_timeout_ms: int,
) -> ClusterConfig | None:
    """Check the cluster keys together; ``None`` for a single node with none of them set."""
    if not process_roles and not quorum_voters:
        if controller_listener_names and any(
            listener.name in _names(controller_listener_names) for listener in listeners
        ):
            raise ValueError(
                "listeners has a controller listener but process.roles and "
                "controller.quorum.voters are not set"
            )
        return None
    if not process_roles:
        raise ValueError(
            "process.roles must be set (broker, controller or broker,controller) "
            "when controller.quorum.voters is set"
        )
    roles = frozenset(r.strip().lower() for r in process_roles.split(",") if r.strip())
    if not roles or roles - ROLES:
        raise ValueError(
            f"process.roles={process_roles!r}: expected broker, controller or broker,controller"
        )
    if not quorum_voters:
        raise ValueError(
            f"controller.quorum.voters must be set when process.roles={process_roles} "
            "(id@host:port of every controller)"
        )
    voters = parse_voters(quorum_voters)
    names = _names(controller_listener_names or "")
    if not names:
        raise ValueError(
            "controller.listener.names must be set when process.roles is set (e.g. CONTROLLER)"
        )
    controller_names = set(names)
    own = [listener for listener in listeners if listener.name in controller_names]
    others = [listener for listener in listeners if listener.name not in controller_names]
    voter_ids = {v.node_id for v in voters}
    controller_listener = None
    if "controller" in roles:
        if node_id not in voter_ids:
            raise ValueError(
                f"node.id={node_id} has the controller role but is not in "
                f"controller.quorum.voters ({quorum_voters}); a controller must be a voter"
            )
        chosen = next((listener for listener in own if listener.name == names[0]), None)
        if chosen is None:
            raise ValueError(
                f"process.roles={process_roles} needs a {names[0]} listener in listeners "
                f"(controller.listener.names={controller_listener_names}), e.g. "
                f"{names[0]}://127.0.0.1:9093"
            )
        me = next(v for v in voters if v.node_id == node_id)
        host_ok = chosen.host in _WILDCARD_HOSTS or chosen.host == me.host
        if chosen.port != me.port or not host_ok:
            raise ValueError(
                f"the {chosen.name} listener {chosen.host}:{chosen.port} does not match this "
                f"node's entry {me} in controller.quorum.voters"
            )
        controller_listener = chosen
    else:
        if node_id in voter_ids:
            raise ValueError(
                f"node.id={node_id} is in controller.quorum.voters but process.roles="
                f"{process_roles} has no controller role"
            )
        if own:
            raise ValueError(
                f"listeners has the controller listener {own[0]} but process.roles="
                f"{process_roles} has no controller role"
            )
    if "broker" in roles:
        if not others:
            raise ValueError(
                "process.roles has the broker role but listeners has no listener besides "
                f"the controller's ({', '.join(names)}), e.g. PLAINTEXT://127.0.0.1:9092"
            )
        if inter_broker_listener_name and inter_broker_listener_name.upper() not in {
            listener.name for listener in others
        }:
            raise ValueError(
                f"inter.broker.listener.name={inter_broker_listener_name} is not a broker "
                "listener in listeners"
            )
    elif others:
        raise ValueError(
            f"process.roles=controller: listeners may only hold controller listeners "
            f"({', '.join(names)}), found {others[0]}"
        )
    if cluster_id is not None and not _CLUSTER_ID.match(cluster_id):
        raise ValueError(f"cluster.id={cluster_id!r}: letters, digits, '-' and '_' only")
    cluster = ClusterConfig(
        node_id=node_id,
        roles=roles,
        voters=voters,
        controller_listener_name=names[0],
        controller_listener=controller_listener,
        cluster_id=cluster_id or derive_cluster_id(voters),
        election_timeout_ms=election_timeout_ms,
        fetch_timeout_ms=fetch_timeout_ms,
        request_timeout_ms=request_timeout_ms,
    )
    cluster.raft_config()  # the timeouts must fit together
    return cluster


def _names(text: str) -> list[str]:
    return [name.strip().upper() for name in text.split(",") if name.strip()]
