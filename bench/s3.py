"""S3 sink throughput: log -> S3Sink -> S3, against boto3 uploading the same objects.

Fills a topic with N records of 1 KiB (not timed), starts ``sluice standalone``
as a user would, drops an S3 sink pipeline file (bytearray format,
ByteArrayConverter, ``flush.size`` records per object) and times until every
object is in the bucket. In the same run, on the same moto S3 server, the
baseline uploads objects of the same sizes and bytes with plain boto3
``put_object`` calls, one after the other (what a hand-written uploader does).

- ``sink_mb_s``: MB of objects per second, from the first object to the last
  (the steady rate; the task's start and the first batch are left out);
- ``sink_end_to_end_mb_s``: the same from the pipeline file being written;
- ``boto3_mb_s``: the baseline; ``ratio`` = sink_mb_s / boto3_mb_s (goal >= 0.7).

moto takes ~120 PUT/s here, so objects are large (5 MB). Prints one JSON line;
``--quick`` (50k records, 10 objects) runs in well under a minute.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.support.s3_server import S3Server
from tests.support.standalone_process import StandaloneProcess, properties

RECORD_BYTES = 1024
FLUSH_SIZE = 5000
_TIMEOUT_S = 600.0


def record_value(i: int) -> bytes:
    head = f"{i:012d} ".encode()
    return head + b"x" * (RECORD_BYTES - len(head))


def object_body(first: int) -> bytes:
    return b"".join(record_value(i) + b"\n" for i in range(first, first + FLUSH_SIZE))


def fill_topic(bootstrap: str, topic: str, count: int) -> None:
    from log_engine.client import SyncAdmin, SyncProducer

    with SyncAdmin({"bootstrap.servers": bootstrap}) as admin:
        admin.create_topic(topic, 1)
    with SyncProducer({"bootstrap.servers": bootstrap, "linger.ms": 5}) as producer:
        for i in range(count):
            producer.send(topic, record_value(i), partition=0)
        producer.flush(300)


def count_objects(s3: S3Server, bucket: str) -> int:
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return sum(page.get("KeyCount", 0) for page in pages)


def sink_run(workdir: Path, s3: S3Server, count: int) -> dict[str, float]:
    bucket = s3.new_bucket()
    objects = count // FLUSH_SIZE
    worker = StandaloneProcess(workdir / "worker", flush_interval_ms=5000)
    worker.start()
    try:
        fill_topic(worker.bootstrap, "bench", count)
        started = time.perf_counter()
        worker.write_pipeline(
            "bench-s3",
            properties(
                **{
                    "name": "bench-s3",
                    "connector.class": "S3Sink",
                    "topics": "bench",
                    "format.class": "bytearray",
                    "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
                    "flush.size": str(FLUSH_SIZE),
                    **s3.props(bucket),
                }
            ),
        )
        first_at = 0.0
        while (done := count_objects(s3, bucket)) < objects:
            if done and not first_at:
                first_at = time.perf_counter()
            if time.perf_counter() - started > _TIMEOUT_S:
                raise RuntimeError(
                    f"the sink wrote {done}/{objects} objects; see {worker.log_path}"
                )
            time.sleep(0.05)
        ended = time.perf_counter()
    finally:
        worker.close()
    object_bytes = FLUSH_SIZE * (RECORD_BYTES + 1)
    steady_s = ended - (first_at or started)
    steady_objects = objects - 1 if first_at else objects
    return {
        "sink_mb_s": steady_objects * object_bytes / steady_s / 1e6,
        "sink_end_to_end_mb_s": objects * object_bytes / (ended - started) / 1e6,
        "sink_s": ended - started,
    }


def boto3_run(s3: S3Server, count: int) -> float:
    bucket = s3.new_bucket()
    client = s3.client()
    bodies = [object_body(first) for first in range(0, count, FLUSH_SIZE)]
    started = time.perf_counter()
    for n, body in enumerate(bodies):
        client.put_object(Bucket=bucket, Key=f"baseline/{n:06d}.bin", Body=body)
    elapsed = time.perf_counter() - started
    return sum(map(len, bodies)) / elapsed / 1e6


def run(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sluice-s3-bench-") as tmp:
        workdir = Path(tmp)
        s3 = S3Server(workdir / "moto.log").start()
        try:
            sink = sink_run(workdir, s3, count)
            baseline = boto3_run(s3, count)
        finally:
            s3.stop()
    return {
        "records": count,
        "record_bytes": RECORD_BYTES,
        "objects": count // FLUSH_SIZE,
        "object_mb": round(FLUSH_SIZE * (RECORD_BYTES + 1) / 1e6, 2),
        "sink_mb_s": round(sink["sink_mb_s"], 1),
        "sink_end_to_end_mb_s": round(sink["sink_end_to_end_mb_s"], 1),
        "boto3_mb_s": round(baseline, 1),
        "ratio": round(sink["sink_mb_s"] / baseline, 2),
        "ratio_end_to_end": round(sink["sink_end_to_end_mb_s"] / baseline, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50k records instead of 200k")
    parser.add_argument("--records", type=int, default=None)
    args = parser.parse_args()
    count = args.records or (50_000 if args.quick else 200_000)
    count -= count % FLUSH_SIZE
    print(json.dumps(run(count)))


if __name__ == "__main__":
    main()
