"""Creating source topics before the first write, through the admin client.

Shared by every source task of a worker. A topic a task writes to for the
first time is created with ``topic.creation.default.partitions`` and
``topic.creation.default.replication.factor`` from the connector's config
(default -1 for both: the broker's ``num.partitions`` and
``default.replication.factor``). An existing topic is left alone. When the
cluster refuses (no permission on a managed Kafka), the broker's own
auto-creation remains as the fallback.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from log_engine.client import SyncAdmin
from log_engine.client.errors import is_retriable

log = logging.getLogger(__name__)


class TopicCreator:
    """Makes sure topics exist (see the module doc); thread-safe.

    Lifecycle: construct with a factory for the admin client (created on first
    use) -> :meth:`ensure` from any task thread -> :meth:`close`.
    """

    def __init__(self, admin_factory: Callable[[], SyncAdmin]) -> None:
        self._admin_factory = admin_factory
        self._admin: SyncAdmin | None = None
        self._lock = threading.Lock()
        self._known: set[str] = set()

    def ensure(self, topic: str, connector_props: Mapping[str, str]) -> None:
        """Create ``topic`` unless it exists; retriable errors propagate for a retry."""
        if topic in self._known:
            return
        partitions = _int(connector_props, "topic.creation.default.partitions")
        replication = _int(connector_props, "topic.creation.default.replication.factor")
        with self._lock:
            if topic in self._known:
                return
            if self._admin is None:
                self._admin = self._admin_factory()
            try:
                self._admin.create_topic(topic, partitions, replication, if_not_exists=True)
            except Exception as exc:
                if is_retriable(exc):
                    raise
                log.warning(
                    "cannot create topic %r (%s: %s); relying on the broker's auto-creation",
                    topic,
                    type(exc).__name__,
                    exc,
                )
            self._known.add(topic)

    def list_topics(self) -> list[str]:
        """The cluster's topics (for ``topics.regex`` subscriptions)."""
        return self.admin().list_topics()

    def admin(self) -> SyncAdmin:
        """The shared admin client (created on first use)."""
        with self._lock:
            if self._admin is None:
                self._admin = self._admin_factory()
            return self._admin

    def close(self) -> None:
        with self._lock:
            admin, self._admin = self._admin, None
        if admin is not None:
            admin.close()


def _int(props: Mapping[str, str], key: str) -> int:
    raw = (props.get(key) or "").strip()
    return int(raw) if raw else -1
