"""What one S3 source task reads: a bucket, its share of the streams, its stored offsets."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from connectors.s3.recovery import list_objects


def owns(stream: str, task_index: int, task_count: int) -> bool:
    """Whether a stream (a Kafka partition, an object) is this task's, by a stable hash."""
    return zlib.crc32(stream.encode()) % task_count == task_index


@dataclass(frozen=True, slots=True)
class TaskShare:
    """The bucket a source task reads, which streams are its, and where it stopped.

    ``offset_of`` maps a source partition to its stored offset (None: never read).
    """

    client: Any
    bucket: str
    offset_of: Callable[[dict[str, Any]], dict[str, Any] | None]
    task_index: int = 0
    task_count: int = 1

    def owns(self, stream: str) -> bool:
        return owns(stream, self.task_index, self.task_count)

    def objects(self, prefix: str) -> Iterator[dict[str, Any]]:
        """Every object of the bucket under ``prefix`` (ListObjectsV2 entries)."""
        return list_objects(self.client, self.bucket, prefix)

    def get(self, key: str) -> bytes:
        """The whole object ``key`` of the bucket."""
        body: bytes = self.client.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        return body
