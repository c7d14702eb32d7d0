"""What the halves of the core (:class:`Elections`, :class:`Replication`) use of the node.

Both are mixed into :class:`~log_engine.replication.raft.node.RaftNode`, which owns
these attributes and methods; the declarations here only type them for the halves.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from log_engine.replication.raft.actions import Output
from log_engine.replication.raft.config import RaftConfig
from log_engine.replication.raft.log import RaftLog
from log_engine.replication.raft.states import RoleState
from log_engine.replication.raft.types import NodeId


class NodeView:
    """The node's state and transitions both halves of the core read and call."""

    config: RaftConfig
    log: RaftLog
    state: RoleState
    now_ms: int
    rng: random.Random

    if TYPE_CHECKING:  # provided by RaftNode

        @property
        def node_id(self) -> NodeId: ...
        @property
        def epoch(self) -> int: ...
        @property
        def leader_id(self) -> NodeId | None: ...
        def _observe_epoch(self, epoch: int, leader_id: NodeId | None, out: Output) -> bool: ...
        def _become_unattached(
            self, epoch: int, out: Output, voted_for: NodeId | None = None
        ) -> None: ...
