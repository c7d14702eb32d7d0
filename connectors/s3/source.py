"""S3Source: read objects from S3 into topics (restore what the S3 sink wrote, or any objects).

``mode=restore`` (Confluent's ``RESTORE_BACKUP``) reads the sink's objects
under ``topics.dir`` back into the topics and partitions they came from, in
order (:mod:`connectors.s3.restore`); restore into other topic names with the
RegexRouter transform, or into another cluster with another worker.
``mode=generic`` (``GENERIC``) reads any objects under ``s3.prefix`` into
``topic``, a record per line or per object (:mod:`connectors.s3.generic`).

Work is split among ``tasks.max`` tasks by a stable hash of the Kafka
partition (restore) or the object key (generic). Offsets are the object and
the records read from it, so a restart resumes where the last acknowledged
record was. S3 trouble while listing or reading is a RetriableError (the
runtime retries); an object that cannot be decoded fails the task naming it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from connectors.api import (
    ConfigError,
    ConnectError,
    RetriableError,
    SourceConnector,
    SourceRecord,
    SourceTask,
)
from connectors.s3.client import build_client, describe_failure, is_transient, probe
from connectors.s3.config import S3SourceConfig
from connectors.s3.formats import make_format
from connectors.s3.generic import GenericReader
from connectors.s3.restore import RestoreReader
from connectors.s3.task_share import TaskShare

TASK_INDEX = "s3.task.index"
TASK_COUNT = "s3.task.count"
IDLE_WAIT_S = 0.5


class S3SourceConnector(SourceConnector):
    """Reads S3 objects into topics: the S3 sink's backup, or any objects under a prefix."""

    config_model = S3SourceConfig
    aliases = ("S3Source", "S3SourceConnector", "io.confluent.connect.s3.source.S3SourceConnector")

    def __init__(self) -> None:
        super().__init__()
        self._props: dict[str, str] = {}

    def start(self, props: Mapping[str, str]) -> None:
        S3SourceConfig.from_props(props)
        self._props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return S3SourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [
            {**self._props, TASK_INDEX: str(i), TASK_COUNT: str(max_tasks)}
            for i in range(max_tasks)
        ]

    def check(self, props: Mapping[str, str]) -> list[str]:
        try:
            config = S3SourceConfig.from_props(props)
        except ConfigError as exc:
            return [str(exc)]
        return probe(build_client(config), config)


class S3SourceTask(SourceTask):
    """Lists and reads objects; returns their records."""

    def __init__(self) -> None:
        super().__init__()
        self._stopping = threading.Event()
        self._next_refresh = 0.0
        self._reader: RestoreReader | GenericReader | None = None

    def start(self, props: Mapping[str, str]) -> None:
        config = S3SourceConfig.from_props(props)
        self._config = config
        client = build_client(config)
        problems = probe(client, config)
        if problems:
            raise ConnectError("; ".join(problems))
        index, count = int(props.get(TASK_INDEX, "0")), int(props.get(TASK_COUNT, "1"))
        share = TaskShare(client, config.s3_bucket_name, self._stored_offset, index, count)
        if config.mode == "restore":
            fmt = make_format(config.format_class, bytearray_separator=config.separator_bytes())
            self._reader = RestoreReader(share, config.topics_dir, config.restore_topics, fmt)
        else:
            self._reader = GenericReader(share, config.s3_prefix, config.topic, config.record_unit)

    def _stored_offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        if self.context is None:
            return None
        return self.context.offset_reader.offset(partition)

    def poll(self) -> list[SourceRecord]:
        reader = self._reader
        assert reader is not None, "poll() before start()"
        try:
            if time.monotonic() >= self._next_refresh:
                reader.refresh()
                self._next_refresh = time.monotonic() + self._config.poll_interval_ms / 1000
            records = reader.read(self._config.batch_max_records)
        except (BotoCoreError, ClientError) as exc:
            message = describe_failure(exc, self._config)
            if is_transient(exc) or isinstance(exc, ClientError):
                raise RetriableError(message) from exc
            raise ConnectError(message) from exc
        except ValueError as exc:  # JSON, Parquet or UTF-8 decoding
            raise ConnectError(
                f"an object could not be decoded as {self._config.format_class}: {exc}"
            ) from exc
        if not records:
            wait_s = min(IDLE_WAIT_S, max(0.0, self._next_refresh - time.monotonic()))
            self._stopping.wait(wait_s)
        return records

    def stop(self) -> None:
        self._stopping.set()

    def details(self) -> dict[str, Any]:
        reader = self._reader
        if reader is None:
            return {}
        return {
            "mode": self._config.mode,
            "objects_read": reader.objects_read,
            "records_read": reader.records_read,
        }
