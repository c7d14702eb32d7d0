"""``python -m bench.broker --security sasl_ssl``: the cost of TLS + SASL.

In one run, brokers one after the other on fresh data directories,
alternating: one with a PLAINTEXT listener (the baseline), one with a SASL_SSL
listener (PEM key store from a throwaway CA, SCRAM-SHA-512), two rounds each,
best figure of each kind kept. librdkafka produces ``count`` 100-byte records
and ``count // 2`` 1 KB records to each and consumes both back. ``*_ratio`` is
SASL_SSL over PLAINTEXT for the rates (the goal: at least 0.6) and PLAINTEXT
over SASL_SSL for the broker's CPU (what TLS costs it; no goal). The CPU per
100-byte record is near the 10 ms resolution of process times at 300,000
records; the CPU per MB of 1 KB records is the steadier figure. This process's
own CPU (the produce loop, librdkafka's threads) per MB of 1 KB records is
``client_cpu_*``: client and broker share the machine's two cores, so
``produce_1kb_ratio_if_broker_tls_were_free`` is the ratio a broker whose TLS
cost nothing would reach, the client paying for its own TLS.
"""

from __future__ import annotations

import resource
import tempfile
from pathlib import Path
from typing import Any

from bench.broker import (
    RECORD_BYTES,
    _create,
    librdkafka_consume,
    librdkafka_produce,
    process_cpu_s,
)
from harness.broker_process import BrokerProcess, free_port
from harness.tls_certs import TestCA


def _measure(
    broker: BrokerProcess, count: int, security: dict[str, str] | None
) -> dict[str, float]:
    assert broker.process is not None
    pid = broker.process.pid
    _create(broker.bootstrap, "bench100", security)
    _create(broker.bootstrap, "bench1k", security)
    cpu = process_cpu_s(pid)
    produce_s = librdkafka_produce(
        broker.bootstrap, "bench100", count, RECORD_BYTES, security=security
    )
    produce_cpu = process_cpu_s(pid) - cpu
    cpu = process_cpu_s(pid)
    consume_s = librdkafka_consume(broker.bootstrap, "bench100", count, security)
    consume_cpu = process_cpu_s(pid) - cpu
    kb_count = count // 2
    cpu, client_cpu = process_cpu_s(pid), _own_cpu_s()
    kb_s = librdkafka_produce(broker.bootstrap, "bench1k", kb_count, 1024, security=security)
    kb_cpu, client_cpu = process_cpu_s(pid) - cpu, _own_cpu_s() - client_cpu
    cpu = process_cpu_s(pid)
    kb_consume_s = librdkafka_consume(broker.bootstrap, "bench1k", kb_count, security)
    kb_consume_cpu = process_cpu_s(pid) - cpu
    kb_mb = kb_count * 1024 / 1e6
    return {
        "produce_records_s": count / produce_s,
        "consume_records_s": count / consume_s,
        "produce_1kb_mb_s": kb_mb / kb_s,
        "consume_1kb_mb_s": kb_mb / kb_consume_s,
        "broker_cpu_us_per_produced": produce_cpu / count * 1e6,
        "broker_cpu_us_per_consumed": consume_cpu / count * 1e6,
        "broker_cpu_ms_per_produced_1kb_mb": kb_cpu / kb_mb * 1e3,
        "broker_cpu_ms_per_consumed_1kb_mb": kb_consume_cpu / kb_mb * 1e3,
        "client_cpu_ms_per_produced_1kb_mb": client_cpu / kb_mb * 1e3,
    }


def _own_cpu_s() -> float:
    """CPU seconds of this process so far: the Python produce loop and librdkafka's threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _plain_broker(root: Path) -> BrokerProcess:
    return BrokerProcess(root).start()


def _secure_broker(root: Path, server_pem: Path) -> BrokerProcess:
    port = free_port()
    return BrokerProcess(
        root,
        port=port,
        listeners=f"SASL_SSL://127.0.0.1:{port}",
        **{
            "listener.security.protocol.map": "SASL_SSL:SASL_SSL",
            "ssl.keystore.location": str(server_pem),
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "sasl.scram.bootstrap.users": "SCRAM-SHA-512=[name=bench,password=bench-secret]",
        },
    ).start()


def _best(runs: list[dict[str, float]]) -> dict[str, float]:
    """Per figure, the best of the rounds (highest rate, lowest CPU)."""
    return {
        key: (min if "_cpu_" in key else max)(run[key] for run in runs)
        for key in runs[0]
    }


def run_security(count: int, rounds: int = 2) -> dict[str, Any]:
    """``rounds`` alternating PLAINTEXT / SASL_SSL rounds, fresh brokers each."""
    plain_runs: list[dict[str, float]] = []
    secure_runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="sluice-bench-sec-") as tmp:
        root = Path(tmp)
        ca = TestCA(root / "pki")
        server = ca.issue("localhost", server=True)
        security = {
            "security.protocol": "SASL_SSL",
            "ssl.ca.location": str(ca.cert),
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "bench",
            "sasl.password": "bench-secret",
        }
        for n in range(rounds):
            plain = _plain_broker(root / f"plain{n}")
            try:
                plain_runs.append(_measure(plain, count, None))
            finally:
                plain.stop()
            secure = _secure_broker(root / f"secure{n}", server.pem)
            try:
                secure_runs.append(_measure(secure, count, security))
            finally:
                secure.stop()
    baseline, secured = _best(plain_runs), _best(secure_runs)
    out: dict[str, Any] = {"records": count, "record_bytes": RECORD_BYTES, "rounds": rounds}
    for key, value in baseline.items():
        out[f"plaintext_{key}"] = round(value, 3)
        out[f"sasl_ssl_{key}"] = round(secured[key], 3)
        if "_cpu_" in key:
            # PLAINTEXT over SASL_SSL, so that >= 0.6 reads the same way as for the rates
            out[f"{key}_ratio"] = round(value / secured[key], 2)
        else:
            out[f"{key}_ratio"] = round(secured[key] / value, 2)
    # Client and broker share this machine's cores, and both are busy: the 1 KB
    # produce rate follows their summed CPU per MB. A broker whose TLS cost
    # nothing would still pay for the client's: this is the ratio it would reach.
    plain_total = baseline["broker_cpu_ms_per_produced_1kb_mb"] + baseline[
        "client_cpu_ms_per_produced_1kb_mb"
    ]
    free_tls_broker = baseline["broker_cpu_ms_per_produced_1kb_mb"] + secured[
        "client_cpu_ms_per_produced_1kb_mb"
    ]
    out["produce_1kb_ratio_if_broker_tls_were_free"] = round(plain_total / free_tls_broker, 2)
    return out
