"""The active controller: its decisions as a pure object that returns metadata records.

Modules, one concept each:

- ``config``: ``ControllerConfig`` with Kafka's keys (and a topic's overrides of them)
- ``results``: the requests and replies of each call, and ``ControllerResult``
- ``controller``: ``QuorumController``: activation and the speculative image (pending
  records); it hands each request to the module of its concept
- ``brokers``: registration, heartbeats, fencing and unregistration of brokers
- ``sessions``: when a broker's session ends (timeout, lost-connection evidence)
- ``elections``: leader election and ISR removal as PartitionChangeRecords
- ``rebalance``: when the preferred leaders are checked
- ``topic_admin``: the requests answered topic by topic (create, grow, configure, delete)
- ``topics``: topic creation and deletion as records
- ``partitions``: CreatePartitions as records
- ``topic_configs``: IncrementalAlterConfigs of topics as records
- ``placement``: round-robin replica placement
- ``alter_partition``: AlterPartition: its validation rules and ISR changes
- ``producer_ids``: AllocateProducerIds blocks
- ``acls``, ``scram``: ACL bindings and SCRAM credentials as records
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
