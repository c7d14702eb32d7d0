"""What the broker's metrics cost: the same produce and consume with ``metrics.listeners``
off and on, in one run (issue 20; goal: under 3% apart).

Each round starts a fresh ``sluice broker`` process, metrics off or on
(alternating, off first), and runs ``bench.broker``'s librdkafka phases on it:
produce N 100-byte records (linger 5 ms, batch 1 MiB, acks=1), produce N/4
with ``linger.ms=0`` and ``batch.size=16384`` (many small requests: the
per-request cost of the metrics shows most there), consume the first N back.
While metrics are on, ``/metrics`` is scraped every second, as Prometheus
would, so the scrape's cost is counted too. Broker CPU per record (from
``/proc``) is the steadier figure on a shared machine; rates swing with the
load. The best of each kind over the rounds is kept; ``*_ratio`` is on/off
for rates and off/on for CPU (1.0: no cost; 0.97: 3% worse). A steadier
estimate beside them: the recorder's hot-path calls timed in this process
(``recorder_us_per_*_request``) times the requests the broker answered,
as a share of the broker's CPU in the same phases
(``recorder_share_of_broker_cpu``; the scrapes are not in it). And the
broker CPU one scrape costs (``broker_cpu_ms_per_scrape``, 50 scrapes of the
idle broker after an on round).

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from bench.broker import RECORD_BYTES, _create, librdkafka_consume, process_cpu_s
from harness.broker_process import BrokerProcess, free_port
from harness.prometheus import scrape

SCRAPE_INTERVAL_S = 1.0


def _produce(bootstrap: str, topic: str, count: int, config: dict[str, Any]) -> float:
    """Seconds to produce ``count`` 100-byte records and have them acknowledged."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": 1,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1 << 20,
            **config,
        }
    )
    payload = b"x" * RECORD_BYTES
    started = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, payload)
                break
            except BufferError:
                producer.poll(0.001)
    if producer.flush(120):
        raise RuntimeError("records not delivered")
    return time.perf_counter() - started


