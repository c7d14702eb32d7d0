"""The S3 sink's own metrics on a real worker's ``GET /metrics`` (issue 20): objects and
bytes written match the bucket; a write S3 refuses is counted as an upload failure."""

from __future__ import annotations

from collections.abc import Callable

from harness.s3_server import S3Server
from harness.standalone_process import StandaloneProcess, wait_for_rest
from tests.integration.s3.objects import object_bytes, object_keys
from tests.integration.s3.test_s3_pipelines import produce, s3_sink
from tests.support.scrape import sample, scrape


def test_objects_and_bytes_written_match_the_bucket_and_failures_are_counted(
    s3: S3Server, bucket: str, fresh_worker: Callable[..., StandaloneProcess]
) -> None:
    worker = fresh_worker().start()
    produce(worker.bootstrap, "s3m", partitions=2, per_partition=30)
    worker.write_pipeline("s3m", s3_sink("s3m", s3, bucket, "s3m", **{"flush.size": "10"}))
    task = {"connector": "s3m", "task": "0"}
    wait_for_rest(
        lambda: sample(scrape(worker.url), "sluice_plugin_s3_objects_written_total", **task) == 6,
        "six objects counted (two partitions, 30 records each, 10 per object)",
    )
    keys = object_keys(s3, bucket)
    samples = scrape(worker.url)
    assert len(keys) == 6
    assert sample(samples, "sluice_plugin_s3_bytes_written_total", **task) == sum(
        len(object_bytes(s3, bucket, key)) for key in keys
    )
    assert sample(samples, "sluice_plugin_s3_upload_failures_total", **task) == 0

    client = s3.client()
    for key in keys:
        client.delete_object(Bucket=bucket, Key=key)
    client.delete_bucket(Bucket=bucket)  # the next object has nowhere to go
    produce(worker.bootstrap, "s3m", partitions=2, per_partition=10)
    wait_for_rest(
        lambda: (sample(scrape(worker.url), "sluice_plugin_s3_upload_failures_total", **task)
                 or 0) >= 1,
        "the refused write counted as an upload failure",
    )
    assert sample(scrape(worker.url), "sluice_plugin_s3_objects_written_total", **task) == 6
