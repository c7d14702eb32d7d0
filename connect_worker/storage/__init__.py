"""The worker's stores: source offsets, connector configs and statuses.

Each store is a Protocol with a memory implementation (tests, and state that
need not survive a restart), a file implementation (standalone mode) and a
topic implementation (distributed mode: compacted topics in Kafka Connect's
formats, followed through :class:`TopicLog`).
"""

from connect_worker.storage.config_records import RestartRequest, SessionKey
from connect_worker.storage.config_topic import (
    ConfigSnapshot,
    ConfigTopicStore,
    ConfigUpdateListener,
)
from connect_worker.storage.configs import (
    ConfigSource,
    ConfigStore,
    ConfigStoreError,
    FileConfigStore,
    MemoryConfigStore,
    StoredConnector,
)
from connect_worker.storage.offset_topic import TopicOffsetStore
from connect_worker.storage.offsets import (
    FileOffsetStore,
    MemoryOffsetStore,
    OffsetStore,
    OffsetStoreError,
    partition_key,
    partition_of,
)
from connect_worker.storage.status import (
    FileStatusStore,
    MemoryStatusStore,
    StateRecord,
    StatusStore,
    StatusStoreError,
)
from connect_worker.storage.status_topic import TopicStatusStore
from connect_worker.storage.topic_log import TopicLog, TopicSettings, TopicStoreError

__all__ = [
    "ConfigSnapshot",
    "ConfigSource",
    "ConfigStore",
    "ConfigStoreError",
    "ConfigTopicStore",
    "ConfigUpdateListener",
    "FileConfigStore",
    "FileOffsetStore",
    "FileStatusStore",
    "MemoryConfigStore",
    "MemoryOffsetStore",
    "MemoryStatusStore",
    "OffsetStore",
    "OffsetStoreError",
    "RestartRequest",
    "SessionKey",
    "StateRecord",
    "StatusStore",
    "StatusStoreError",
    "StoredConnector",
    "TopicLog",
    "TopicOffsetStore",
    "TopicSettings",
    "TopicStatusStore",
    "TopicStoreError",
    "partition_key",
    "partition_of",
]
