"""FileStreamSource: each line of a text file becomes one record, as it is written.

Kafka's FileStreamSourceConnector with the same keys (``file``, ``topic``,
``batch.size``) and offsets (partition ``{"filename": <absolute path>}``,
offset ``{"position": <byte offset just after the line>}``), so a restart
resumes after the last acknowledged line: nothing lost, nothing doubled.

Records: value = the line (UTF-8, without ``\\n`` or ``\\r\\n``; undecodable
bytes replaced), value schema STRING, key None.

The task follows the file like ``tail -F``:

- growth: new complete lines are read in large chunks, up to ``batch.size``
  per poll; a last line without its newline waits until it is completed;
- truncation (the file got shorter than what was read): start again at 0,
  with a warning;
- rotation (the path now names another file, e.g. ``app.log`` renamed and
  recreated): the old file is read to its end, then the new one from 0;
- a missing file is waited for (logged once), not an error.

``poll()`` returns ``[]`` after about 250 ms without new lines, checking every
50 ms, so an idle task neither spins nor delays new lines by much.

The task's status ``details``: ``file`` (absolute path), ``position`` (the byte
offset after the last line handed to the worker: what a restart resumes from
once it is committed), ``lines_read`` (since the task started) and, while the
file does not exist, ``"waiting": true``. Its metric (``GET /metrics``):
``sluice_plugin_file_lines_read_total``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping
from itertools import accumulate, islice, repeat
from operator import add
from pathlib import Path
from typing import Any, BinaryIO

from connectors.api import SourceConnector, SourceRecord, SourceTask
from connectors.api.metrics import NO_METRICS, Counter
from connectors.api.schema import STRING
from connectors.file.config import FileSourceConfig

log = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 20
IDLE_POLL_MS = 250
RECHECK_MS = 50


class FileStreamSourceConnector(SourceConnector):
    """Reads one text file, line by line, into one topic (one task)."""

    config_model = FileSourceConfig
    aliases = (
        "FileStreamSource",
        "FileStreamSourceConnector",
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
    )

    def __init__(self) -> None:
        super().__init__()
        self._config: FileSourceConfig | None = None

    def start(self, props: Mapping[str, str]) -> None:
        self._config = FileSourceConfig.from_props(props)

    @classmethod
    def task_class(cls) -> type:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        assert self._config is not None, "task_configs() before start()"
        config = self._config
        return [{"file": config.file, "topic": config.topic, "batch.size": str(config.batch_size)}]

    def check(self, props: Mapping[str, str]) -> list[str]:
        path = Path(FileSourceConfig.from_props(props).file)
        if path.exists():
            if not path.is_file():
                return [f"file: {path} is not a regular file"]
            if not os.access(path, os.R_OK):
                return [f"file: {path} is not readable"]
            return []
        if not path.absolute().parent.is_dir():
            return [f"file: neither {path} nor its directory exists"]
        return []


class FileStreamSourceTask(SourceTask):
    """Follows one file; see the module docstring for growth, truncation and rotation."""

    def __init__(self) -> None:
        super().__init__()
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # poll's reads vs stop's close
        self._file: BinaryIO | None = None
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the open file
        self._position = 0  # byte offset after the last line returned
        self._read_end = 0  # byte offset after the last byte read (>= position)
        self._pending = b""  # bytes read after the last newline
        self._lines: list[str] = []  # complete lines read, not yet returned
        self._next = 0  # index in _lines of the next line to return
        self._ascii = True  # whether _lines came from ASCII bytes (len == byte length)
        self._has_cr = False  # whether some line of _lines ends with \r (CRLF)
        self._byte_lengths: list[int] = []  # per line of _lines when not ASCII
        self._missing_logged = False
        self._path = ""
        self._lines_read = 0  # lines handed to the worker since start()
        self._lines_read_metric: Counter = NO_METRICS.counter("file_lines_read", "")

    def start(self, props: Mapping[str, str]) -> None:
        config = FileSourceConfig.from_props(props)
        self._topic = config.topic
        self._batch_size = config.batch_size
        self._path = os.path.abspath(config.file)
        self._partition: dict[str, Any] = {"filename": self._path}
        self._position = self._stored_position(config.file)
        self._read_end = self._position
        self._lines_read_metric = self.metrics.counter(
            "file_lines_read", "Lines read from the file and handed to the worker"
        )

    def _stored_position(self, configured: str) -> int:
        if self.context is None:
            return 0
        reader = self.context.offset_reader
        for name in dict.fromkeys((self._path, configured)):  # ours, then as Kafka stored it
            offset = reader.offset({"filename": name})
            if offset and isinstance(offset.get("position"), int):
                return max(0, int(offset["position"]))
        return 0

    def poll(self) -> list[SourceRecord]:
        deadline = time.monotonic() + IDLE_POLL_MS / 1000
        while not self._stopping.is_set():
            with self._lock:
                if self._stopping.is_set():
                    break
                records = self._poll_once()
            if records or time.monotonic() >= deadline:
                return records
            self._stopping.wait(RECHECK_MS / 1000)
        return []

    def _poll_once(self) -> list[SourceRecord]:
        if self._next < len(self._lines):
            return self._take()
        if self._file is None and not self._open():
            return []
        if self._read_chunk():
            return self._take()
        self._follow()
        return []

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            self._close()

    def details(self) -> dict[str, Any]:
        details: dict[str, Any] = {
            "file": self._path, "position": self._position, "lines_read": self._lines_read
        }
        if self._missing_logged:
            details["waiting"] = True  # for the file to exist
        return details

    # ---------------------------------------------------------------- reading

    def _open(self) -> bool:
        try:
            handle = open(self._path, "rb", buffering=0)  # noqa: SIM115 - kept open across polls
        except FileNotFoundError:
            if not self._missing_logged:
                log.warning("%s does not exist (yet); waiting for it", self._path)
                self._missing_logged = True
            return False
        except OSError as exc:
            log.warning("cannot open %s: %s; retrying", self._path, exc)
            return False
        stat = os.fstat(handle.fileno())
        if stat.st_size < self._position:
            log.warning(
                "%s is shorter (%d bytes) than the stored position %d: reading from the start",
                self._path, stat.st_size, self._position,
            )
            self._position = 0
        handle.seek(self._position)
        self._file = handle
        self._identity = (stat.st_dev, stat.st_ino)
        self._read_end = self._position
        self._pending = b""
        self._missing_logged = False
        log.info("reading %s from byte %d", self._path, self._position)
        return True

    def _read_chunk(self) -> bool:
        """Read up to CHUNK_BYTES; True when complete lines became available."""
        assert self._file is not None
        data = self._file.read(CHUNK_BYTES)
        if not data:
            return False
        self._read_end += len(data)
        end = data.rfind(b"\n")
        if end < 0:
            self._pending += data
            return False
        complete = self._pending + data[: end + 1] if self._pending else data[: end + 1]
        self._pending = data[end + 1 :]
        self._ascii = complete.isascii()
        self._has_cr = b"\r" in complete
        text = complete.decode("utf-8", errors="replace") if not self._ascii else complete.decode()
        lines = text.split("\n")
        lines.pop()  # after the last newline: empty
        if not self._ascii:  # keep exact byte lengths: re-split the bytes
            self._byte_lengths = [len(line) for line in complete.split(b"\n")[:-1]]
        self._lines = lines
        self._next = 0
        log.debug("read %d bytes of %s: %d complete lines", len(data), self._path, len(lines))
        return True

    def _take(self) -> list[SourceRecord]:
        """Turn up to batch.size read lines into records, advancing the position."""
        start = self._next
        end = min(start + self._batch_size, len(self._lines))
        lines = self._lines[start:end]
        sizes = map(len, lines) if self._ascii else iter(self._byte_lengths[start:end])
        # Each line's offset: the byte just after its newline (a running sum, in C).
        positions = list(accumulate(map(add, sizes, repeat(1)), initial=self._position))
        if self._has_cr:
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        topic, partition = self._topic, self._partition
        records = [
            SourceRecord(
                topic=topic,
                value=line,
                value_schema=STRING,
                source_partition=partition,
                source_offset={"position": position},
            )
            for line, position in zip(lines, islice(positions, 1, None), strict=True)
        ]
        self._next = end
        self._position = positions[-1]
        self._lines_read += len(records)
        self._lines_read_metric.inc(len(records))
        if end == len(self._lines):
            self._lines, self._next = [], 0
        return records

    def _follow(self) -> None:
        """At the end of the data: notice truncation and rotation."""
        assert self._file is not None and self._identity is not None
        if os.fstat(self._file.fileno()).st_size < self._read_end:
            log.warning("%s was truncated: reading it again from the start", self._path)
            self._reset_to(0)
            return
        try:
            stat = os.stat(self._path)
        except FileNotFoundError:
            return  # moved away and not recreated yet: keep following the old one
        if (stat.st_dev, stat.st_ino) != self._identity:
            log.info("%s was rotated: reading the new file from the start", self._path)
            self._close()
            self._position = 0
            self._open()

    def _reset_to(self, position: int) -> None:
        assert self._file is not None
        self._file.seek(position)
        self._position = self._read_end = position
        self._pending = b""
        self._lines, self._next = [], 0

    def _close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            self._identity = None
