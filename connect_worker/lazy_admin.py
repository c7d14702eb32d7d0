"""An admin client made on first use and dropped after a failure.

The health probe and the console ask the cluster now and then; after a
failure their client may hold dead connections, so it is closed and the next
use makes a fresh one (a cluster that comes back is seen again). Not
thread-safe: its owners serialise their calls with their own lock.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from log_engine.client import SyncAdmin

log = logging.getLogger(__name__)


class LazyAdmin:
    """One :class:`SyncAdmin` for ``config``, made by :meth:`get`, closed by :meth:`drop`."""

    def __init__(self, config: Mapping[str, str], owner: str) -> None:
        self._config = dict(config)
        self._owner = owner
        self._admin: SyncAdmin | None = None

    def get(self) -> SyncAdmin:
        if self._admin is None:
            self._admin = SyncAdmin(self._config)
        return self._admin

    def drop(self) -> None:
        """Close the client (quietly); the next :meth:`get` makes a new one."""
        admin, self._admin = self._admin, None
        if admin is not None:
            try:
                admin.close()
            except Exception:
                log.debug("closing the %s's admin client failed", self._owner, exc_info=True)
