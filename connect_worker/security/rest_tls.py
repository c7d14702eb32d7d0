"""TLS for the REST API: the server's context and the context workers forward with.

Kafka Connect's keys: each ``ssl.*`` key is read as ``listeners.https.ssl.*``
first and then as the worker's bare ``ssl.*`` key (the same keys the worker's
Kafka clients use, as in Connect). Stores are loaded as on the broker
(:mod:`log_engine.client.tls_stores`, docs/security.md):

- ``ssl.keystore.type`` (PEM, PKCS12, JKS), ``ssl.keystore.location``,
  ``ssl.keystore.password``, ``ssl.key.password``; or
  ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key`` as PEM text;
- ``ssl.truststore.type``, ``ssl.truststore.location`` (+
  ``ssl.truststore.password``) / ``ssl.truststore.certificates``: the CAs that
  client certificates must chain to, and that a worker trusts when it forwards
  a request to another worker over HTTPS (unset: the system's CAs);
- ``ssl.client.auth``: ``none`` (default), ``requested``, ``required``;
- ``ssl.enabled.protocols``, ``ssl.protocol``, ``ssl.cipher.suites``: the TLS
  versions and cipher suites of both contexts (:mod:`log_engine.client.tls_policy`);
- ``ssl.endpoint.identification.algorithm``: ``https`` (default: the other
  worker's certificate must name its host) or empty/``none``.

A forwarding worker presents its own key store as client certificate, so a
cluster with ``ssl.client.auth=required`` still forwards. Errors name the
key, never a key's or password's value.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass

from log_engine.client.tls_policy import apply_tls_policy
from log_engine.client.tls_stores import StoreError, StoreKeys, load_keystore, load_truststore

HTTPS_PREFIX = "listeners.https."
_CLIENT_AUTH = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}


class RestTlsError(ValueError):
    """A REST TLS setting is missing or wrong; the message names the key."""


@dataclass(frozen=True)
class RestTlsSettings:
    """The ``ssl.*`` keys of the HTTPS listener, looked up as Kafka Connect does."""

    props: Mapping[str, str]

    def get(self, key: str) -> str | None:
        value = self.props.get(HTTPS_PREFIX + key)
        if value is None:
            value = self.props.get(key)
        return value.strip() if value is not None and value.strip() else None

    def name(self, key: str) -> str:
        """The key as the user set it (prefixed when the prefixed one is set)."""
        return HTTPS_PREFIX + key if HTTPS_PREFIX + key in self.props else key

    @property
    def client_auth(self) -> str:
        value = (self.get("ssl.client.auth") or "none").lower()
        if value not in _CLIENT_AUTH:
            raise RestTlsError(
                f"{self.name('ssl.client.auth')}={value!r}: one of none, requested, required"
            )
        return value

    def has_keystore(self) -> bool:
        return self._keys().has_keystore()

    def server_context(self) -> ssl.SSLContext:
        """The HTTPS listener's context; :class:`RestTlsError` names a bad key."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._apply_policy(context)
        if not self.has_keystore():
            raise RestTlsError(
                "an https:// listener needs listeners.https.ssl.keystore.location (a PEM, "
                "PKCS12 or JKS key store) or ssl.keystore.certificate.chain "
                "and ssl.keystore.key (the listeners.https. prefix is optional)"
            )
        self._load_keystore(context)
        client_auth = self.client_auth
        trusted = self._load_truststore(context)
        if client_auth != "none" and not trusted:
            raise RestTlsError(
                f"{self.name('ssl.client.auth')}={client_auth} needs ssl.truststore.location "
                "or ssl.truststore.certificates (the CAs client certificates must chain to)"
            )
        context.verify_mode = _CLIENT_AUTH[client_auth]
        return context

    def client_context(self) -> ssl.SSLContext:
        """The context a worker uses to reach other workers' HTTPS listeners."""
        context = ssl.create_default_context()
        self._apply_policy(context)
        self._load_truststore(context)  # the configured CAs, besides the system's
        algorithm = (self.get("ssl.endpoint.identification.algorithm") or "https").lower()
        if algorithm in ("", "none"):
            context.check_hostname = False
        if self.has_keystore():
            self._load_keystore(context)  # our certificate, for ssl.client.auth=required
        return context

    def _keys(self) -> StoreKeys:
        return StoreKeys(self.get, self.name)

    def _apply_policy(self, context: ssl.SSLContext) -> None:
        try:
            apply_tls_policy(context, self._keys())
        except StoreError as exc:
            raise RestTlsError(str(exc)) from None

    def _load_keystore(self, context: ssl.SSLContext) -> None:
        try:
            load_keystore(context, self._keys())
        except StoreError as exc:
            raise RestTlsError(str(exc)) from None

    def _load_truststore(self, context: ssl.SSLContext) -> bool:
        try:
            return load_truststore(context, self._keys())
        except StoreError as exc:
            raise RestTlsError(str(exc)) from None
