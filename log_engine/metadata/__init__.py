"""The cluster's metadata: brokers, topics and partitions as the controller quorum records them.

Modules, one concept each (see docs/cluster.md):

- ``types``: the values every side shares (``PartitionState``, ``BrokerInfo``); a leaf
- ``schemas``: Kafka's metadata record schemas in the protocol's schema DSL
- ``records``: the records as Python values, and their framing (one record = one Raft entry)
- ``image``: ``MetadataImage``, immutable, with Kafka's replay rules
- ``snapshot``: an image as a snapshot payload (a sequence of records) and back
- ``listener``: ``MetadataListener`` (a ``RaftListener``) keeping the image current
- ``publisher``: ``ReplicaStatePublisher``: a broker's replica states to its replica manager

Errors (``MetadataRecordError``, ``MetadataReplayError``) are in :mod:`log_engine.errors`.
"""
