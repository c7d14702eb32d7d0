"""Broker throughput with librdkafka (confluent-kafka) and with our own client.

Starts ``sluice broker`` in its own process on a temporary data directory, then:

1. librdkafka produces N records of 100 bytes (linger 5 ms, batch 1 MiB, acks=1)
   and a librdkafka consumer reads them back; the broker process's CPU time
   during the produce, per record (``broker_cpu_us_per_record``);
2. the same produce with ``compression.type=lz4`` and 100-byte values that
   compress about 2:1 (``lz4_*``): the broker decompresses each batch to check
   its records;
3. librdkafka produces 1 KB records (MB/s);
4. our client (``log_engine.client``) produces and consumes 100-byte records;
5. in-process baselines from the same run: the storage layer's raw append rate
   for the same 100-byte batches (the ceiling the broker is measured against),
   and the per-record structural check alone (``record_check_us_per_record``,
   the C extension; ``record_check_py_us_per_record``, its pure-Python
   fallback).

Prints one JSON line. ``--quick`` runs in under a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness.broker_process import BrokerProcess

RECORD_BYTES = 100
_PHASE_TIMEOUT_S = 120.0  # every loop is bounded: a lost record fails the run
_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * _TICK_S


def _create(bootstrap: str, topic: str, security: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, **(security or {})})
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(30)


def librdkafka_produce(
    bootstrap: str,
    topic: str,
    count: int,
    size: int,
    compression: str = "none",
    security: dict[str, str] | None = None,
) -> float:
    """Seconds to produce ``count`` records of ``size`` bytes and get them acknowledged.

    Uncompressed values are all ``x``; compressed ones cycle through 1000 values
    of random hex digits (about 2:1 for the codecs), so decompression has work.
    """
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 5,
            "batch.size": 1 << 20,
            "acks": 1,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 1 << 20,
            "message.max.bytes": 2 << 20,
            "compression.type": compression,
            **(security or {}),
        }
    )
    if compression == "none":
        payloads = [b"x" * size]
    else:
        rng = random.Random(7)
        payloads = [rng.randbytes(size // 2).hex().encode() for _ in range(1000)]
    cycle = len(payloads)
    started = time.perf_counter()
    for i in range(count):
        payload = payloads[i % cycle]
        while True:
            try:
                producer.produce(topic, payload)
                break
            except BufferError:
                producer.poll(0.001)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - started
    if remaining:
        raise RuntimeError(f"{remaining} records not delivered")
    return elapsed


def librdkafka_consume(
    bootstrap: str, topic: str, count: int, security: dict[str, str] | None = None
) -> float:
    """Seconds to consume ``count`` records from the beginning of partition 0."""
    # librdkafka backs off fetching for fetch.queue.backoff.ms (1 s) whenever its local
    # queue holds queued.min.messages; a Python loop drains slower than it fetches, so
    # without these two settings the figure measures that back-off, not the broker.
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.queue.backoff.ms": 1,
            "queued.min.messages": 1_000_000,
            **(security or {}),
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    received = 0
    started = time.perf_counter()
    while received < count:
        for msg in consumer.consume(100_000, timeout=1.0):
            if msg.error() is None:
                received += 1
        if time.perf_counter() - started > _PHASE_TIMEOUT_S:
            raise RuntimeError(f"librdkafka read {received} of {count} records")
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def our_client(bootstrap: str, topic: str, count: int) -> dict[str, float]:
    """Records/s for our producer and consumer (sync facades) on 100-byte records."""
    from log_engine.client import SyncConsumer, SyncProducer
    from log_engine.client import TopicPartition as OurTP

    producer = SyncProducer(
        {"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1 << 20, "acks": 1}
    )
    payload = b"x" * RECORD_BYTES
    started = time.perf_counter()
    futures = [producer.send(topic, payload) for _ in range(count)]
    producer.flush(120)
    produce_s = time.perf_counter() - started
    producer.close()
    failed = [f.exception() for f in futures if f.exception() is not None]
    if failed:
        raise RuntimeError(f"our producer failed {len(failed)} records: {failed[0]}")
    consumer = SyncConsumer({"bootstrap.servers": bootstrap})
    consumer.assign([OurTP(topic, 0)])
    consumer.seek(OurTP(topic, 0), 0)
    received = 0
    started = time.perf_counter()
    while received < count:
        received += len(consumer.poll(1.0))
        if time.perf_counter() - started > _PHASE_TIMEOUT_S:
            raise RuntimeError(f"our consumer read {received} of {count} records")
    consume_s = time.perf_counter() - started
    consumer.close()
    return {
        "client_produce_records_s": count / produce_s,
        "client_consume_records_s": count / consume_s,
    }


def storage_append_rate(directory: Path, count: int) -> float:
    """Records/s appending 1000-record batches of 100-byte values to a PartitionLog."""
    from log_engine.records import Record, build_batch
    from log_engine.storage.config import LogConfig
    from log_engine.storage.partition_log import PartitionLog

    batch = build_batch([Record(None, b"x" * RECORD_BYTES)] * 1000)
    log = PartitionLog.open(directory, LogConfig.model_validate({}))
    started = time.perf_counter()
    for _ in range(count // 1000):
        log.append(batch)
    log.flush()
    elapsed = time.perf_counter() - started
    log.close()
    return (count // 1000) * 1000 / elapsed


def record_check_us(records: int = 1000, rounds: int = 200) -> dict[str, float]:
    """µs per 100-byte record of the structural check alone, native and fallback."""
    from log_engine.records import BATCH_HEADER_SIZE, Record, build_batch
    from log_engine.records.record_check import NATIVE, check_records, check_records_py

    data = build_batch([Record(None, b"x" * RECORD_BYTES)] * records)[BATCH_HEADER_SIZE:]
    result = {}
    checkers: dict[str, Callable[[bytes | memoryview, int, bool], tuple[int, int]]] = {
        "record_check_py_us_per_record": check_records_py
    }
    if NATIVE:
        checkers["record_check_us_per_record"] = check_records
    for name, check in checkers.items():
        runs = rounds if check is not check_records_py else rounds // 10
        started = time.perf_counter()
        for _ in range(runs):
            check(data, records, False)
        result[name] = round((time.perf_counter() - started) / runs / records * 1e6, 4)
    return result


def run(count: int, kb_count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sluice-bench-") as tmp:
        broker = BrokerProcess(Path(tmp) / "data").start()
        assert broker.process is not None
        pid = broker.process.pid
        try:
            _create(broker.bootstrap, "bench100")
            _create(broker.bootstrap, "benchlz4")
            _create(broker.bootstrap, "bench1k")
            _create(broker.bootstrap, "benchours")
            cpu_before = process_cpu_s(pid)
            produce_s = librdkafka_produce(broker.bootstrap, "bench100", count, RECORD_BYTES)
            broker_cpu_s = process_cpu_s(pid) - cpu_before
            cpu_before = process_cpu_s(pid)
            lz4_s = librdkafka_produce(broker.bootstrap, "benchlz4", count, RECORD_BYTES, "lz4")
            lz4_cpu_s = process_cpu_s(pid) - cpu_before
            consume_s = librdkafka_consume(broker.bootstrap, "bench100", count)
            kb_s = librdkafka_produce(broker.bootstrap, "bench1k", kb_count, 1024)
            ours = our_client(broker.bootstrap, "benchours", count // 2)
        finally:
            broker.stop()
        storage = storage_append_rate(Path(tmp) / "storage-bench-0", count)
    mb = count * RECORD_BYTES / 1e6
    return {
        "records": count,
        "record_bytes": RECORD_BYTES,
        "produce_records_s": round(count / produce_s),
        "produce_mb_s": round(mb / produce_s, 1),
        "broker_cpu_us_per_record": round(broker_cpu_s / count * 1e6, 3),
        "lz4_produce_records_s": round(count / lz4_s),
        "lz4_broker_cpu_us_per_record": round(lz4_cpu_s / count * 1e6, 3),
        "consume_records_s": round(count / consume_s),
        "consume_mb_s": round(mb / consume_s, 1),
        "produce_1kb_mb_s": round(kb_count * 1024 / 1e6 / kb_s, 1),
        **{k: round(v) for k, v in ours.items()},
        "storage_append_records_s": round(storage),
        **record_check_us(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run under a minute")
    parser.add_argument("--records", type=int, default=None, help="100-byte records (2M)")
    parser.add_argument(
        "--security",
        choices=["sasl_ssl"],
        default=None,
        help="instead: produce/consume over SASL_SSL next to PLAINTEXT (bench.broker_security)",
    )
    args = parser.parse_args()
    count = args.records or (300_000 if args.quick else 2_000_000)
    if args.security:
        from bench.broker_security import run_security

        print(json.dumps(run_security(count)))
        return
    kb_count = count // 4
    print(json.dumps(run(count, kb_count)))


if __name__ == "__main__":
    main()
