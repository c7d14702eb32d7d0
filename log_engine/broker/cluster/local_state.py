"""``LocalReplicaState``: the metadata image's decisions applied to this broker's logs.

The target of the :class:`ReplicaStatePublisher`: before the replica manager
gets the partition states of a topic, the topic's configs from the image
(``min.insync.replicas``, retention, ...) become the local log's overrides, so a
leader checks ``acks=all`` against the topic's ``min.insync.replicas`` (the
broker's ``min.insync.replicas`` is the default). Partitions of deleted topics
leave the replica manager and their logs are deleted; partitions reassigned
away stop being served (the replica manager's rule) and keep their logs.

The states of partitions hosted on other brokers reach the replica manager too
(:meth:`attach_elsewhere`), so Produce and Fetch for them answer
NOT_LEADER_OR_FOLLOWER (the client refreshes Metadata) rather than
UNKNOWN_TOPIC_OR_PARTITION. A change of a hosted topic's configs alone
(IncrementalAlterConfigs) is applied to its local logs too.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from log_engine.broker.topics import TopicError
from log_engine.errors import KafkaError
from log_engine.metadata.listener import MetadataListener, MetadataUpdate
from log_engine.metadata.types import BrokerInfo, PartitionState
from log_engine.storage.config import LogConfig

if TYPE_CHECKING:
    from log_engine.broker.broker import Broker

log = logging.getLogger(__name__)


class LocalReplicaState:
    """Applies partition states and topic configs from the image to the local broker."""

    def __init__(self, broker: Broker, listener: MetadataListener) -> None:
        self._broker = broker
        self._listener = listener

    def apply(self, states: Iterable[PartitionState], brokers: Mapping[int, BrokerInfo]) -> None:
        states = list(states)
        for topic in sorted({s.topic for s in states}):
            self._apply_configs(topic)
        self._broker.replicas.apply(states, brokers)

    def _apply_configs(self, topic: str) -> None:
        keys = LogConfig.keys()
        wanted = {
            k: v
            for k, v in self._listener.image.topic_configs(topic).items()
            if k in keys and v is not None
        }
        logs = self._broker.logs
        if logs.topic_overrides(topic) == wanted:
            return
        try:
            if self._broker.topics.exists(topic):
                self._broker.topics.update_configs(topic, wanted)
            else:
                logs.set_topic_overrides(topic, wanted)
        except (TopicError, KafkaError) as exc:
            log.warning("topic %r: cannot apply its config %s: %s", topic, wanted, exc)

    def _apply_config_changes(self, update: MetadataUpdate) -> None:
        """Topic configs changed alone (IncrementalAlterConfigs) reach the local logs of
        the topics this broker hosts."""
        if update.image.configs is update.previous.configs:
            return
        for name in sorted(update.image.topics):
            if update.image.topic_configs(name) != update.previous.topic_configs(name) and (
                self._broker.topics.exists(name)
            ):
                self._apply_configs(name)

    def removed(self, states: list[PartitionState]) -> None:
        image = self._listener.image
        gone = [s for s in states if s.topic not in image.topics]
        self._broker.replicas.forget(gone)
        for topic in sorted({s.topic for s in gone}):
            if self._broker.topics.exists(topic):
                try:
                    self._broker.topics.delete(topic)
                    log.info("deleted topic %r (removed from the cluster metadata)", topic)
                except TopicError as exc:
                    log.warning("cannot delete topic %r: %s", topic, exc.message)

    def attach_elsewhere(self) -> None:
        """Hand the replica manager the partitions this broker does not host, now and on
        every change."""
        image = self._listener.image
        node_id = self._broker.node_id
        others = [s for s in image.partitions() if node_id not in s.replicas]
        if others:
            self._broker.replicas.apply(others, image.brokers)
        self._listener.subscribe(self._on_update)

    def _on_update(self, update: MetadataUpdate) -> None:
        node_id = self._broker.node_id
        self._apply_config_changes(update)
        others = [s for s in update.changed_partitions() if node_id not in s.replicas]
        if others:
            self._broker.replicas.apply(others, update.image.brokers)
        gone = [s for s in update.removed_partitions() if node_id not in s.replicas]
        if gone:
            self._broker.replicas.forget(gone)
