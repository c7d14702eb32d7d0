"""The active controller: its decisions as a pure object that returns metadata records.

Modules, one concept each:

- ``config``: ``ControllerConfig`` with Kafka's keys
- ``results``: the requests and replies of each call, and ``ControllerResult``
- ``controller``: ``QuorumController``: activation, pending records, brokers, topics,
  AlterPartition, producer ids
- ``elections``: leader election and ISR removal as PartitionChangeRecords
- ``alter_partition``: AlterPartition's validation rules
- ``topics``: topic creation and deletion as records
- ``placement``: round-robin replica placement
- ``wire``: the wire bodies of BrokerRegistration, BrokerHeartbeat, AlterPartition
  and AllocateProducerIds to and from the controller's calls
"""

from log_engine.controller.config import ControllerConfig
from log_engine.controller.controller import QuorumController
from log_engine.controller.results import (
    AlterPartitionReply,
    BrokerHeartbeat,
    BrokerRegistration,
    ControllerResult,
    HeartbeatReply,
    IsrChange,
    NewPartitions,
    NewTopic,
    PartitionOutcome,
    ProducerIdBlock,
    RegistrationReply,
    TopicConfigChange,
    TopicOutcome,
)

__all__ = [
    "AlterPartitionReply",
    "BrokerHeartbeat",
    "BrokerRegistration",
    "ControllerConfig",
    "ControllerResult",
    "HeartbeatReply",
    "IsrChange",
    "NewPartitions",
    "NewTopic",
    "PartitionOutcome",
    "ProducerIdBlock",
    "QuorumController",
    "RegistrationReply",
    "TopicConfigChange",
    "TopicOutcome",
]
