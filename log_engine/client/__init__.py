"""Sluice's Kafka-protocol client: producer, consumer and admin, asyncio with sync facades.

The clients speak the Kafka wire protocol (``log_engine.protocol``) to a
Sluice broker or to any Kafka cluster, negotiating versions per broker.

::

    async with Producer({"bootstrap.servers": "localhost:9092"}) as producer:
        delivered = await producer.send("events", b"value", key=b"key")
        print(await delivered)          # RecordMetadata(topic, partition, offset, timestamp)

    with SyncConsumer({"bootstrap.servers": "localhost:9092", "group.id": "g"}) as consumer:
        consumer.subscribe(["events"])
        records = consumer.poll(1.0)

Modules, one concept each: ``config`` (pydantic configs with Kafka's names),
``connection`` (one broker connection), ``cluster`` (metadata and connection
pool), ``partitioner``, ``producer_batch`` / ``accumulator`` / ``sender`` /
``producer``, ``subscription`` / ``fetcher`` / ``consumer``, ``group_member``
(generic group membership, reused by connect workers), ``consumer_protocol``
and ``assignors``, ``classic_fields`` (the group protocols' byte fields),
``offsets``, ``admin``, ``loop_thread`` and the sync facades.
"""

from log_engine.client.admin import Admin
from log_engine.client.admin_types import (
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    GroupDescription,
    GroupListing,
    MemberDescription,
    NewTopic,
    TopicDescription,
)
from log_engine.client.assignors import RangeAssignor, RoundRobinAssignor
from log_engine.client.cluster import BrokerInfo, Cluster, PartitionInfo
from log_engine.client.config import AdminConfig, ClientConfig, ConsumerConfig, ProducerConfig
from log_engine.client.consumer import Consumer
from log_engine.client.errors import ClientClosedError, NoOffsetForPartitionError
from log_engine.client.group_member import (
    GroupMember,
    GroupMemberInfo,
    GroupProtocol,
    MembershipSettings,
)
from log_engine.client.log_dirs import LogDirDescription, ReplicaInfo
from log_engine.client.loop_thread import LoopThread
from log_engine.client.partitioner import murmur2
from log_engine.client.producer import Producer, SyncProducer
from log_engine.client.sync_admin import SyncAdmin
from log_engine.client.sync_consumer import SyncConsumer
from log_engine.client.types import (
    ConsumerRecord,
    OffsetAndMetadata,
    RecordMetadata,
    TopicPartition,
)

__all__ = [
    "Admin",
    "AdminConfig",
    "BrokerInfo",
    "ClientClosedError",
    "ClientConfig",
    "Cluster",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "Consumer",
    "ConsumerConfig",
    "ConsumerRecord",
    "GroupDescription",
    "GroupListing",
    "GroupMember",
    "GroupMemberInfo",
    "GroupProtocol",
    "LogDirDescription",
    "LoopThread",
    "MemberDescription",
    "MembershipSettings",
    "NewTopic",
    "NoOffsetForPartitionError",
    "OffsetAndMetadata",
    "PartitionInfo",
    "Producer",
    "ProducerConfig",
    "RangeAssignor",
    "RecordMetadata",
    "ReplicaInfo",
    "RoundRobinAssignor",
    "SyncAdmin",
    "SyncConsumer",
    "SyncProducer",
    "TopicDescription",
    "TopicPartition",
    "murmur2",
]
