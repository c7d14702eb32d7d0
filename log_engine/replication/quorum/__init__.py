"""The Raft core (``log_engine.replication.raft``) running in a broker process.

Modules, one concept each:

- ``records``: Raft entries as Kafka record batches (one record per entry,
  control batches for the core's control entries)
- ``translate``: the core's messages <-> KRaft's Vote, BeginQuorumEpoch,
  EndQuorumEpoch, Fetch and FetchSnapshot bodies
- ``transport``: requests to the other voters' controller listeners
- ``runner``: ``ControllerQuorum``, the asyncio driver (persist + fsync, then
  send, then events) and the API the controller's state machine calls
- ``meta_properties``: the data dir's ``meta.properties`` (cluster and node id)

See docs/quorum.md.
"""

from log_engine.replication.quorum.meta_properties import (
    MetaProperties,
    MetaPropertiesError,
    ensure_formatted,
    read_meta_properties,
)
from log_engine.replication.quorum.runner import RAFT_DIR, ControllerQuorum, LoggingListener

__all__ = [
    "RAFT_DIR",
    "ControllerQuorum",
    "LoggingListener",
    "MetaProperties",
    "MetaPropertiesError",
    "ensure_formatted",
    "read_meta_properties",
]
