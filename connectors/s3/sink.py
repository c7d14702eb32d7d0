"""S3Sink: write topics to S3 objects, exactly once, with Confluent's keys and object layout.

Objects are named ``<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start>.<ext>``
(e.g. ``topics/orders/partition=0/orders+0+0000000000.json``); formats JSON
lines, bytearray and Parquet; partitioners default, field and time-based (see
:mod:`connectors.s3`).

Exactly-once: the sink stores nothing but its objects. On ``open`` a task
lists each assigned partition's objects, finds where the last complete batch
ends (:mod:`connectors.s3.recovery`) and seeks there; ``pre_commit`` returns
only offsets whose records are in S3. Records buffered when the task dies are
read again and land in the same object names, so a restart never leaves a
record twice in S3, as long as object boundaries depend only on the records:
``flush.size``, ``rotate.interval.ms`` (record time) and any partitioner but
the Wallclock extractor. ``rotate.schedule.interval.ms`` and Wallclock cut
objects by the wall clock: a restart may then write records again in objects
of other names (at-least-once), as with Confluent's sink.

Closed batches are uploaded by a background thread, in order, while records
keep coming (at most MAX_QUEUED_BATCHES wait); objects of PROCESS_MIN_BYTES
and more go through the task's upload process, whose boto3 work does not
compete with the runtime's threads for the worker's GIL
(:mod:`connectors.s3.upload_process`). ``put`` checks a whole batch
(format, partitioner, nulls) before taking any of it, so a DataError leaves
nothing half-buffered; an S3 failure while writing raises RetriableError
(transient) or ConnectError (credentials, bucket gone).
"""

from __future__ import annotations

