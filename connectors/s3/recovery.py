"""Where a Kafka partition's committed objects end: the sink's exactly-once restart point.

The sink stores nothing but its objects. A rotation writes a *batch*: the
records ``[start, end)`` of one Kafka partition, as one object per encoded
partition, each named by its first record's offset; the object named by the
batch's first offset (the *head*) is written last. Every object carries
metadata ``sluice-batch-start``/``sluice-batch-end``, so::

    committed end = batch-end of the head with the highest start offset

Objects of a batch cut short by a crash (written before their head) are
skipped here; the restarted task rewrites them under the same names, with the
same records, because batch boundaries depend only on the records
(``flush.size``, ``rotate.interval.ms`` on record time). Objects without the
metadata (written by another tool, e.g. Confluent's sink) count as heads
ending at ``start + number of records`` (read to count them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from connectors.s3.formats import ObjectFormat
from connectors.s3.naming import ObjectName, parse_key

META_BATCH_START = "sluice-batch-start"
META_BATCH_END = "sluice-batch-end"
META_RECORDS = "sluice-records"


def list_objects(client: Any, bucket: str, prefix: str) -> Iterator[dict[str, Any]]:
    """Every object under ``prefix`` (ListObjectsV2, page by page)."""
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
        yield from page.get("Contents", ())


def partition_objects(
    client: Any, bucket: str, prefix: str, topic: str, partition: int, extension: str
) -> list[ObjectName]:
    """The sink objects of one Kafka partition under ``prefix``, by start offset."""
    found = []
    for entry in list_objects(client, bucket, prefix):
        name = parse_key(entry["Key"])
        if (
            name is not None
            and name.topic == topic
            and name.partition == partition
            and name.extension == extension
        ):
            found.append(name)
    found.sort(key=lambda n: (n.start_offset, n.key))
    return found


def committed_end(
    client: Any,
    bucket: str,
    prefix: str,
    topic: str,
    partition: int,
    fmt: ObjectFormat,
) -> int | None:
    """The offset after the last record of the last complete batch, or None if none."""
    candidates = partition_objects(client, bucket, prefix, topic, partition, fmt.extension)
    for name in reversed(candidates):
        head = client.head_object(Bucket=bucket, Key=name.key)
        meta = {k.lower(): v for k, v in head.get("Metadata", {}).items()}
        if META_BATCH_START in meta and META_BATCH_END in meta:
            if int(meta[META_BATCH_START]) == name.start_offset:
                return int(meta[META_BATCH_END])
            continue  # an object of a batch; its head decides
        body = client.get_object(Bucket=bucket, Key=name.key)["Body"].read()
        return name.start_offset + len(fmt.decode(body))
    return None
