"""S3 sink throughput: log -> S3Sink -> S3, against boto3 uploading the same objects.

Fills a topic with N records of 1 KiB (not timed; ``--record-bytes``), starts
``sluice standalone`` as a user would, drops an S3 sink pipeline file
(bytearray format, ByteArrayConverter, ``flush.size`` records per object) and
times until every object is in the bucket. In the same run, on the same moto
S3 server, the baseline uploads objects of the same sizes and bytes with plain
boto3 ``put_object`` calls, one after the other (what a hand-written uploader
does).

Progress is read from the task's ``details()`` in the worker's REST status:
``objects_written``, and the epoch times at which S3 answered the first and
the latest PUT (``first_object_at``/``last_object_at``), so the clock stops
when S3 answered, as the baseline's does, and the status is asked for only
every 200 ms; the bucket is listed once at the end to check the count.
(Until 2026-11-22 the bench listed the bucket every 50 ms, which loaded the
moto server during the sink's run only; then it asked for the status every
25 ms and timed what it saw, which cost the worker's REST thread ~0.4 ms of
CPU per MB, ~5% of the worker's: a load the baseline never had either.)

- ``sink_mb_s``: MB of objects per second, from the first object to the last
  (the steady rate; the task's start and the first batch are left out);
- ``sink_end_to_end_mb_s``: the same from the pipeline file being written;
- ``boto3_mb_s``: the baseline; ``ratio`` = sink_mb_s / boto3_mb_s (goal >= 0.7).

The baseline runs before and after the sink (the machine's speed drifts) and
is averaged. The sink writes its 5 MB objects from its upload process (see
``connectors.s3.upload_process``): like the baseline's process, that child
does nothing but boto3 uploads, while the worker consumes and batches. moto
takes ~120 PUT/s here, so objects are large (5 MB).
``--record-bytes`` sets the value size (1 KiB by default): below a few KiB the
runtime's per-record work (fetch, decode, convert), not S3, sets the pace.
Prints one JSON line; ``--quick`` (50 MB, 10 objects) runs in under a minute.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.s3_server import S3Server
from harness.standalone_process import StandaloneProcess, properties

OBJECT_BYTES = 5_000_000
_TIMEOUT_S = 600.0
_POLL_S = 0.2


def record_value(i: int, size: int) -> bytes:
    head = f"{i:012d} ".encode()
    return head + b"x" * (size - len(head))


def object_body(first: int, flush_size: int, size: int) -> bytes:
    return b"".join(record_value(i, size) + b"\n" for i in range(first, first + flush_size))


def fill_topic(bootstrap: str, topic: str, count: int, size: int) -> None:
    from log_engine.client import SyncAdmin, SyncProducer

    with SyncAdmin({"bootstrap.servers": bootstrap}) as admin:
        admin.create_topic(topic, 1)
    with SyncProducer({"bootstrap.servers": bootstrap, "linger.ms": 5}) as producer:
        for i in range(count):
            producer.send(topic, record_value(i, size), partition=0)
        producer.flush(300)


def count_objects(s3: S3Server, bucket: str) -> int:
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return sum(page.get("KeyCount", 0) for page in pages)


def sink_progress(worker: StandaloneProcess, name: str) -> tuple[int, float, float]:
    """Objects the sink's tasks wrote so far, and when S3 answered the first and the last."""
    status = worker.status(name) or {}
    details = [task.get("details", {}) for task in status.get("tasks", [])]
    firsts = [d["first_object_at"] for d in details if d.get("first_object_at")]
    lasts = [d["last_object_at"] for d in details if d.get("last_object_at")]
    written = sum(d.get("objects_written", 0) for d in details)
    return written, min(firsts, default=0.0), max(lasts, default=0.0)


def sink_run(
    workdir: Path, s3: S3Server, count: int, size: int, flush_size: int
) -> dict[str, float]:
    bucket = s3.new_bucket()
    objects = count // flush_size
    worker = StandaloneProcess(workdir / "worker", flush_interval_ms=5000)
    worker.start()
    try:
        fill_topic(worker.bootstrap, "bench", count, size)
        started = time.time()  # the worker's times are epoch seconds on the same clock
        worker.write_pipeline(
            "bench-s3",
            properties(
                **{
                    "name": "bench-s3",
                    "connector.class": "S3Sink",
                    "topics": "bench",
                    "format.class": "bytearray",
                    "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
                    "flush.size": str(flush_size),
                    **s3.props(bucket),
                }
            ),
        )
        while (progress := sink_progress(worker, "bench-s3"))[0] < objects:
            if time.time() - started > _TIMEOUT_S:
                raise RuntimeError(
                    f"the sink wrote {progress[0]}/{objects} objects; see {worker.log_path}"
                )
            time.sleep(_POLL_S)
        _, first_at, ended = progress
    finally:
        worker.close()
    if (listed := count_objects(s3, bucket)) != objects:
        raise RuntimeError(f"the sink reported {objects} objects, the bucket holds {listed}")
    object_bytes = flush_size * (size + 1)
    return {  # from the first object to the last: objects - 1 of them in that time
        "sink_mb_s": (objects - 1) * object_bytes / (ended - first_at) / 1e6,
        "sink_end_to_end_mb_s": objects * object_bytes / (ended - started) / 1e6,
        "sink_s": ended - started,
    }


def boto3_run(s3: S3Server, count: int, size: int, flush_size: int) -> float:
    bucket = s3.new_bucket()
    client = s3.client()
    bodies = [object_body(first, flush_size, size) for first in range(0, count, flush_size)]
    started = time.perf_counter()
    for n, body in enumerate(bodies):
        client.put_object(Bucket=bucket, Key=f"baseline/{n:06d}.bin", Body=body)
    elapsed = time.perf_counter() - started
    return sum(map(len, bodies)) / elapsed / 1e6


def run(count: int, size: int) -> dict[str, Any]:
    flush_size = max(1, OBJECT_BYTES // (size + 1))
    count -= count % flush_size
    with tempfile.TemporaryDirectory(prefix="sluice-s3-bench-") as tmp:
        workdir = Path(tmp)
        s3 = S3Server(workdir / "moto.log").start()
        try:  # the baseline before and after the sink: the machine's speed drifts
            before = boto3_run(s3, count, size, flush_size)
            sink = sink_run(workdir, s3, count, size, flush_size)
            after = boto3_run(s3, count, size, flush_size)
        finally:
            s3.stop()
    baseline = (before + after) / 2
    return {
        "records": count,
        "record_bytes": size,
        "objects": count // flush_size,
        "object_mb": round(flush_size * (size + 1) / 1e6, 2),
        "sink_mb_s": round(sink["sink_mb_s"], 1),
        "sink_end_to_end_mb_s": round(sink["sink_end_to_end_mb_s"], 1),
        "boto3_mb_s": round(baseline, 1),
        "boto3_before_after_mb_s": [round(before, 1), round(after, 1)],
        "ratio": round(sink["sink_mb_s"] / baseline, 2),
        "ratio_end_to_end": round(sink["sink_end_to_end_mb_s"] / baseline, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 MB instead of 250 MB")
    parser.add_argument("--records", type=int, default=None)
    parser.add_argument("--record-bytes", type=int, default=1024, help="value size (1024)")
    args = parser.parse_args()
    size = args.record_bytes
    count = args.records or (50_000_000 if args.quick else 250_000_000) // (size + 1)
    print(json.dumps(run(count, size)))


if __name__ == "__main__":
    main()
