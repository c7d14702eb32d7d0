"""FileStreamSink: append each record's value to a file, one line per record.

Kafka's FileStreamSinkConnector with the same keys (``file``; ``topics`` or
``topics.regex`` as every sink). A value is written as Kafka's does,
``println(value)``: text as is, ``bytes`` decoded as UTF-8, None as ``null``,
anything else as ``str(value)``. ``put`` hands a whole batch to the OS with one
``write``, so readers of the file see its lines as soon as ``put`` returns
(not only when a buffer fills or at the next flush); ``flush`` (before the
runtime commits offsets) makes them durable with ``fsync``, so a committed
offset never points past lines that could be lost.
Delivery is at-least-once: after a crash, lines written after the last commit
are written again.

The task's status ``details``: ``file`` (absolute path) and ``lines_written``
(since the task started); its metric (``GET /metrics``):
``sluice_plugin_file_lines_written_total``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from connectors.api import SinkConnector, SinkRecord, SinkTask, TopicPartition
from connectors.api.metrics import NO_METRICS, Counter
from connectors.file.config import FileSinkConfig

log = logging.getLogger(__name__)


class FileStreamSinkConnector(SinkConnector):
    """Appends the records of its topics to one file."""

    config_model = FileSinkConfig
    aliases = (
        "FileStreamSink",
        "FileStreamSinkConnector",
        "org.apache.kafka.connect.file.FileStreamSinkConnector",
    )

    def __init__(self) -> None:
        super().__init__()
        self._props: dict[str, str] = {}

    def start(self, props: Mapping[str, str]) -> None:
        FileSinkConfig.from_props(props)
        self._props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def check(self, props: Mapping[str, str]) -> list[str]:
        path = Path(FileSinkConfig.from_props(props).file).absolute()
        if path.exists():
            if not path.is_file():
                return [f"file: {path} is not a regular file"]
            if not os.access(path, os.W_OK):
                return [f"file: {path} is not writable"]
            return []
        # The task creates missing directories, so check the nearest existing ancestor.
        ancestor = path.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            return [f"file: {ancestor} is not a directory"]
        if not os.access(ancestor, os.W_OK | os.X_OK):
            return [f"file: directory {ancestor} is not writable"]
        return []


class FileStreamSinkTask(SinkTask):
    """Writes lines; durable on ``flush``."""

    def __init__(self) -> None:
        super().__init__()
        self._file: BinaryIO | None = None
        self._path: Path | None = None
        self._lines_written = 0
        self._lines_written_metric: Counter = NO_METRICS.counter("file_lines_written", "")

    def start(self, props: Mapping[str, str]) -> None:
        path = Path(FileSinkConfig.from_props(props).file)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._file = open(path, "ab")  # noqa: SIM115 - closed in stop()
        self._lines_written_metric = self.metrics.counter(
            "file_lines_written", "Lines written to the file"
        )

    def put(self, records: Sequence[SinkRecord]) -> None:
        if not records:
            return
        assert self._file is not None, "put() before start()"
        values = [record.value for record in records]
        values.append("")
        try:
            text = "\n".join(values)  # all text: the common case, one join
        except TypeError:
            text = self._lines(records)
        self._file.write(text.encode("utf-8", errors="surrogateescape"))
        self._file.flush()  # one write(2) per batch: visible now, durable at flush()
        self._lines_written += len(records)
        self._lines_written_metric.inc(len(records))

    @staticmethod
    def _lines(records: Sequence[SinkRecord]) -> str:
        """The batch as text, each value written as Kafka's ``println`` would."""
        lines = []
        for record in records:
            value = record.value
            if type(value) is str:
                lines.append(value)
            elif value is None:
                lines.append("null")
            elif isinstance(value, bytes | bytearray | memoryview):
                lines.append(bytes(value).decode("utf-8", errors="replace"))
            else:
                lines.append(str(value))
        lines.append("")
        return "\n".join(lines)

    def details(self) -> dict[str, Any]:
        file = str(self._path.absolute()) if self._path is not None else None
        return {"file": file, "lines_written": self._lines_written}

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())

    def stop(self) -> None:
        if self._file is not None:
            try:
                self._file.flush()
            finally:
                self._file.close()
                self._file = None
