"""``python -m bench.broker --security sasl_ssl``: the cost of TLS + SASL.

In one run, two brokers one after the other on fresh data directories: one
with a PLAINTEXT listener (the baseline), one with a SASL_SSL listener (PEM key
store from a throwaway CA, SCRAM-SHA-512). librdkafka produces ``count``
100-byte records and 1 KB records (``count // 4``) to each and consumes the
100-byte ones back; ``*_ratio`` is SASL_SSL over PLAINTEXT (goal >= 0.6).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from bench.broker import RECORD_BYTES, _create, librdkafka_consume, librdkafka_produce
from harness.broker_process import BrokerProcess, free_port
from tests.support.tls_certs import TestCA


def _measure(
    broker: BrokerProcess, count: int, security: dict[str, str] | None
) -> dict[str, float]:
    _create(broker.bootstrap, "bench100", security)
    _create(broker.bootstrap, "bench1k", security)
    produce_s = librdkafka_produce(
        broker.bootstrap, "bench100", count, RECORD_BYTES, security=security
    )
    consume_s = librdkafka_consume(broker.bootstrap, "bench100", count, security)
    kb_count = count // 4
    kb_s = librdkafka_produce(broker.bootstrap, "bench1k", kb_count, 1024, security=security)
    return {
        "produce_records_s": count / produce_s,
        "consume_records_s": count / consume_s,
        "produce_1kb_mb_s": kb_count * 1024 / 1e6 / kb_s,
    }


def run_security(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sluice-bench-sec-") as tmp:
        root = Path(tmp)
        ca = TestCA(root / "pki")
        server = ca.issue("localhost", server=True)
        plain = BrokerProcess(root / "plain").start()
        try:
            baseline = _measure(plain, count, None)
        finally:
            plain.stop()
        port = free_port()
        secure = BrokerProcess(
            root / "secure",
            port=port,
            listeners=f"SASL_SSL://127.0.0.1:{port}",
            **{
                "listener.security.protocol.map": "SASL_SSL:SASL_SSL",
                "ssl.keystore.location": str(server.pem),
                "sasl.enabled.mechanisms": "SCRAM-SHA-512",
                "sasl.scram.bootstrap.users": "SCRAM-SHA-512=[name=bench,password=bench-secret]",
            },
        ).start()
        security = {
            "security.protocol": "SASL_SSL",
            "ssl.ca.location": str(ca.cert),
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "bench",
            "sasl.password": "bench-secret",
        }
        try:
            secured = _measure(secure, count, security)
        finally:
            secure.stop()
    out: dict[str, Any] = {"records": count, "record_bytes": RECORD_BYTES}
    for key, value in baseline.items():
        out[f"plaintext_{key}"] = round(value, 1)
        out[f"sasl_ssl_{key}"] = round(secured[key], 1)
        out[f"{key}_ratio"] = round(secured[key] / value, 2)
    return out
