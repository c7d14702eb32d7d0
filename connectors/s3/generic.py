"""Generic mode: any objects under a prefix become records of one topic, as they appear.

Each object is its own source partition, so objects may appear in any key
order and each is read once::

    partition {"bucket": b, "key": <object key>}
    offset    {"line": <lines sent>, "done": <bool>}      (record.unit=line)
              {"done": true}                          (record.unit=object)

``record.unit=line``: a record per line, value the line as text (UTF-8,
undecodable bytes replaced, without the line end), key the object key.
``record.unit=object``: one record per object, value its bytes. The prefix
is listed again every ``s3.poll.interval.ms``. An object changed after it was
read is not read again; one that was half read when the task stopped resumes
at its next line. Delivery is at-least-once.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from connectors.api import SourceRecord
from connectors.api.schema import BYTES, STRING
from connectors.s3.task_share import TaskShare


class GenericReader:
    """Reads new objects under a prefix, a line or an object per record."""

    def __init__(self, share: TaskShare, prefix: str, topic: str, unit: str) -> None:
        self._share = share
        self._prefix = prefix
        self._topic = topic
        self._unit = unit
        self._seen: set[str] = set()
        self._queue: deque[tuple[str, int]] = deque()  # (key, lines already sent)
        self._lines: list[bytes] | None = None
        self.records_read = 0
        self.objects_read = 0

    def refresh(self) -> None:
        keys = sorted(e["Key"] for e in self._share.objects(self._prefix))
        for key in keys:
            if key in self._seen or key.endswith("/") or not self._share.owns(key):
                continue
            self._seen.add(key)
            stored = self._share.offset_of(self._partition(key))
            if stored and stored.get("done"):
                continue
            self._queue.append((key, int(stored.get("line", 0)) if stored else 0))

    def _partition(self, key: str) -> dict[str, Any]:
        return {"bucket": self._share.bucket, "key": key}

    def read(self, max_records: int) -> list[SourceRecord]:
        records: list[SourceRecord] = []
        while self._queue and len(records) < max_records:
            key, sent = self._queue[0]
            if self._unit == "object":
                records.append(self._whole(key))
                self._queue.popleft()
                self.objects_read += 1
                continue
            if self._lines is None:
                body = self._share.get(key)
                self._lines = body.splitlines()
            lines = self._lines[sent : sent + max_records - len(records)]
            total = len(self._lines)
            for i, line in enumerate(lines, start=sent + 1):
                records.append(
                    SourceRecord(
                        topic=self._topic,
                        key=key,
                        key_schema=STRING,
                        value=line.decode("utf-8", errors="replace"),
                        value_schema=STRING,
                        source_partition=self._partition(key),
                        source_offset={"line": i, "done": i == total},
                    )
                )
            sent += len(lines)
            if sent >= total:
                self._queue.popleft()
                self._lines = None
                self.objects_read += 1
            else:
                self._queue[0] = (key, sent)
        self.records_read += len(records)
        return records

    def _whole(self, key: str) -> SourceRecord:
        body = self._share.get(key)
        return SourceRecord(
            topic=self._topic,
            key=key,
            key_schema=STRING,
            value=body,
            value_schema=BYTES,
            source_partition=self._partition(key),
            source_offset={"done": True},
        )
