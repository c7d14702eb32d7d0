"""A broker process whose only listener is SASL_SSL (SCRAM-SHA-512), and the client keys
a Kafka Connect user writes to reach it (Java's names: ``ssl.truststore.location``,
``sasl.jaas.config``). Shared by the tests of workers on a secured cluster."""

from __future__ import annotations

from pathlib import Path

from harness.broker_process import BrokerProcess, free_port
from harness.tls_certs import TestCA

SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="{user}" password="{password}";'
)


def sasl_ssl_broker(data_dir: Path, ca: TestCA, user: str, password: str) -> BrokerProcess:
    """A broker (not started) on one ``SASL_SSL`` listener, ``user`` its bootstrap SCRAM user."""
    port = free_port()
    server = ca.issue("localhost", server=True)
    return BrokerProcess(
        data_dir,
        port=port,
        listeners=f"SASL_SSL://127.0.0.1:{port}",
        **{
            "listener.security.protocol.map": "SASL_SSL:SASL_SSL",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(server.pem),
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "sasl.scram.bootstrap.users": f"SCRAM-SHA-512=[name={user},password={password}]",
        },
    )


def sasl_ssl_client_props(ca: TestCA, user: str, password: str) -> dict[str, str]:
    """Worker-level client keys for :func:`sasl_ssl_broker`, as Kafka Connect takes them."""
    return {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": SCRAM_JAAS.format(user=user, password=password),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca.cert),
    }
