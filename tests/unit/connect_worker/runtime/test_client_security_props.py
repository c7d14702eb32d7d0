"""Worker-level security keys reach every client of the worker; prefixed keys win."""

from __future__ import annotations

from connect_worker.runtime.settings import RuntimeSettings
from connect_worker.worker_config import WorkerConfig
from log_engine.client import ConsumerConfig, ProducerConfig


def test_worker_security_keys_reach_producer_consumer_and_admin() -> None:
    config = WorkerConfig.from_properties(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
            'required username="connect" password="connect-secret";',
            "ssl.truststore.location": "/etc/kafka/ca.pem",
            "consumer.sasl.mechanism": "SCRAM-SHA-256",
            "producer.linger.ms": "5",
        }
    )
    settings = RuntimeSettings.from_worker_config(config, bootstrap="kafka:9093")
    for props in (settings.producer_props, settings.consumer_props, settings.admin_props):
        assert props["security.protocol"] == "SASL_SSL"
        assert props["ssl.truststore.location"] == "/etc/kafka/ca.pem"
    assert settings.producer_props["sasl.mechanism"] == "SCRAM-SHA-512"
    assert settings.consumer_props["sasl.mechanism"] == "SCRAM-SHA-256"
    producer = ProducerConfig.from_mapping(
        {"bootstrap.servers": "kafka:9093", **settings.producer_props}
    )
    assert producer.ssl_ca_location == "/etc/kafka/ca.pem"  # the Java name, mapped
    assert producer.sasl_credentials() == ("connect", "connect-secret")
    assert "connect-secret" not in repr(producer)
    consumer = ConsumerConfig.from_mapping(
        {"bootstrap.servers": "kafka:9093", "group.id": "g", **settings.consumer_props}
    )
    assert consumer.sasl_mechanism == "SCRAM-SHA-256"
