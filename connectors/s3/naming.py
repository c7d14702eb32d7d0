"""Object names as Confluent's S3 sink writes them, and parsing them back.

::

    <topics.dir>/<topic>/<encoded partition>/<topic>+<kafka partition>+<start offset>.<ext>
    topics/orders/partition=0/orders+0+0000001000.json

The start offset (the first record's offset, zero-padded to 10 digits) fixes
the name, so writing the same records again after a restart overwrites the
same object instead of adding a copy. Kafka topic names cannot contain ``+``,
so the file name splits unambiguously.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OFFSET_WIDTH = 10
_FILE_NAME = re.compile(r"^(?P<topic>[^+/]+)\+(?P<partition>\d+)\+(?P<offset>\d+)\.(?P<ext>.+)$")


@dataclass(frozen=True, slots=True)
class ObjectName:
    """A parsed sink object key."""

    key: str
    topic: str
    partition: int
    start_offset: int
    extension: str


def topic_prefix(topics_dir: str, topic: str) -> str:
    """The prefix every object of ``topic`` starts with."""
    return f"{topics_dir}/{topic}/"


def object_key(
    topics_dir: str,
    topic: str,
    encoded_partition: str,
    kafka_partition: int,
    start_offset: int,
    extension: str,
) -> str:
    """The key of the object whose first record is ``start_offset``."""
    name = f"{topic}+{kafka_partition}+{start_offset:0{OFFSET_WIDTH}d}.{extension}"
    return f"{topic_prefix(topics_dir, topic)}{encoded_partition}/{name}"


def parse_key(key: str) -> ObjectName | None:
    """The parts of a sink object key, or None for a key the sink did not write."""
    match = _FILE_NAME.match(key.rsplit("/", 1)[-1])
    if match is None:
        return None
    return ObjectName(
        key=key,
        topic=match["topic"],
        partition=int(match["partition"]),
        start_offset=int(match["offset"]),
        extension=match["ext"],
    )
