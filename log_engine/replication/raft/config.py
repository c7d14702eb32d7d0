"""The Raft core's settings, declared once, with Kafka's ``controller.quorum.*`` keys as aliases."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from log_engine.replication.raft.types import NodeId


class RaftConfig(BaseModel):
    """Timeouts and bounds of one Raft node; every duration is in milliseconds.

    ``voter_ids`` are the node ids of ``controller.quorum.voters`` (the adapter parses
    the ``id@host:port`` list and keeps the addresses). A node not among them is an
    observer: it fetches the log but never votes or stands for election.
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="forbid")

    node_id: NodeId = Field(alias="node.id", ge=0, description="This node's id.")
    voter_ids: frozenset[NodeId] = Field(
        description="The ids of controller.quorum.voters.", min_length=1
    )
    election_timeout_ms: int = Field(
        1000,
        alias="controller.quorum.election.timeout.ms",
        gt=0,
        description="Time without a leader before a voter stands for election; "
        "each wait adds a random jitter of up to the same amount.",
    )
    election_backoff_max_ms: int = Field(
        1000,
        alias="controller.quorum.election.backoff.max.ms",
        gt=0,
        description="Upper bound of the random wait before a lost election is retried.",
    )
    fetch_timeout_ms: int = Field(
        2000,
        alias="controller.quorum.fetch.timeout.ms",
        gt=0,
        description="Time without a successful Fetch before a follower stands for "
        "election; a leader that hears from no majority for 1.5 times this resigns.",
    )
    request_timeout_ms: int = Field(
        2000,
        alias="controller.quorum.request.timeout.ms",
        gt=0,
        description="Time before an unanswered request is sent again.",
    )
    fetch_max_wait_ms: int = Field(
        500, ge=0, description="How long the leader may hold a Fetch that finds nothing new."
    )
    fetch_max_entries: int = Field(
        500, gt=0, description="Most entries one Fetch response carries."
    )
    fetch_max_bytes: int = Field(
        1 << 20,
        gt=0,
        description="Most payload bytes one Fetch response carries (at least one entry).",
    )
    snapshot_chunk_max_bytes: int = Field(
        1 << 20, gt=0, description="Most snapshot bytes one FetchSnapshot response carries."
    )

    @model_validator(mode="after")
    def _check_timeouts(self) -> RaftConfig:
        if self.request_timeout_ms <= self.fetch_max_wait_ms:
            raise ValueError(
                f"request_timeout_ms ({self.request_timeout_ms}) must exceed "
                f"fetch_max_wait_ms ({self.fetch_max_wait_ms}), or every held Fetch times out"
            )
        return self

    @property
    def is_voter(self) -> bool:
        """Whether this node votes (and may lead)."""
        return self.node_id in self.voter_ids

    @property
    def majority(self) -> int:
        """How many voters make a quorum."""
        return len(self.voter_ids) // 2 + 1
