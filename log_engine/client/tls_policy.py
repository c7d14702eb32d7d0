"""Kafka's TLS version and cipher keys applied to an ``ssl.SSLContext``.

One reader for every place Sluice builds a TLS context (broker listeners, the
worker's REST listener, Sluice's Kafka client), through the same
:class:`~log_engine.client.tls_stores.StoreKeys` lookup as the key stores:

- ``ssl.enabled.protocols``: ``TLSv1.2``, ``TLSv1.3`` or both (Kafka's default);
  the context's ``minimum_version``/``maximum_version`` span the list, so a list
  with a gap is refused. ``TLSv1``, ``TLSv1.1`` and ``SSLv3`` are refused (Kafka
  and this OpenSSL disable them).
- ``ssl.protocol``: ``TLSv1.2``, ``TLSv1.3`` or ``TLS`` (Java's SSLContext
  name); validated only, it narrows nothing on its own.
- ``ssl.cipher.suites``: IANA names as Java writes them
  (``TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384``) are turned into OpenSSL's names by
  OpenSSL's own table (``OPENSSL_cipher_name``, the one behind
  ``openssl ciphers -stdname``, read from the libssl Python's ``_ssl`` uses);
  OpenSSL names (librdkafka's meaning of the key) are taken as given. Python's
  ``ssl`` cannot narrow the TLS 1.3 suites, so their names are accepted (an
  INFO line says OpenSSL's TLS 1.3 defaults stay on), but a list naming only
  TLS 1.3 suites while TLS 1.2 is enabled, or only TLS 1.2 suites while only
  TLS 1.3 is, is refused: Kafka would enable no suite for that version.

Errors (:class:`TlsPolicyError`, a :class:`StoreError`) name the key as the
user set it; none of these keys holds a secret.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import ssl
from dataclasses import dataclass

from log_engine.client.tls_stores import StoreError, StoreKeys

log = logging.getLogger(__name__)

_VERSIONS = {"TLSV1.2": ssl.TLSVersion.TLSv1_2, "TLSV1.3": ssl.TLSVersion.TLSv1_3}
_VERSION_ORDER = [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3]
_DISABLED = {"SSLV2", "SSLV2HELLO", "SSLV3", "TLSV1", "TLSV1.1"}
_PROTOCOL_NAMES = {"TLS", "TLSV1.2", "TLSV1.3"}
#: RFC 8446's suites: OpenSSL names them as IANA does.
TLS13_SUITES = frozenset(
    {
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_AES_128_CCM_SHA256",
        "TLS_AES_128_CCM_8_SHA256",
    }
)
_tls13_logged = False


class TlsPolicyError(StoreError):
    """``ssl.enabled.protocols``, ``ssl.protocol`` or ``ssl.cipher.suites`` is wrong;
    the message names the key."""


@dataclass(frozen=True)
class TlsPolicy:
    """The versions and TLS 1.2 ciphers a context allows (``ciphers``: OpenSSL
    names for ``set_ciphers``, empty: OpenSSL's defaults)."""

    minimum_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2
    maximum_version: ssl.TLSVersion = ssl.TLSVersion.MAXIMUM_SUPPORTED
    ciphers: tuple[str, ...] = ()
    tls13_suites: tuple[str, ...] = ()

    @classmethod
    def from_keys(cls, keys: StoreKeys) -> TlsPolicy:
        """Read and check the three keys; :class:`TlsPolicyError` names a bad one."""
        _check_protocol(keys)
        versions = _enabled_versions(keys)
        ciphers, tls13 = _cipher_suites(keys, versions)
        return cls(versions[0], versions[-1], ciphers, tls13)

    def apply(self, context: ssl.SSLContext) -> None:
        """Narrow ``context`` to this policy."""
        global _tls13_logged
        context.minimum_version = self.minimum_version
        context.maximum_version = self.maximum_version
        if self.ciphers:
            context.set_ciphers(":".join(self.ciphers))
        if self.tls13_suites and not _tls13_logged:
            _tls13_logged = True
            log.info(
                "ssl.cipher.suites names TLS 1.3 suites (%s): Python's ssl cannot narrow "
                "them, OpenSSL's TLS 1.3 defaults stay enabled",
                ", ".join(self.tls13_suites),
            )


def apply_tls_policy(context: ssl.SSLContext, keys: StoreKeys) -> None:
    """Read the keys and narrow ``context``; :class:`TlsPolicyError` names a bad key."""
    TlsPolicy.from_keys(keys).apply(context)


def _check_protocol(keys: StoreKeys) -> None:
    value = keys.value("ssl.protocol")
    if value is None:
        return
    name = value.strip().upper()
    if name in _DISABLED or name == "SSL":
        raise TlsPolicyError(
            f"{keys.name('ssl.protocol')}={value.strip()}: disabled (insecure); "
            "use TLSv1.3, TLSv1.2 or TLS"
        )
    if name not in _PROTOCOL_NAMES:
        raise TlsPolicyError(
            f"{keys.name('ssl.protocol')}={value.strip()}: one of TLSv1.3, TLSv1.2, TLS"
        )


def _enabled_versions(keys: StoreKeys) -> list[ssl.TLSVersion]:
    """The enabled versions, oldest first (default: TLS 1.2 and 1.3, as Kafka)."""
    value = keys.value("ssl.enabled.protocols")
    if value is None:
        return list(_VERSION_ORDER)
    key = keys.name("ssl.enabled.protocols")
    names = [part.strip() for part in value.split(",") if part.strip()]
    if not names:
        raise TlsPolicyError(f"{key}={value!r} names no protocol: use TLSv1.2 and/or TLSv1.3")
    found: set[ssl.TLSVersion] = set()
    for name in names:
        upper = name.upper()
        if upper in _DISABLED:
            raise TlsPolicyError(
                f"{key}: {name} is disabled (insecure, and off in Kafka and OpenSSL): "
                "use TLSv1.2 and/or TLSv1.3"
            )
        if upper not in _VERSIONS:
            raise TlsPolicyError(f"{key}: unknown protocol {name!r}: use TLSv1.2 and/or TLSv1.3")
        found.add(_VERSIONS[upper])
    versions = [v for v in _VERSION_ORDER if v in found]
    first, last = _VERSION_ORDER.index(versions[0]), _VERSION_ORDER.index(versions[-1])
    if len(versions) != last - first + 1:  # min/max cannot leave a version out
        raise TlsPolicyError(f"{key}={value}: a list with a gap cannot be enabled")
    if ssl.TLSVersion.TLSv1_3 in found and not ssl.HAS_TLSv1_3:
        raise TlsPolicyError(f"{key}: TLSv1.3 is not supported by {ssl.OPENSSL_VERSION}")
    return versions


def _cipher_suites(
    keys: StoreKeys, versions: list[ssl.TLSVersion]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(OpenSSL names of the TLS 1.2 suites, the TLS 1.3 suites named)."""
    value = keys.value("ssl.cipher.suites")
    if value is None:
        return (), ()
    key = keys.name("ssl.cipher.suites")
    names = [part.strip() for part in value.split(",") if part.strip()]
    if not names:
        raise TlsPolicyError(f"{key}={value!r} names no cipher suite")
    tls12: list[str] = []
    tls13: list[str] = []
    for name in names:
        if name.upper() in TLS13_SUITES:
            tls13.append(name.upper())
        else:
            tls12.append(_openssl_name(name, key))
    tls12_on = ssl.TLSVersion.TLSv1_2 in versions
    tls13_on = ssl.TLSVersion.TLSv1_3 in versions
    enabled = keys.name("ssl.enabled.protocols")
    if tls12_on and not tls12:
        raise TlsPolicyError(
            f"{key} names only TLS 1.3 suites but TLSv1.2 is enabled ({enabled}): "
            "add TLS 1.2 suites or set ssl.enabled.protocols=TLSv1.3"
        )
    if tls13_on and not tls12_on and not tls13:
        raise TlsPolicyError(
            f"{key} names only TLS 1.2 suites but only TLSv1.3 is enabled ({enabled}): "
            "add TLS 1.3 suites (e.g. TLS_AES_256_GCM_SHA384) or enable TLSv1.2"
        )
    return (tuple(tls12) if tls12_on else ()), tuple(tls13)


def _openssl_name(name: str, key: str) -> str:
    """OpenSSL's name of a TLS 1.2 suite given by its IANA or OpenSSL name, checked
    against what this OpenSSL offers."""
    openssl = name
    upper = name.upper()
    if upper.startswith(("TLS_", "SSL_")):
        mapped = iana_to_openssl("TLS_" + upper[4:])
        if mapped is None:
            raise TlsPolicyError(f"{key}: unknown cipher suite {name!r}")
        openssl = mapped
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        probe.set_ciphers(openssl)
    except ssl.SSLError:
        detail = f" (OpenSSL name {openssl})" if openssl != name else ""
        raise TlsPolicyError(
            f"{key}: cipher suite {name!r}{detail} is unknown or not offered by "
            f"{ssl.OPENSSL_VERSION}"
        ) from None
    return openssl


def iana_to_openssl(iana_name: str) -> str | None:
    """OpenSSL's name of a suite given by its IANA name (``None``: no such suite)."""
    lookup = _openssl_cipher_name()
    if lookup is None:
        raise TlsPolicyError(
            f"this OpenSSL ({ssl.OPENSSL_VERSION}) has no IANA name table: give "
            f"ssl.cipher.suites as OpenSSL names (e.g. ECDHE-RSA-AES256-GCM-SHA384)"
        )
    found = lookup(iana_name.encode("ascii", "replace"))
    if not found or found == b"(NONE)":
        return None
    return str(found.decode("ascii"))


@functools.cache
def _openssl_cipher_name() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """``OPENSSL_cipher_name`` (OpenSSL 1.1.1+) from the libssl ``_ssl`` is linked to,
    else from the system's libssl; ``None`` if neither exports it."""
    import _ssl

    candidates = [getattr(_ssl, "__file__", None), ctypes.util.find_library("ssl")]
    for path in candidates:
        if not path:
            continue
        try:
            function = ctypes.CDLL(path).OPENSSL_cipher_name
        except (OSError, AttributeError):
            continue
        function.restype = ctypes.c_char_p
        function.argtypes = [ctypes.c_char_p]
        return function
    return None
