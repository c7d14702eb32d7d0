"""A clustered broker's wiring: the quorum's metadata image, the active controller,
and the broker's registration with it (issue 17).

One concept per module:

- ``channel``: requests to the active controller over the controller listener,
  following the quorum's leader and retrying on NOT_CONTROLLER
- ``controller_service``: the active controller on a voter (QuorumController fed
  by the quorum's MetadataListener, its tick loop, requests appended then answered)
- ``snapshots``: metadata snapshots when ``snapshot_due``
- ``lifecycle``: registration, heartbeats, unfencing and controlled shutdown
- ``alter_partition``: the replica manager's ISR changes as AlterPartition requests
- ``producer_ids``: producer ids from AllocateProducerIds blocks
- ``local_state``: the image's partition states and topic configs to this broker's logs
- ``admin``: CreateTopics / DeleteTopics through the controller
- ``metadata_answer``: the Metadata response from the image
- ``coordinator_choice``: which broker FindCoordinator names for a group (the leader
  of its ``__consumer_offsets`` partition)
- ``offsets_topic``: ``__consumer_offsets`` created through the controller on the
  first FindCoordinator
- ``node``: ``ClusterNode``, which starts and stops all of the above for a ``Broker``
"""
