"""Partition replication between brokers, as Kafka's ISR model.

Modules, one concept each: ``leader`` (followers' progress, ISR, high
watermark and acks=all waiters of a partition this broker leads),
``alter_partition`` (the :class:`AlterPartitionSender` protocol through which
ISR changes reach the controller), ``fetcher`` (one task per leader broker
copying its batches, truncating with OffsetForLeaderEpoch after a leader
change) and ``manager`` (:class:`ReplicaManager`, which turns controller
decisions, :class:`~log_engine.metadata.types.PartitionState` values, into
leader and follower roles). See ``docs/replication.md``.

Nothing is imported here, so :mod:`log_engine.broker.partition` can import
``leader`` without a cycle.
"""
