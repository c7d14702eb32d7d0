"""Secrets hidden in configs, free text and log lines."""

from __future__ import annotations

import io
import logging

from connect_worker.connector_config import mask_secrets, remember_secrets
from connect_worker.security.redaction import SECRETS, RedactingFilter, SecretValues
from connectors.api.config import hide_url_passwords


def test_keys_kafka_types_password_are_masked() -> None:
    props = {
        "producer.override.ssl.keystore.key": "-----BEGIN PRIVATE KEY-----x",
        "ssl.keystore.certificate.chain": "-----BEGIN CERTIFICATE-----y",
        "consumer.override.ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----z",
        "value.converter.basic.auth.user.info": "user:pw",
        "producer.override.ssl.key.pem": "-----BEGIN PRIVATE KEY-----w",  # librdkafka's name
        "producer.override.ssl.keystore.password": "store-pw",
        "ssl.keystore.location": "/etc/k.pem",
        "connection.url": "postgresql://me:s3cret@db:5432/x",
        "connection.password": "${file:/etc/db.properties:password}",
    }
    masked = mask_secrets(props, None)
    assert masked["producer.override.ssl.keystore.key"] == "[hidden]"
    assert masked["ssl.keystore.certificate.chain"] == "[hidden]"
    assert masked["consumer.override.ssl.truststore.certificates"] == "[hidden]"
    assert masked["value.converter.basic.auth.user.info"] == "[hidden]"
    assert masked["producer.override.ssl.key.pem"] == "[hidden]"
    assert masked["producer.override.ssl.keystore.password"] == "[hidden]"
    assert masked["ssl.keystore.location"] == "/etc/k.pem"  # a path, not a secret
    assert masked["connection.url"] == "postgresql://me:[hidden]@db:5432/x"
    assert masked["connection.password"] == props["connection.password"]  # a reference


def test_url_passwords_in_text() -> None:
    text = "cannot reach https://svc:p4ss@host:1/x nor mqtt://u@h:1 nor http://h:80/a@b"
    assert hide_url_passwords(text) == (
        "cannot reach https://svc:[hidden]@host:1/x nor mqtt://u@h:1 nor http://h:80/a@b"
    )


def test_known_values_are_hidden_longest_first_and_short_ones_ignored() -> None:
    values = SecretValues()
    values.add(["abc", "hunter2", "hunter2-and-more"])
    assert values.redact("x hunter2-and-more y hunter2 abc") == "x [hidden] y [hidden] abc"


def test_remember_secrets_takes_jaas_passwords_and_url_passwords() -> None:
    remember_secrets(
        {
            "sasl.jaas.config": 'x.PlainLoginModule required username="u" password="jaas-pw-1";',
            "connection.url": "postgresql://u:url-pw-22@h/db",
            "topic": "public-name",
        },
        None,
    )
    assert "jaas-pw-1" in SECRETS and "url-pw-22" in SECRETS
    assert "public-name" not in SECRETS


def test_log_lines_and_tracebacks_are_redacted() -> None:
    SECRETS.add(["log-secret-77"])
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    log = logging.getLogger("test_redaction")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("token %s used", "log-secret-77")
        try:
            raise ValueError("bad log-secret-77")
        except ValueError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert "log-secret-77" not in text
    assert "token [hidden] used" in text and "ValueError: bad [hidden]" in text
