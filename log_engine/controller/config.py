"""The active controller's settings, declared once, with Kafka's keys as aliases."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from log_engine.metadata.image import MetadataImage


class ControllerConfig(BaseModel):
    """What the controller's decisions depend on; durations in milliseconds.

    Topic-level ``min.insync.replicas`` and ``unclean.leader.election.enable``
    (ConfigRecords) override the cluster defaults below for their topic.
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")

    node_id: int = Field(alias="node.id", ge=0, description="This controller's node id.")
    cluster_id: str | None = Field(
        None,
        description="The cluster id brokers must register with (None: any; the quorum "
        "runner checks it once meta.properties exists).",
    )
    broker_session_timeout_ms: int = Field(
        9000,
        alias="broker.session.timeout.ms",
        gt=0,
        description="A broker that has not heartbeated for this long is fenced.",
    )
    broker_heartbeat_interval_ms: int = Field(
        2000,
        alias="broker.heartbeat.interval.ms",
        gt=0,
        description="How often brokers heartbeat (the controller checks sessions as often).",
    )
    default_replication_factor: int = Field(
        1,
        alias="default.replication.factor",
        ge=1,
        description="Replication factor of a topic created with replication_factor -1.",
    )
    num_partitions: int = Field(
        1, alias="num.partitions", ge=1, description="Partitions of a topic created with -1."
    )
    min_insync_replicas: int = Field(
        1,
        alias="min.insync.replicas",
        ge=1,
        description="Cluster default; an ISR smaller than this is allowed but reported.",
    )
    unclean_leader_election_enable: bool = Field(
        False,
        alias="unclean.leader.election.enable",
        description="Cluster default: elect a replica outside the ISR when none is left "
        "(may lose acknowledged records).",
    )
    auto_leader_rebalance_enable: bool = Field(
        True,
        alias="auto.leader.rebalance.enable",
        description="Move leadership back to each partition's preferred replica (its first) "
        "when that replica is in the ISR and a broker leads too few of its preferred partitions.",
    )
    leader_imbalance_check_interval_ms: int = Field(
        300_000,
        gt=0,
        description="How often the preferred leaders are checked (Kafka's "
        "leader.imbalance.check.interval.seconds, 300, in milliseconds).",
    )
    leader_imbalance_per_broker_percentage: int = Field(
        10,
        alias="leader.imbalance.per.broker.percentage",
        ge=0,
        le=100,
        description="A broker's share of preferred partitions it does not lead above which "
        "they are moved back to it.",
    )
    producer_id_block_size: int = Field(
        1000, gt=0, description="Producer ids per AllocateProducerIds block (Kafka's 1000)."
    )

    def topic_min_insync_replicas(self, image: MetadataImage, topic: str) -> int:
        """``min.insync.replicas`` of ``topic`` in ``image``: its own, else the default."""
        value = image.topic_configs(topic).get("min.insync.replicas")
        return self.min_insync_replicas if value is None else int(value)

    def topic_unclean_leader_election_enable(self, image: MetadataImage, topic: str) -> bool:
        """``unclean.leader.election.enable`` of ``topic`` in ``image``: its own, else the
        default."""
        value = image.topic_configs(topic).get("unclean.leader.election.enable")
        return self.unclean_leader_election_enable if value is None else value == "true"
