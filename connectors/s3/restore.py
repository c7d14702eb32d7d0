"""Restore mode: read the S3 sink's objects back into their topics and partitions, in order.

Each Kafka partition found under ``topics.dir`` is a stream of objects sorted
by start offset. Records go to the topic and partition named by the object
(``orders+2+0000000100.json`` -> topic ``orders``, partition 2), in object
order and record order. Source offsets::

    partition {"bucket": b, "topic": t, "partition": p}
    offset    {"start": <object start offset>, "index": <records of it sent>}

so a restart resumes inside the object it stopped in. The bucket is listed
again every ``s3.poll.interval.ms``: objects the sink writes later are read
too. Order within a partition is exact with the default partitioner; with
field or time-based paths the objects of one batch are read one after the
other (the record order across them is not kept in the objects).
Keys, headers and timestamps are not in the objects (Confluent's sink writes
values only): restored records carry the value alone.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from connectors.api import SourceRecord
from connectors.api.schema import BYTES
from connectors.s3.formats import ObjectFormat
from connectors.s3.naming import ObjectName, parse_key
from connectors.s3.task_share import TaskShare


@dataclass(slots=True)
class _Stream:
    topic: str
    partition: int
    next_start: int = -1  # objects starting before this are done
    skip: int = 0  # records of the object at next_start already sent
    queue: deque[ObjectName] = field(default_factory=deque)
    values: list[Any] | None = None  # the decoded values of queue[0], once read


class RestoreReader:
    """Turns the sink's objects into SourceRecords, partition by partition."""

    def __init__(
        self, share: TaskShare, topics_dir: str, topics: list[str], fmt: ObjectFormat
    ) -> None:
        self._share = share
        self._topics_dir = topics_dir
        self._topics = topics
        self._format = fmt
        self._streams: dict[tuple[str, int], _Stream] = {}
        self._queued: set[str] = set()
        self.records_read = 0
        self.objects_read = 0

    def _prefixes(self) -> list[str]:
        if self._topics:
            return [f"{self._topics_dir}/{t}/" for t in self._topics]
        return [f"{self._topics_dir}/"]

    def refresh(self) -> None:
        """List the bucket; queue the objects not read yet."""
        found: list[ObjectName] = []
        for prefix in self._prefixes():
            for entry in self._share.objects(prefix):
                name = parse_key(entry["Key"])
                if name is not None and name.extension == self._format.extension:
                    found.append(name)
        found.sort(key=lambda n: (n.topic, n.partition, n.start_offset, n.key))
        for name in found:
            if name.key in self._queued:
                continue
            stream = self._stream(name.topic, name.partition)
            if stream is None or name.start_offset < stream.next_start:
                continue
            stream.queue.append(name)
            self._queued.add(name.key)

    def _stream(self, topic: str, partition: int) -> _Stream | None:
        key = (topic, partition)
        stream = self._streams.get(key)
        if stream is None:
            if not self._share.owns(f"{topic}-{partition}"):
                return None
            stream = _Stream(topic, partition)
            stored = self._share.offset_of(self._source_partition(topic, partition))
            if stored:
                stream.next_start = int(stored["start"])
                stream.skip = int(stored["index"])
            self._streams[key] = stream
        return stream

    def _source_partition(self, topic: str, partition: int) -> dict[str, Any]:
        return {"bucket": self._share.bucket, "topic": topic, "partition": partition}

    def read(self, max_records: int) -> list[SourceRecord]:
        """Up to ``max_records`` records: the next object of each stream in turn."""
        records: list[SourceRecord] = []
        for stream in self._streams.values():
            while stream.queue and len(records) < max_records:
                records.extend(self._read_object(stream, max_records - len(records)))
        return records

    def _read_object(self, stream: _Stream, limit: int) -> list[SourceRecord]:
        name = stream.queue[0]
        if stream.values is None:
            body = self._share.get(name.key)
            try:
                stream.values = self._format.decode(body)
            except ValueError as exc:
                raise ValueError(f"object {name.key}: {exc}") from exc
        values = stream.values
        skip = stream.skip if name.start_offset == stream.next_start else 0
        chosen = values[skip : skip + limit]
        schema = BYTES if self._format.name == "bytearray" else None
        partition = self._source_partition(stream.topic, stream.partition)
        records = [
            SourceRecord(
                topic=stream.topic,
                partition=stream.partition,
                value=value,
                value_schema=schema,
                source_partition=partition,
                source_offset={"start": name.start_offset, "index": skip + i + 1},
            )
            for i, value in enumerate(chosen)
        ]
        done = skip + len(chosen)
        if done >= len(values):
            stream.queue.popleft()
            stream.values = None
            stream.next_start = name.start_offset + 1
            stream.skip = 0
            self.objects_read += 1
        else:
            stream.next_start, stream.skip = name.start_offset, done
        self.records_read += len(records)
        return records
