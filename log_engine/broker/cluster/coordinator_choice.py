"""Which broker coordinates a consumer group in a cluster (interim, until the group
coordinator and ``__consumer_offsets`` are replicated).

Each broker still keeps its own groups and committed offsets. So that every
member of a group, and every request of one member, reaches the same broker,
FindCoordinator names one broker per group: the unfenced broker at
``crc32(group) mod n`` of the unfenced brokers by id. If that broker is fenced
or the set changes, the group moves and its committed offsets stay behind on
the old broker (consumers fall back to ``auto.offset.reset``).
"""

from __future__ import annotations

import zlib

from log_engine.metadata.image import MetadataImage
from log_engine.metadata.types import BrokerEndpoint


def group_coordinator(
    image: MetadataImage, group: str, listener: str
) -> tuple[int, BrokerEndpoint] | None:
    """The broker (id, endpoint on ``listener``) that coordinates ``group``; None if none."""
    live = [
        (broker_id, endpoint)
        for broker_id, info in sorted(image.brokers.items())
        if not info.fenced and (endpoint := info.endpoint(listener)) is not None
    ]
    if not live:
        return None
    return live[zlib.crc32(group.encode()) % len(live)]
