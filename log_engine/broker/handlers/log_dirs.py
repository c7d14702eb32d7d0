"""DescribeLogDirs: the broker's log directory and the bytes each hosted partition takes.

One result: the broker keeps its partitions in one directory (``log.dirs``'
first entry). A partition asked for that this broker does not host is left
out, as Kafka leaves it out; ``topics`` null means every hosted partition.
``offset_lag`` is Kafka's for a current (not future) log: how far the local
log end is behind the partition's high watermark (0 on a leader).
``total_bytes`` and ``usable_bytes`` (v4+) are the file system's.
"""

from __future__ import annotations

import shutil
from typing import Any

from log_engine.broker.handlers.context import RequestContext


async def handle_describe_log_dirs(ctx: RequestContext, body: dict[str, Any]) -> dict[str, Any]:
    topics = ctx.broker.topics
    wanted = body.get("topics")
    if wanted is None:
        pairs = [(name, range(count)) for name, count in sorted(topics.topics().items())]
    else:
        pairs = [(entry["topic"], entry["partitions"]) for entry in wanted]
    described = []
    for name, indexes in pairs:
        partitions = []
        for index in indexes:
            partition = topics.partition(name, index)
            if partition is None:
                continue
            log = partition.log
            partitions.append({
                "partition_index": index,
                "partition_size": log.size_bytes,
                "offset_lag": max(0, partition.high_watermark - log.log_end_offset),
                "is_future_key": False,
            })
        if partitions:
            described.append({"name": name, "partitions": partitions})
    log_dir = ctx.broker.config.log_dir.resolve()
    try:
        usage = shutil.disk_usage(log_dir)
        total, usable = usage.total, usage.free
    except OSError:
        total = usable = -1
    result = {"error_code": 0, "log_dir": str(log_dir), "topics": described,
              "total_bytes": total, "usable_bytes": usable}
    return {"throttle_time_ms": 0, "error_code": 0, "results": [result]}
