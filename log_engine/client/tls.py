"""The client's ``ssl.SSLContext``, stores loaded by :mod:`log_engine.client.tls_stores`.

librdkafka's names and the Java client's both work (docs/security.md): the
trusted CAs from ``ssl.ca.location``/``ssl.truststore.location`` (PEM, PKCS12
or JKS, ``ssl.truststore.type``, ``ssl.truststore.password``) or
``ssl.ca.pem``/``ssl.truststore.certificates`` (else the system's CAs); the
client certificate for mutual TLS from ``ssl.certificate.location`` (+
``ssl.key.location``, PEM files as librdkafka reads them), from
``ssl.keystore.location`` (PEM, PKCS12 or JKS, ``ssl.keystore.password``), or
from ``ssl.certificate.pem``/``ssl.keystore.certificate.chain`` +
``ssl.key.pem``/``ssl.keystore.key`` as text. ``ssl.enabled.protocols``, ``ssl.protocol`` and
``ssl.cipher.suites`` narrow the versions and suites
(:mod:`log_engine.client.tls_policy`).
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

from pydantic import SecretStr

from log_engine.client.tls_policy import TlsPolicy
from log_engine.client.tls_stores import StoreError, StoreKeys, load_keystore, load_truststore

if TYPE_CHECKING:
    from log_engine.client.config import ClientConfig


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def _store_keys(config: ClientConfig) -> StoreKeys:
    values = {
        "ssl.truststore.type": config.ssl_truststore_type,
        "ssl.truststore.location": config.ssl_ca_location,
        "ssl.truststore.password": _secret(config.ssl_truststore_password),
        "ssl.truststore.certificates": config.ssl_ca_pem,
        "ssl.keystore.type": config.ssl_keystore_type,
        "ssl.keystore.location": config.ssl_keystore_location,
        "ssl.keystore.password": _secret(config.ssl_keystore_password),
        "ssl.key.password": _secret(config.ssl_key_password),
        "ssl.keystore.certificate.chain": config.ssl_certificate_pem,
        "ssl.keystore.key": _secret(config.ssl_key_pem),
        "ssl.enabled.protocols": config.ssl_enabled_protocols,
        "ssl.protocol": config.ssl_protocol,
        "ssl.cipher.suites": config.ssl_cipher_suites,
    }
    return StoreKeys(values.get)


def tls_policy(config: ClientConfig) -> TlsPolicy:
    """The client's TLS versions and suites; :class:`StoreError` names a bad key."""
    return TlsPolicy.from_keys(_store_keys(config))


def client_context(config: ClientConfig) -> ssl.SSLContext:
    """The TLS context of an SSL / SASL_SSL client; :class:`StoreError` names a bad key."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    keys = _store_keys(config)
    TlsPolicy.from_keys(keys).apply(context)
    if not load_truststore(context, keys):
        context.load_default_certs()
    if config.ssl_endpoint_identification_algorithm != "https":
        context.check_hostname = False
    if config.ssl_certificate_location:
        if keys.has_keystore():
            raise StoreError(
                "ssl.certificate.location and ssl.keystore.* both name a client "
                "certificate: set one of them"
            )
        try:
            context.load_cert_chain(
                config.ssl_certificate_location,
                config.ssl_key_location,
                _secret(config.ssl_key_password),
            )
        except (ssl.SSLError, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise StoreError(
                f"cannot load the client certificate ssl.certificate.location="
                f"{config.ssl_certificate_location}: {reason}"
            ) from None
    else:
        load_keystore(context, keys)
    return context
