"""A file pipeline end to end: FileStreamSource -> log -> FileStreamSink.

Writes N lines of ~100 bytes, starts ``sluice standalone`` as a user would
(embedded broker, a pipelines folder holding one source and one sink file),
and times until the sink's output file holds every line. In the same run it
measures two baselines:

- ``broker_only_records_s``: our client producing the same lines to a fresh
  topic and consuming them back (the log's share of the pipeline);
- ``python_loop_records_s``: a plain Python loop reading the file, parsing
  each line and writing it to another file (the floor for any Python pipeline).

``worker_cpu_us_per_record`` is the CPU time (user + system, all threads) the
worker process spent from the start of the clock to the last line, per record:
unlike the rates it hardly depends on what else runs on the machine (Linux
only: read from ``/proc``; null elsewhere).

What metrics cost (``--metrics both``, the default): the pipeline runs
``--pairs`` times with metrics on (the worker's default, ``GET /metrics``
scraped every second as a Prometheus would, more often than its usual 15 s)
and as often with ``metrics.enabled=false``, alternating, each on a fresh
worker. The main numbers are the median run with metrics on;
``metrics_off_*`` the median with them off, and ``metrics_cost_cpu_pct`` the
difference in CPU per record (the steadier of the two measures on a shared
machine). ``--metrics on`` or ``off`` runs one kind only.

Prints one JSON line. ``--quick`` runs in under a minute.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from harness.broker_process import free_port

LINE = "x" * 90
_TIMEOUT_S = 600.0


def write_input(path: Path, count: int) -> None:
    with open(path, "w") as out:
        for i in range(count):
            out.write(f"{i:09d} {LINE}\n")


class LineCounter:
    """Counts the lines of a growing file, reading only what was added since the last call.

    Re-reading the whole output every 0.2 s took a quarter of a core by the end of
    the 1M run, on a 2-core machine where the pipeline itself wants more than one.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.position = 0
        self.lines = 0

    def __call__(self) -> int:
        if not self.path.exists():
            return 0
        with open(self.path, "rb") as data:
            data.seek(self.position)
            for chunk in iter(lambda: data.read(1 << 20), b""):
                self.lines += chunk.count(b"\n")
                self.position += len(chunk)
        return self.lines


def python_loop(source: Path, target: Path) -> float:
    started = time.perf_counter()
    with open(source) as lines, open(target, "w") as out:
        for line in lines:
            number, _, payload = line.rstrip("\n").partition(" ")
            out.write(f"{int(number):09d} {payload}\n")
    return time.perf_counter() - started


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used, or None without ``/proc``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Scraper:
    """Scrapes ``GET /metrics`` every ``interval_s`` on a thread, as Prometheus would."""

    def __init__(self, url: str, interval_s: float = 1.0) -> None:
        self._url = url
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="scraper", daemon=True)
        self.scrapes = 0
        self.last = ""

    def _run(self) -> None:
        with httpx.Client(timeout=10) as http:
            while not self._stop.wait(self._interval_s):
                try:
                    response = http.get(self._url)
                except httpx.HTTPError:
                    continue
                if response.status_code == 200:
                    self.scrapes += 1
                    self.last = response.text

    def __enter__(self) -> Scraper:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(15)


