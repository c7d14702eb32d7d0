"""TLS for the REST API: the server's context and the context workers forward with.

Kafka Connect's keys: each ``ssl.*`` key is read as ``listeners.https.ssl.*``
first and then as the worker's bare ``ssl.*`` key (the same keys the worker's
Kafka clients use, as in Connect). PEM stores only (``ssl.keystore.type=PEM``,
``ssl.truststore.type=PEM``), as on the broker (docs/security.md):

- ``ssl.keystore.location``: a PEM file with the private key and the
  certificate chain; or ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key``
  as PEM text; ``ssl.key.password`` for an encrypted key;
- ``ssl.truststore.location`` / ``ssl.truststore.certificates``: the CAs that
  client certificates must chain to, and that a worker trusts when it forwards
  a request to another worker over HTTPS (unset: the system's CAs);
- ``ssl.client.auth``: ``none`` (default), ``requested``, ``required``;
- ``ssl.endpoint.identification.algorithm``: ``https`` (default: the other
  worker's certificate must name its host) or empty/``none``.

A forwarding worker presents its own key store as client certificate, so a
cluster with ``ssl.client.auth=required`` still forwards. Errors name the
key, never a key's or password's value.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

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
        return bool(
            self.get("ssl.keystore.location")
            or (self.get("ssl.keystore.certificate.chain") and self.get("ssl.keystore.key"))
        )

    def server_context(self) -> ssl.SSLContext:
        """The HTTPS listener's context; :class:`RestTlsError` names a bad key."""
        self._check_store_types()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if not self.has_keystore():
            raise RestTlsError(
                "an https:// listener needs listeners.https.ssl.keystore.location (a PEM file "
                "with the key and the certificate chain) or ssl.keystore.certificate.chain "
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
        self._check_store_types()
        context = ssl.create_default_context()
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        self._load_truststore(context)  # the configured CAs, besides the system's
        algorithm = (self.get("ssl.endpoint.identification.algorithm") or "https").lower()
        if algorithm in ("", "none"):
            context.check_hostname = False
        if self.has_keystore():
            self._load_keystore(context)  # our certificate, for ssl.client.auth=required
        return context

    def _check_store_types(self) -> None:
        for key in ("ssl.keystore.type", "ssl.truststore.type"):
            kind = (self.get(key) or "PEM").upper()
            if kind != "PEM":
                raise RestTlsError(
                    f"{self.name(key)}={kind}: only PEM stores are supported "
                    "(convert with openssl pkcs12 -nodes, see docs/security.md)"
                )

    def _load_keystore(self, context: ssl.SSLContext) -> None:
        password = self.get("ssl.key.password")
        location = self.get("ssl.keystore.location")
        try:
            if location:
                context.load_cert_chain(location, location, password)
            else:
                chain = self.get("ssl.keystore.certificate.chain") or ""
                key = self.get("ssl.keystore.key") or ""
                _load_pem_text(context, chain, key, password)
        except (ssl.SSLError, OSError) as exc:
            which = self.name("ssl.keystore.location" if location else "ssl.keystore.key")
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise RestTlsError(f"cannot load the key store ({which}): {reason}") from None

    def _load_truststore(self, context: ssl.SSLContext) -> bool:
        location = self.get("ssl.truststore.location")
        text = self.get("ssl.truststore.certificates")
        try:
            if location:
                context.load_verify_locations(cafile=location)
            elif text:
                context.load_verify_locations(cadata=text)
            else:
                return False
        except (ssl.SSLError, OSError) as exc:
            which = self.name(
                "ssl.truststore.location" if location else "ssl.truststore.certificates"
            )
            raise RestTlsError(f"cannot load the trust store ({which}): {exc}") from None
        return True


def _load_pem_text(context: ssl.SSLContext, chain: str, key: str, password: str | None) -> None:
    """``load_cert_chain`` reads files only: the PEM text goes through a private temp file."""
    fd, path = tempfile.mkstemp(suffix=".pem")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key.strip() + "\n" + chain.strip() + "\n")
        context.load_cert_chain(path, path, password)
    finally:
        os.unlink(path)
