"""IncrementalAlterConfigs of topics as ConfigRecords.

The topic must exist (UNKNOWN_TOPIC_OR_PARTITION); the keys the controller reads
itself (``min.insync.replicas``, ``unclean.leader.election.enable``) are checked
as at creation (INVALID_CONFIG). A key set gets a ConfigRecord with its value, a
key deleted one with no value (the broker's default applies again); deleting a
key the topic does not override writes nothing. The broker checked the log
keys (names and values) before forwarding.
"""

from __future__ import annotations

from log_engine.controller.results import TopicConfigChange, TopicOutcome
from log_engine.controller.topics import TopicRefused, check_topic_configs
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import TOPIC_RESOURCE, ConfigRecord, MetadataRecord


def alter_config_records(
    image: MetadataImage, change: TopicConfigChange
) -> tuple[TopicOutcome, list[MetadataRecord]]:
    """The records making ``change``; raises :class:`TopicRefused`."""
    topic = image.topics.get(change.name)
    if topic is None:
        raise TopicRefused(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {change.name!r} does not exist"
        )
    check_topic_configs(change.set)
    current = image.topic_configs(change.name)
    records: list[MetadataRecord] = [
        ConfigRecord(TOPIC_RESOURCE, change.name, key, change.set[key])
        for key in sorted(change.set)
        if current.get(key) != change.set[key]
    ]
    records.extend(
        ConfigRecord(TOPIC_RESOURCE, change.name, key, None)
        for key in sorted(set(change.delete))
        if key in current and key not in change.set
    )
    return TopicOutcome(change.name, int(ErrorCode.NONE), None, topic.topic_id), records