import logging
import operator
import threading
from collections.abc import Mapping, Sequence
from itertools import groupby
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from connectors.api import (
    ConfigError,
    ConnectError,
    DataError,
    RetriableError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from connectors.s3.client import build_client, describe_failure, is_transient, probe
from connectors.s3.config import S3SinkConfig
from connectors.s3.formats import ObjectFormat, make_format
from connectors.s3.naming import topic_prefix
from connectors.s3.partitioners import Partitioner
from connectors.s3.recovery import committed_end
from connectors.s3.upload import put_object
from connectors.s3.upload_process import UploadProcess
from connectors.s3.uploader import Uploader
from connectors.s3.writer import Encoded, PartitionWriter, RotationPolicy

log = logging.getLogger(__name__)
_KAFKA_PARTITION = operator.attrgetter("topic", "partition")

#: Closed batches waiting for the background upload (then put() waits): bounds memory.
MAX_QUEUED_BATCHES = 2
#: Objects from this size on are written by the task's upload process (off the worker's GIL);
#: smaller ones by the upload thread itself (starting a process would cost more than it saves).
PROCESS_MIN_BYTES = 1024 * 1024


class S3SinkConnector(SinkConnector):
    """Writes the records of its topics to S3 objects (Confluent's S3 sink keys and layout)."""

    config_model = S3SinkConfig
    aliases = ("S3Sink", "S3SinkConnector", "io.confluent.connect.s3.S3SinkConnector")

    def __init__(self) -> None:
        super().__init__()
        self._props: dict[str, str] = {}

    def start(self, props: Mapping[str, str]) -> None:
        S3SinkConfig.from_props(props)
        self._props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return S3SinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def check(self, props: Mapping[str, str]) -> list[str]:
        try:
            config = S3SinkConfig.from_props(props)
        except ConfigError as exc:
            return [str(exc)]
        return probe(build_client(config), config)


class S3SinkTask(SinkTask):
    """Buffers records per Kafka partition and writes them as S3 objects."""

    def __init__(self) -> None:
        super().__init__()
        self._writers: dict[TopicPartition, PartitionWriter] = {}
        self._lock = threading.Lock()  # guards _writers for details()

    def start(self, props: Mapping[str, str]) -> None:
        config = S3SinkConfig.from_props(props)
        self._config = config
        self._client = build_client(config)
        problems = probe(self._client, config)
        if problems:
            raise ConnectError("; ".join(problems))
        self._format: ObjectFormat = make_format(
            config.format_class, bytearray_separator=config.separator_bytes()
        )
        self._partitioner: Partitioner = config.build_partitioner()
        self._uploader = Uploader(background=True, max_queued=MAX_QUEUED_BATCHES)
        self._upload_process = UploadProcess(config)  # started by the first large object
        # updated by the one thread that uploads at a time (the uploader's, or a retry in put)
        self._objects_metric = self.metrics.counter("s3_objects_written", "Objects written to S3.")
        self._bytes_metric = self.metrics.counter("s3_bytes_written", "Bytes of those objects.")
        self._failures_metric = self.metrics.counter(
            "s3_upload_failures", "Object writes S3 refused or that broke (each is retried)."
        )
        self._policy = RotationPolicy(
            config.flush_size, config.rotate_interval_ms, config.rotate_schedule_interval_ms
        )
        # a run of one Kafka partition goes into one object, cut by counting: taken by slices
        self._by_runs = self._partitioner.per_kafka_partition and config.rotate_interval_ms < 0
        if not self._partitioner.deterministic or config.rotate_schedule_interval_ms >= 0:
            log.warning(
                "S3 sink: wall-clock rotation or the Wallclock extractor is on: object "
                "boundaries depend on timing, so delivery is at-least-once, not exactly-once"
            )

    # -- partitions -------------------------------------------------------------------

    def open(self, partitions: Sequence[TopicPartition]) -> None:
        seeks: dict[TopicPartition, int] = {}
        for tp in partitions:
            end = self._s3_call(lambda tp=tp: self._find_end(tp))  # type: ignore[misc]
            writer = self._new_writer(tp, end)
            with self._lock:
                self._writers[tp] = writer
            if end is not None:
                seeks[tp] = end
        if seeks and self.context is not None:
            log.info("S3 sink: resuming after the objects in S3 at %s", seeks)
            self.context.offset(seeks)

    def _find_end(self, tp: TopicPartition) -> int | None:
        config = self._config
        prefix = topic_prefix(config.topics_dir, tp.topic)
        if config.partitioner_class == "default":
            prefix += f"partition={tp.partition}/"
        return committed_end(
            self._client, config.s3_bucket_name, prefix, tp.topic, tp.partition, self._format
        )

    def _new_writer(self, tp: TopicPartition, start_offset: int | None) -> PartitionWriter:
        config = self._config

        def upload(key: str, data: bytes, metadata: dict[str, str]) -> None:
            bucket, part_size = config.s3_bucket_name, config.s3_part_size
            try:
                if len(data) >= PROCESS_MIN_BYTES:
                    self._upload_process.put(bucket, key, data, part_size, metadata)
                else:
                    put_object(self._client, bucket, key, data, part_size, metadata)
            except Exception:
                self._failures_metric.inc()
                raise
            self._objects_metric.inc()
            self._bytes_metric.inc(len(data))

        return PartitionWriter(
            tp, self._format, config.topics_dir, self._policy, upload, start_offset, self._uploader
        )

    def close(self, partitions: Sequence[TopicPartition]) -> None:
        self._uploader.drain()  # batches already closed still go out (at most a few)
        with self._lock:
            for tp in partitions:
                writer = self._writers.pop(tp, None)
                if writer is not None:
                    writer.discard()

    # -- records ----------------------------------------------------------------------

    def put(self, records: Sequence[SinkRecord]) -> None:
        runs = self._check_runs(records) if self._by_runs else None
        if runs is not None:  # DataError: nothing was taken
            self._s3_call(lambda: self._take_runs(runs))
            return
        checked = self._check_all(records)  # DataError: nothing was taken
        self._s3_call(lambda: self._take(checked))

    def _check_runs(
        self, records: Sequence[SinkRecord]
    ) -> list[tuple[list[SinkRecord], list[Any]]] | None:
        """The records as runs of one Kafka partition, each with its encoded values (a
        DataError for the first bad one); None: they go one by one (a null value, Parquet)."""
        runs = []
        for _, group in groupby(records, _KAFKA_PARTITION):
            run = list(group)
            encoded = self._format.encode_run(run)
            if encoded is None:
                return None
            runs.append((run, encoded))
        return runs

    def _take_runs(self, runs: list[tuple[list[SinkRecord], list[Any]]]) -> None:
        self._uploader.check()
        for run, encoded in runs:
            first = run[0]
            writer = self._writer_for(first.topic, first.partition or 0)
            writer.add_run(run, encoded, self._partitioner.encode(first))
        self._rotate_scheduled()

    def _check_all(self, records: Sequence[SinkRecord]) -> list[Encoded]:
        """Each record encoded and placed, or a DataError for the first bad one."""
        encode, place = self._format.encode, self._partitioner.encode
        timestamp = self._partitioner.timestamp_ms if self._policy.rotate_interval_ms >= 0 else None
        checked = []
        for record in records:
            if record.value is None:
                checked.append(self._check_null(record))
            else:
                ts = timestamp(record) if timestamp is not None else None
                checked.append(Encoded(record, place(record), encode(record), ts))
        return checked

    def _check_null(self, record: SinkRecord) -> Encoded:
        behaviour = self._config.behavior_on_null_values
        if behaviour == "fail":
            raise DataError(
                f"record {record.topic}-{record.partition}@{record.kafka_offset}: null value "
                "(set behavior.on.null.values=ignore or write to accept tombstones)"
            )
        if behaviour == "ignore":
            return Encoded(record, "", None, None)
        payload = self._format.encode_null(record)
        return Encoded(record, self._partitioner.encode(record), payload, record.timestamp)

    def _take(self, checked: list[Encoded]) -> None:
        self._uploader.check()
        current: tuple[str, int | None] | None = None
        writer: PartitionWriter | None = None
        for item in checked:
            record = item.record
            key = (record.topic, record.partition)
            if key != current:  # records come in runs per partition: look up once per run
                current, writer = key, self._writer_for(record.topic, record.partition or 0)
            assert writer is not None
            writer.add(item)
        self._rotate_scheduled()

    def _writer_for(self, topic: str, partition: int) -> PartitionWriter:
        tp = TopicPartition(topic, partition)
        writer = self._writers.get(tp)
        if writer is None:  # not opened (should not happen): start from what S3 holds
            writer = self._new_writer(tp, self._find_end(tp))
            with self._lock:
                self._writers[tp] = writer
        return writer

    def _rotate_scheduled(self) -> None:
        self._uploader.check()
        for writer in list(self._writers.values()):
            if writer.schedule_due():
                writer.rotate()

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Wait until the closed batches are in S3 (open objects stay open: see pre_commit)."""
        self._uploader.drain()
        self._s3_call(self._uploader.check)

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        self._s3_call(self._rotate_scheduled)
        return {
            tp: writer.committed_offset
            for tp, writer in self._writers.items()
            if writer.committed_offset is not None
        }

    def _s3_call(self, action: Any) -> Any:
        """Run ``action``; S3 failures become RetriableError or ConnectError with a clear text."""
        try:
            return action()
        except (BotoCoreError, ClientError) as exc:
            message = describe_failure(exc, self._config)
            if is_transient(exc):
                raise RetriableError(message) from exc
            raise ConnectError(message) from exc

    def stop(self) -> None:
        uploader = getattr(self, "_uploader", None)
        if uploader is not None:
            uploader.close()  # batches not written yet are read again after a restart
            self._upload_process.close()
        with self._lock:
            for writer in self._writers.values():
                writer.discard()
            self._writers.clear()

    def details(self) -> dict[str, Any]:
        with self._lock:
            writers = list(self._writers.values())
        return {
            "objects_written": sum(w.objects_written for w in writers),
            "bytes_written": sum(w.bytes_written for w in writers),
            # epoch seconds at which S3 answered the first and the latest PUT (None: no object)
            "first_object_at": min(
                filter(None, (w.first_written_at for w in writers)), default=None
            ),
            "last_object_at": max(filter(None, (w.last_written_at for w in writers)), default=None),
            "partitions": {
                f"{w.tp.topic}-{w.tp.partition}": {
                    "committed_offset": w.committed_offset,
                    "buffered_records": w.buffered,
                }
                for w in writers
            },
        }
