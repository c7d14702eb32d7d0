"""The worker's stores: source offsets, connector configs and statuses.

Each store is a Protocol with a memory implementation (tests, and state that
need not survive a restart) and a file implementation (standalone mode); the
log-backed ones (compacted topics) come with distributed mode.
"""

from connect_worker.storage.configs import (
    ConfigSource,
    ConfigStore,
    ConfigStoreError,
    FileConfigStore,
    MemoryConfigStore,
    StoredConnector,
)
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

__all__ = [
    "ConfigSource",
    "ConfigStore",
    "ConfigStoreError",
    "FileConfigStore",
    "FileOffsetStore",
    "FileStatusStore",
    "MemoryConfigStore",
    "MemoryOffsetStore",
    "MemoryStatusStore",
    "OffsetStore",
    "OffsetStoreError",
    "StateRecord",
    "StatusStore",
    "StatusStoreError",
    "StoredConnector",
    "partition_key",
    "partition_of",
]
