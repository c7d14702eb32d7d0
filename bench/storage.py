"""Storage benchmark: PartitionLog append/read against plain file write/read of the same bytes.

Run ``python -m bench.storage`` (1 GiB) or ``python -m bench.storage --quick``.

1. Pre-build a few RecordBatch v2 batches (``--records-per-batch`` records of
   ``--record-bytes`` value bytes each), outside every timed section.
2. Append them to one partition log in a temp dir until ``--bytes`` are
   written; fsync once at the end (``flush()``), inside the timing.
3. Read everything back with ``read()`` in ``--read-chunk-bytes`` chunks,
   reading the bytes of each returned slice (``FileSlice.read``: ``os.pread``).
4. Write the same batch bytes to a plain file with ``os.write`` (one call per
   batch, like one append per batch), fsync once at the end; read it back
   with ``os.pread`` in the same chunk size.

Each round uses a fresh temp dir; rounds alternate which side writes and
reads first (writeback of one phase can slow the next) and the medians are
reported.
Prints one JSON line with throughputs, the log/file ratios and the parameters.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from log_engine.records import Record, build_batch
from log_engine.storage import LogConfig, PartitionLog

_MIB = 1 << 20


def _batches(count: int, records: int, record_bytes: int) -> list[bytes]:
    now = int(time.time() * 1000)
    return [
        build_batch(
            [
                Record(b"key-%d" % i, bytes([(b + i) % 256]) * record_bytes, timestamp=now)
                for i in range(records)
            ]
        )
        for b in range(count)
    ]


def _append(log: PartitionLog, batches: list[bytes], total_bytes: int) -> tuple[float, int]:
    written = appended = 0
    start = time.perf_counter()
    while written < total_bytes:
        batch = batches[appended % len(batches)]
        log.append(batch)
        written += len(batch)
        appended += 1
    log.flush()
    return time.perf_counter() - start, appended


def _read_log(log: PartitionLog, chunk_bytes: int) -> tuple[float, int]:
    offset = total = 0
    start = time.perf_counter()
    end = log.log_end_offset
    while offset < end:
        result = log.read(offset, chunk_bytes)
        for piece in result.slices:
            total += len(piece.read())
        offset = result.next_offset
    return time.perf_counter() - start, total


def _write_file(path: Path, batches: list[bytes], count: int) -> float:
    start = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for i in range(count):
            os.write(fd, batches[i % len(batches)])
        os.fsync(fd)
    finally:
        os.close(fd)
    return time.perf_counter() - start


def _read_file(path: Path, chunk_bytes: int) -> tuple[float, int]:
    total = 0
    start = time.perf_counter()
    fd = os.open(path, os.O_RDONLY)
    try:
        while True:
            data = os.pread(fd, chunk_bytes, total)
            if not data:
                break
            total += len(data)
    finally:
        os.close(fd)
    return time.perf_counter() - start, total


def _one_round(args: argparse.Namespace, batches: list[bytes], log_first: bool) -> dict[str, float]:
    """One write/write/read/read round in a fresh temp dir; seconds per phase.

    ``log_first`` decides which side goes first in both the write and the read phase.
    """
    config = LogConfig.from_properties({"flush.ms": str(10**9)})
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        file_path = Path(tmp) / "plain.bin"
        log = PartitionLog.open(Path(tmp) / "bench-0", config)
        if not log_first:
            count = -(-args.bytes // len(batches[0]))
            file_write_s = _write_file(file_path, batches, count)
        append_s, appended = _append(log, batches, args.bytes)
        if log_first:
            file_write_s = _write_file(file_path, batches, appended)
        size = log.size_bytes
        if log_first:
            read_s, read_bytes = _read_log(log, args.read_chunk_bytes)
        file_read_s, file_bytes = _read_file(file_path, args.read_chunk_bytes)
        if not log_first:
            read_s, read_bytes = _read_log(log, args.read_chunk_bytes)
        log.close()
    if read_bytes != size or file_bytes != size:
        raise SystemExit(f"read {read_bytes} / {file_bytes} bytes, wrote {size}")
    return {
        "append_s": append_s,
        "file_write_s": file_write_s,
        "read_s": read_s,
        "file_read_s": file_read_s,
        "bytes": size,
        "batches": appended,
    }


def run(args: argparse.Namespace) -> dict[str, object]:
    """Repeat rounds (alternating which side writes first) and report the medians."""
    batches = _batches(8, args.records_per_batch, args.record_bytes)
    rounds = [_one_round(args, batches, log_first=i % 2 == 0) for i in range(args.repeat)]
    t = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    size, appended = int(rounds[0]["bytes"]), int(rounds[0]["batches"])
    records = appended * args.records_per_batch
    mb = size / _MIB
    return {
        "append_mb_s": round(mb / t["append_s"], 1),
        "append_records_s": round(records / t["append_s"]),
        "read_mb_s": round(mb / t["read_s"], 1),
        "read_records_s": round(records / t["read_s"]),
        "file_write_mb_s": round(mb / t["file_write_s"], 1),
        "file_read_mb_s": round(mb / t["file_read_s"], 1),
        "append_ratio": round(t["file_write_s"] / t["append_s"], 3),
        "read_ratio": round(t["file_read_s"] / t["read_s"], 3),
        "bytes": size,
        "records": records,
        "batches": appended,
        "records_per_batch": args.records_per_batch,
        "record_bytes": args.record_bytes,
        "read_chunk_bytes": args.read_chunk_bytes,
        "repeat": args.repeat,
        "fsync": "once at the end of each write phase, timed, for both",
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="write 256 MiB instead of 1 GiB")
    parser.add_argument("--bytes", type=int, default=None, help="bytes to append")
    parser.add_argument("--records-per-batch", type=int, default=1000)
    parser.add_argument("--record-bytes", type=int, default=100)
    parser.add_argument("--read-chunk-bytes", type=int, default=4 * _MIB)
    parser.add_argument("--repeat", type=int, default=3, help="rounds; medians are reported")
    parser.add_argument("--dir", default=None, help="where to create the temp dir")
    args = parser.parse_args(argv)
    if args.bytes is None:
        args.bytes = 256 * _MIB if args.quick else 1024 * _MIB
    print(json.dumps(run(args)))


if __name__ == "__main__":
    main()