def pipeline(
    workdir: Path, source: Path, count: int, *, metrics: bool = True
) -> dict[str, float]:
    pipelines = workdir / "pipelines"
    pipelines.mkdir()
    output = workdir / "out.txt"
    broker_port, rest_port = free_port(), free_port()
    worker = workdir / "worker.properties"
    worker.write_text(
        f"embedded.broker.listeners=PLAINTEXT://127.0.0.1:{broker_port}\n"
        f"embedded.broker.log.dirs={workdir / 'log'}\n"
        f"listeners=http://127.0.0.1:{rest_port}\n"
        f"pipelines.dir={pipelines}\n"
        f"offset.storage.file.filename={workdir / 'offsets'}\n"
        f"connector.configs.file={workdir / 'connectors.json'}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"metrics.enabled={'true' if metrics else 'false'}\n"
    )
    log = open(workdir / "standalone.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "connect_worker.cli",
            "--log-level",
            "warning",
            "standalone",
            str(worker),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        time.sleep(2)  # let the worker come up before the clock starts
        started = time.perf_counter()
        cpu_started = process_cpu_s(process.pid)
        (pipelines / "bench-sink.properties").write_text(
            f"connector.class=FileStreamSink\ntopics=bench\nfile={output}\n"
        )
        (pipelines / "bench-source.properties").write_text(
            f"connector.class=FileStreamSource\ntopic=bench\nfile={source}\nbatch.size=5000\n"
        )
        count_lines = LineCounter(output)
        scraper = Scraper(f"http://127.0.0.1:{rest_port}/metrics")
        with scraper if metrics else contextlib.nullcontext():
            while (done := count_lines()) < count:
                if process.poll() is not None or time.perf_counter() - started > _TIMEOUT_S:
                    raise RuntimeError(f"pipeline stopped at {done}/{count} lines; see {log.name}")
                time.sleep(0.2)
            elapsed = time.perf_counter() - started
            cpu_ended = process_cpu_s(process.pid)
    finally:
        process.terminate()
        process.wait(60)
        log.close()
    cpu_us = -1.0  # unknown
    if cpu_started is not None and cpu_ended is not None:
        cpu_us = (cpu_ended - cpu_started) / count * 1e6
    return {
        "end_to_end_records_s": count / elapsed,
        "end_to_end_s": elapsed,
        "cpu_us": cpu_us,
        "scrapes": float(scraper.scrapes),
    }


def broker_only(workdir: Path, source: Path, count: int) -> float:
    from harness.broker_process import BrokerProcess
    from log_engine.client import SyncConsumer, SyncProducer, TopicPartition

    broker = BrokerProcess(workdir / "broker-only").start()
    try:
        lines = source.read_bytes().splitlines()
        started = time.perf_counter()
        producer = SyncProducer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})
        for line in lines:
            producer.send("only", line)
        producer.flush(120)
        producer.close()
        consumer = SyncConsumer({"bootstrap.servers": broker.bootstrap})
        tp = TopicPartition("only", 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        received = 0
        while received < count:
            received += len(consumer.poll(1.0))
            if time.perf_counter() - started > _TIMEOUT_S:
                raise RuntimeError(f"broker-only consumer read {received}/{count}")
        consumer.close()
        return count / (time.perf_counter() - started)
    finally:
        broker.stop()


def _median_run(runs: list[dict[str, float]]) -> dict[str, float]:
    """The run with the median rate (its own CPU figure, not a mix of runs)."""
    ordered = sorted(runs, key=lambda r: r["end_to_end_records_s"])
    return ordered[(len(ordered) - 1) // 2]


def run(count: int, metrics: str = "both", pairs: int = 2) -> dict[str, Any]:
    kinds = {"both": [True, False], "on": [True], "off": [False]}[metrics]
    with tempfile.TemporaryDirectory(prefix="sluice-pipeline-") as tmp:
        workdir = Path(tmp)
        source = workdir / "input.txt"
        write_input(source, count)
        loop_s = python_loop(source, workdir / "loop-out.txt")
        runs: dict[bool, list[dict[str, float]]] = {True: [], False: []}
        for index in range(pairs):
            order = kinds if index % 2 == 0 else list(reversed(kinds))
            for on in order:
                run_dir = workdir / f"run-{index}-{'on' if on else 'off'}"
                run_dir.mkdir()
                runs[on].append(pipeline(run_dir, source, count, metrics=on))
        only = broker_only(workdir, source, count)
        line_bytes = os.path.getsize(source) / count
    main = _median_run(runs[kinds[0]])
    result: dict[str, Any] = {
        "records": count,
        "line_bytes": round(line_bytes),
        "metrics": "on" if kinds[0] else "off",
        "end_to_end_records_s": round(main["end_to_end_records_s"]),
        "end_to_end_s": round(main["end_to_end_s"], 2),
        "worker_cpu_us_per_record": _cpu(main),
    }
    if metrics == "both":
        off = _median_run(runs[False])
        on_cpu = statistics.median(r["cpu_us"] for r in runs[True])
        off_cpu = statistics.median(r["cpu_us"] for r in runs[False])
        result.update(
            metrics_off_end_to_end_records_s=round(off["end_to_end_records_s"]),
            metrics_off_worker_cpu_us_per_record=_cpu(off),
            metrics_cost_cpu_pct=(
                round((on_cpu - off_cpu) / off_cpu * 100, 1)
                if on_cpu >= 0 and off_cpu > 0
                else None
            ),
            metrics_cost_rate_pct=round(
                (off["end_to_end_records_s"] - main["end_to_end_records_s"])
                / off["end_to_end_records_s"] * 100, 1,
            ),
            runs_each=pairs,
            scrapes_per_run=round(statistics.median(r["scrapes"] for r in runs[True])),
        )
    result.update(
        broker_only_records_s=round(only),
        python_loop_records_s=round(count / loop_s),
    )
    return result


def _cpu(run: dict[str, float]) -> float | None:
    return round(run["cpu_us"], 2) if run["cpu_us"] >= 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200k lines instead of 1M")
    parser.add_argument("--records", type=int, default=None)
    parser.add_argument(
        "--metrics", choices=["both", "on", "off"], default="both",
        help="run with metrics on and off (both, alternating), or one kind only",
    )
    parser.add_argument(
        "--pairs", type=int, default=2, help="runs of each kind (default 2)"
    )
    args = parser.parse_args()
    count = args.records or (200_000 if args.quick else 1_000_000)
    print(json.dumps(run(count, args.metrics, max(1, args.pairs))))


if __name__ == "__main__":
    main()
