"""Shared builders for the storage tests: batches, logs and small configs."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from log_engine.records import Compression, Record, build_batch, decode_batch, iter_batches
from log_engine.storage import LogConfig, PartitionLog

BASE_TS = 1_700_000_000_000  # realistic timestamps: segment.ms compares them with the clock


class Clock:
    """A settable millisecond clock for logs under test."""

    def __init__(self, now_ms: int = BASE_TS) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, delta_ms: int) -> None:
        self.now_ms += delta_ms


def config(**overrides: str | int) -> LogConfig:
    """A LogConfig from Kafka-named overrides (values stringified)."""
    return LogConfig.from_properties({k: str(v) for k, v in overrides.items()})


def batch(
    count: int = 1,
    *,
    value_size: int = 50,
    key: bytes | None = b"k",
    timestamp: int = BASE_TS,
    compression: Compression = Compression.NONE,
) -> bytes:
    """A producer batch of ``count`` records (base offset 0)."""
    records = [
        Record(key, bytes([i % 256]) * value_size, timestamp=timestamp) for i in range(count)
    ]
    return build_batch(records, compression=compression)


def keyed_batch(items: Iterable[tuple[bytes, bytes | None]], timestamp: int = BASE_TS) -> bytes:
    return build_batch([Record(k, v, timestamp=timestamp) for k, v in items])


def open_log(
    directory: Path, cfg: LogConfig | None = None, clock: Clock | None = None, **kwargs: object
) -> PartitionLog:
    return PartitionLog.open(
        directory / "topic-0",
        cfg or config(),
        now_ms=clock or Clock(),
        **kwargs,  # type: ignore[arg-type]
    )


def all_records(log: PartitionLog, start: int | None = None) -> list[Record]:
    """Every record readable from ``start`` (default: log start), decoded."""
    offset = log.log_start_offset if start is None else start
    data = log.read(offset, 1 << 30).read_bytes() if offset < log.log_end_offset else b""
    records: list[Record] = []
    for pos, _ in iter_batches(data):
        records.extend(decode_batch(data, pos)[1])
    return records


def batch_offsets(data: bytes) -> list[int]:
    return [header.base_offset for _, header in iter_batches(data)]
