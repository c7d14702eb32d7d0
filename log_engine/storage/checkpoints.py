"""Kafka's text checkpoint files, written atomically.

Format (UTF-8 text, one item per line)::

    0                 <- format version
    2                 <- number of entries
    <entry>           <- one line per entry, fields separated by single spaces
    <entry>

Kafka uses it for ``recovery-point-offset-checkpoint``,
``log-start-offset-checkpoint`` and ``cleaner-offset-checkpoint`` at the log dir
root (entries ``<topic> <partition> <offset>``) and for the per-partition
``leader-epoch-checkpoint`` (entries ``<epoch> <start offset>``).

Invariant: a reader never sees a half-written file. A write goes to
``<name>.tmp``, is fsynced, renamed over the target, and the directory is
fsynced so the rename itself survives a crash. A failed temp write (a full
disk) removes the temp file and leaves the target untouched.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from log_engine.errors import KafkaStorageError

CHECKPOINT_VERSION = 0
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"

TopicPartition = tuple[str, int]


def fsync_directory(directory: Path) -> None:
    """fsync a directory so renames and new files in it are durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so a crash leaves the old or the new file, whole."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            data = text.encode()
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        tmp.unlink(missing_ok=True)  # e.g. ENOSPC: the good file stays, the space is freed
        raise
    os.replace(tmp, path)
    fsync_directory(path.parent)


def write_checkpoint(path: Path, entries: Iterable[Iterable[object]]) -> None:
    """Write entries (each a sequence of fields) in the checkpoint format."""
    lines = [" ".join(str(field) for field in entry) for entry in entries]
    write_atomically(path, "\n".join([str(CHECKPOINT_VERSION), str(len(lines)), *lines, ""]))


def read_checkpoint(path: Path, fields: int) -> list[list[str]]:
    """Read a checkpoint whose entries have ``fields`` fields; a missing file is empty.

    Raises KafkaStorageError when the version, count or an entry is malformed.
    """
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    if len(lines) < 2 or lines[0].strip() != str(CHECKPOINT_VERSION):
        raise KafkaStorageError(f"{path}: not a version {CHECKPOINT_VERSION} checkpoint file")
    try:
        count = int(lines[1])
    except ValueError:
        raise KafkaStorageError(f"{path}: bad entry count {lines[1]!r}") from None
    entries = [line.split() for line in lines[2:] if line.strip()]
    if count != len(entries):
        raise KafkaStorageError(f"{path}: header says {count} entries, found {len(entries)}")
    for entry in entries:
        if len(entry) != fields:
            raise KafkaStorageError(f"{path}: entry {' '.join(entry)!r} needs {fields} fields")
    return entries


def write_offsets(path: Path, offsets: dict[TopicPartition, int]) -> None:
    """Write a ``<topic> <partition> <offset>`` checkpoint (sorted for stable files)."""
    write_checkpoint(path, ((t, p, o) for (t, p), o in sorted(offsets.items())))


def read_offsets(path: Path) -> dict[TopicPartition, int]:
    """Read a ``<topic> <partition> <offset>`` checkpoint; a missing file is empty."""
    result: dict[TopicPartition, int] = {}
    for topic, partition, offset in read_checkpoint(path, 3):
        try:
            result[(topic, int(partition))] = int(offset)
        except ValueError:
            raise KafkaStorageError(f"{path}: bad entry {topic} {partition} {offset}") from None
    return result