class _Scraper:
    """Scrapes ``url`` every second in a thread until stopped; counts the scrapes."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._stop = threading.Event()
        self.scrapes = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(SCRAPE_INTERVAL_S):
            scrape(self._url)
            self.scrapes += 1

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(timeout=30)
        return self.scrapes


def _scrape_cost_ms(pid: int, port: int, scrapes: int = 50) -> float:
    """Broker CPU ms per ``/metrics`` scrape, the broker otherwise idle."""
    url = f"http://127.0.0.1:{port}/metrics"
    cpu = process_cpu_s(pid)
    for _ in range(scrapes):
        scrape(url)
    return (process_cpu_s(pid) - cpu) / scrapes * 1000


def one_round(count: int, metrics: bool) -> dict[str, float]:
    small = count // 4
    with tempfile.TemporaryDirectory(prefix="sluice-bench-metrics-") as tmp:
        overrides: dict[str, Any] = {}
        port = free_port()
        if metrics:
            overrides["metrics.listeners"] = f"http://127.0.0.1:{port}"
        broker = BrokerProcess(Path(tmp) / "data", **overrides).start()
        assert broker.process is not None
        pid = broker.process.pid
        scraper = _Scraper(f"http://127.0.0.1:{port}/metrics") if metrics else None
        try:
            _create(broker.bootstrap, "big")
            _create(broker.bootstrap, "small")
            cpu = process_cpu_s(pid)
            produce_s = _produce(
                broker.bootstrap, "big", count, {"linger.ms": 5, "batch.size": 1 << 20}
            )
            produce_cpu = process_cpu_s(pid) - cpu
            cpu = process_cpu_s(pid)
            small_s = _produce(broker.bootstrap, "small", small, {"linger.ms": 0,
                                                                   "batch.size": 16384})
            small_cpu = process_cpu_s(pid) - cpu
            cpu = process_cpu_s(pid)
            consume_s = librdkafka_consume(broker.bootstrap, "big", count)
            consume_cpu = process_cpu_s(pid) - cpu
            scrapes = scraper.stop() if scraper else 0
            requests: dict[str, float] = {}
            if metrics:
                page = scrape(f"http://127.0.0.1:{port}/metrics")
                counted = page.value("kafka_server_brokertopicmetrics_messagesin_total")
                if counted != count + small:
                    raise RuntimeError(f"metrics counted {counted} of {count + small} records")
                total = "kafka_network_requestmetrics_requests_total"
                requests = {
                    "produce_requests": page.total(total, request="Produce"),
                    "fetch_requests": page.total(total, request="Fetch"),
                    "broker_cpu_ms_per_scrape": _scrape_cost_ms(pid, port),
                }
        finally:
            if scraper is not None:
                scraper.stop()
            broker.stop()
    return {
        "broker_cpu_s": produce_cpu + small_cpu + consume_cpu,
        "produce_records_s": count / produce_s,
        "small_requests_produce_records_s": small / small_s,
        "consume_records_s": count / consume_s,
        "broker_cpu_us_per_produced": produce_cpu / count * 1e6,
        "broker_cpu_us_per_small_request_produced": small_cpu / small * 1e6,
        "broker_cpu_us_per_consumed": consume_cpu / count * 1e6,
        "scrapes": scrapes,
        **requests,
    }


def recorder_us_per_request(rounds: int = 200_000) -> dict[str, float]:
    """CPU µs of the metrics' hot-path calls for one Produce and one Fetch request (in
    process; CPU time, as the broker's is measured, so other processes' load does not
    count)."""
    from log_engine.broker.metrics import BrokerMetrics
    from log_engine.file_slice import FileSlice
    from log_engine.protocol import ApiKey

    metrics = BrokerMetrics()
    answer = [{"error_code": 0, "base_offset": 0}]
    fetched = [{"topic": "t", "partitions": [{"error_code": 0, "records": [FileSlice(0, 0, 10)]}]}]
    produce_body: dict[str, Any] = {"acks": 1}
    fetch_body: dict[str, Any] = {"replica_id": -1}
    started = time.process_time()
    for _ in range(rounds):
        begun = time.perf_counter()
        metrics.appended("t", 1000, 100_000)
        metrics.produce_answered("t", answer)
        metrics.request_done(ApiKey.PRODUCE, 8, produce_body, time.perf_counter() - begun)
    produce_us = (time.process_time() - started) / rounds * 1e6
    started = time.process_time()
    for _ in range(rounds):
        begun = time.perf_counter()
        metrics.fetch_answered(fetched, False)
        metrics.request_done(ApiKey.FETCH, 11, fetch_body, time.perf_counter() - begun)
    fetch_us = (time.process_time() - started) / rounds * 1e6
    return {
        "recorder_us_per_produce_request": round(produce_us, 3),
        "recorder_us_per_fetch_request": round(fetch_us, 3),
    }


def run(count: int, rounds: int) -> dict[str, Any]:
    best: dict[str, dict[str, float]] = {"off": {}, "on": {}}
    for _ in range(rounds):
        for kind in ("off", "on"):
            result = one_round(count, metrics=kind == "on")
            for name, value in result.items():
                keep = min if name.startswith("broker_cpu") else max
                best[kind][name] = keep(best[kind].get(name, value), value)
    out: dict[str, Any] = {"records": count, "record_bytes": RECORD_BYTES, "rounds": rounds}
    for name in ("scrapes", "produce_requests", "fetch_requests", "broker_cpu_s"):
        out[f"on_round_{name}_max"] = best["on"].pop(name)
        best["off"].pop(name, None)
    out["broker_cpu_ms_per_scrape"] = round(best["on"].pop("broker_cpu_ms_per_scrape"), 2)
    for name in best["off"]:
        off, on = best["off"][name], best["on"][name]
        out[f"off_{name}"] = round(off, 3)
        out[f"on_{name}"] = round(on, 3)
        ratio = off / on if name.startswith("broker_cpu") else on / off
        out[f"{name}_ratio"] = round(ratio, 3)
    recorder = recorder_us_per_request()
    out.update(recorder)
    # the recorder's cost for the requests the broker answered, as a share of its CPU
    recorder_s = (
        out["on_round_produce_requests_max"] * recorder["recorder_us_per_produce_request"]
        + out["on_round_fetch_requests_max"] * recorder["recorder_us_per_fetch_request"]
    ) / 1e6
    out["recorder_share_of_broker_cpu"] = round(recorder_s / out["on_round_broker_cpu_s_max"], 4)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="100-byte records")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of off-then-on")
    parser.add_argument("--quick", action="store_true", help="200k records, 2 rounds")
    args = parser.parse_args()
    count, rounds = (200_000, 2) if args.quick else (args.records, args.rounds)
    print(json.dumps(run(count, rounds)))


if __name__ == "__main__":
    main()
