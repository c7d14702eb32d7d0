"""Kafka's key stores and trust stores (PEM, PKCS12, JKS) loaded into an ``ssl.SSLContext``.

One loader for every place Sluice builds a TLS context: broker listeners, the
worker's REST listener and Sluice's own Kafka client. Settings are Kafka's
keys, read through a lookup so each caller keeps its own prefix rule
(``listener.name.<l>.``, ``listeners.https.``):

- ``ssl.keystore.type`` ``PEM`` | ``PKCS12`` | ``JKS``; unset: the file's own
  format (PEM text, JKS magic, else PKCS12). As Java (``keystore.type.compat``)
  a ``JKS`` store may be a PKCS12 file and the other way round; PEM text
  under a binary type (or a binary store under ``PEM``) is refused.
- ``ssl.keystore.location`` + ``ssl.keystore.password`` (the store's) +
  ``ssl.key.password`` (the key entry's; default: the store password, as Kafka);
  or ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key`` as PEM text.
- ``ssl.truststore.type``, ``ssl.truststore.location`` (+ ``ssl.truststore.password``
  for PKCS12/JKS) or ``ssl.truststore.certificates`` as PEM text.

Python's ``load_cert_chain`` reads only files. A key that did not come from a
PEM file is written, encrypted with a random one-time password that never
leaves this process, to a private temp file (mode 0600) which is removed as
soon as it is loaded: a crash in between leaves only ciphertext behind.

Errors (:class:`StoreError`) name the key and the file, never a password.
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

STORE_TYPES = ("PEM", "PKCS12", "JKS")
_JKS_MAGIC = b"\xfe\xed\xfe\xed"
_JCEKS_MAGIC = b"\xce\xce\xce\xce"

Lookup = Callable[[str], "str | None"]


class StoreError(ValueError):
    """A key store or trust store cannot be used; the message names the key and file."""


def _bare(key: str) -> str:
    return key


@dataclass(frozen=True)
class StoreKeys:
    """How to read the ``ssl.*`` keys: ``get`` returns a value (or ``None``),
    ``name`` the key as the user should set it (with the caller's prefix)."""

    get: Lookup
    name: Callable[[str], str] = field(default=_bare)

    def value(self, key: str) -> str | None:
        value = self.get(key)
        return value if value is not None and value.strip() else None

    def has_keystore(self) -> bool:
        return bool(
            self.value("ssl.keystore.location")
            or self.value("ssl.keystore.certificate.chain")
            or self.value("ssl.keystore.key")
        )

    def has_truststore(self) -> bool:
        return bool(
            self.value("ssl.truststore.location") or self.value("ssl.truststore.certificates")
        )


def load_keystore(context: ssl.SSLContext, keys: StoreKeys) -> bool:
    """Load the configured key and certificate chain; ``False`` if none is configured."""
    declared = _declared_type(keys, "ssl.keystore.type")
    location = keys.value("ssl.keystore.location")
    key_password = keys.value("ssl.key.password")
    if location:
        where = f"{keys.name('ssl.keystore.location')}={location}"
        data = _read(location, where)
        kind = _effective_type(declared, data, keys.name("ssl.keystore.type"), where)
        if kind == "PEM":
            _load_pem_file(context, location, key_password, where)
            return True
        store_password = keys.value("ssl.keystore.password")
        password_key = keys.name("ssl.keystore.password")
        if kind == "PKCS12":
            key, chain = _pkcs12_key(data, store_password, key_password, where, password_key)
        else:
            key, chain = _jks_key(data, store_password, key_password, where, password_key)
        _load_key_and_chain(context, key, chain, where)
        return True
    chain_text = keys.value("ssl.keystore.certificate.chain")
    key_text = keys.value("ssl.keystore.key")
    if not (chain_text or key_text):
        return False
    missing = "ssl.keystore.key" if chain_text else "ssl.keystore.certificate.chain"
    if not (chain_text and key_text):
        raise StoreError(
            f"{keys.name(missing)} is not set: PEM text key stores need both "
            "ssl.keystore.certificate.chain and ssl.keystore.key"
        )
    if declared not in (None, "PEM"):
        raise StoreError(
            f"{keys.name('ssl.keystore.type')}={declared}: ssl.keystore.certificate.chain "
            "and ssl.keystore.key are PEM text (set PEM or leave the type unset)"
        )
    where = keys.name("ssl.keystore.key")
    try:
        key = serialization.load_pem_private_key(
            key_text.encode(), key_password.encode() if key_password else None
        )
    except (ValueError, TypeError) as exc:
        raise StoreError(
            f"cannot read {where}: not a PEM private key, or {keys.name('ssl.key.password')} "
            f"is wrong or missing ({type(exc).__name__})"
        ) from None
    try:
        chain = x509.load_pem_x509_certificates(chain_text.encode())
    except ValueError:
        raise StoreError(
            f"cannot read {keys.name('ssl.keystore.certificate.chain')}: not PEM certificates"
        ) from None
    _load_key_and_chain(context, key, chain, where)
    return True


def load_truststore(context: ssl.SSLContext, keys: StoreKeys) -> bool:
    """Load the configured trusted CAs; ``False`` if none are configured."""
    declared = _declared_type(keys, "ssl.truststore.type")
    location = keys.value("ssl.truststore.location")
    if location:
        where = f"{keys.name('ssl.truststore.location')}={location}"
        data = _read(location, where)
        kind = _effective_type(declared, data, keys.name("ssl.truststore.type"), where)
        password = keys.value("ssl.truststore.password")
        password_key = keys.name("ssl.truststore.password")
        if kind == "PEM":
            try:
                context.load_verify_locations(cafile=location)
            except ssl.SSLError as exc:
                raise StoreError(
                    f"cannot load the trust store {where}: {exc.reason or exc}"
                ) from None
            return True
        if kind == "PKCS12":
            certs = _pkcs12_certificates(data, password, where, password_key)
        else:
            certs = _jks_certificates(data, password, where, password_key)
        if not certs:
            raise StoreError(f"the trust store {where} holds no certificates")
        _trust(context, certs, where)
        return True
    text = keys.value("ssl.truststore.certificates")
    if not text:
        return False
    if declared not in (None, "PEM"):
        raise StoreError(
            f"{keys.name('ssl.truststore.type')}={declared}: ssl.truststore.certificates "
            "is PEM text (set PEM or leave the type unset)"
        )
    try:
        context.load_verify_locations(cadata=text)
    except (ssl.SSLError, ValueError) as exc:
        raise StoreError(f"cannot load {keys.name('ssl.truststore.certificates')}: {exc}") from None
    return True


# -- store types -------------------------------------------------------------------------


def _declared_type(keys: StoreKeys, key: str) -> str | None:
    value = keys.value(key)
    if value is None:
        return None
    kind = value.strip().upper()
    if kind not in STORE_TYPES:
        raise StoreError(f"{keys.name(key)}={value.strip()}: one of {', '.join(STORE_TYPES)}")
    return kind


def _sniff(data: bytes) -> str | None:
    if data.startswith((_JKS_MAGIC, _JCEKS_MAGIC)):
        return "JKS"
    if data.startswith(b"\x30"):  # DER SEQUENCE: PKCS#12 PFX
        return "PKCS12"
    if b"-----BEGIN" in data[:4096]:
        return "PEM"
    return None


def _effective_type(declared: str | None, data: bytes, type_key: str, where: str) -> str:
    found = _sniff(data)
    if found is None:
        raise StoreError(f"{where} is neither PEM text nor a PKCS12 or JKS store")
    if declared is None or declared == found:
        return found
    if declared != "PEM" and found != "PEM":
        return found  # Java reads JKS and PKCS12 under either type name
    raise StoreError(f"{type_key}={declared} but {where} is a {found} file")


def _read(location: str, where: str) -> bytes:
    try:
        with open(location, "rb") as f:
            return f.read()
    except OSError as exc:
        raise StoreError(f"cannot read {where}: {exc.strerror or exc}") from None


# -- PEM ---------------------------------------------------------------------------------


def _load_pem_file(
    context: ssl.SSLContext, location: str, password: str | None, where: str
) -> None:
    try:
        context.load_cert_chain(location, location, password)
    except ssl.SSLError as exc:
        raise StoreError(
            f"cannot load the key store {where}: it needs the private key and the "
            f"certificate chain, and ssl.key.password for an encrypted key ({exc.reason or exc})"
        ) from None


# -- PKCS12 ------------------------------------------------------------------------------


def _open_pkcs12(
    data: bytes, passwords: list[str | None], where: str, password_key: str
) -> pkcs12.PKCS12KeyAndCertificates:
    for password in passwords:
        try:
            return pkcs12.load_pkcs12(data, password.encode() if password else None)
        except ValueError:
            continue
    hint = f"set {password_key}" if not any(passwords) else f"wrong {password_key}"
    raise StoreError(f"cannot open the PKCS12 store {where}: {hint}, or the file is damaged")


def _pkcs12_key(
    data: bytes,
    store_password: str | None,
    key_password: str | None,
    where: str,
    password_key: str,
) -> tuple[object, list[x509.Certificate]]:
    candidates = [store_password] + ([key_password] if key_password != store_password else [])
    store = _open_pkcs12(data, candidates, where, password_key)
    if store.key is None:
        raise StoreError(f"the key store {where} holds no private key (a trust store?)")
    if store.cert is None:
        raise StoreError(f"the key store {where} holds no certificate for its private key")
    chain = [store.cert.certificate] + [c.certificate for c in store.additional_certs]
    return store.key, chain


def _pkcs12_certificates(
    data: bytes, password: str | None, where: str, password_key: str
) -> list[x509.Certificate]:
    store = _open_pkcs12(data, [password], where, password_key)
    certs = [store.cert] if store.cert is not None else []
    return [c.certificate for c in certs + list(store.additional_certs)]


# -- JKS ---------------------------------------------------------------------------------


def _open_jks(data: bytes, password: str | None, where: str, password_key: str) -> object:
    import jks  # pyjks: only stores of type JKS need it

    if not password:
        raise StoreError(f"cannot open the JKS store {where}: set {password_key}")
    try:
        return jks.KeyStore.loads(data, password)
    except jks.util.KeystoreSignatureException:
        raise StoreError(f"cannot open the JKS store {where}: wrong {password_key}") from None
    except (
        jks.util.BadKeystoreFormatException,
        jks.util.UnsupportedKeystoreVersionException,
    ) as exc:
        raise StoreError(f"cannot read the JKS store {where}: {exc}") from None


def _jks_key(
    data: bytes,
    store_password: str | None,
    key_password: str | None,
    where: str,
    password_key: str,
) -> tuple[object, list[x509.Certificate]]:
    import jks

    store = _open_jks(data, store_password, where, password_key)
    entries = list(store.private_keys.values())  # type: ignore[attr-defined]
    if not entries:
        raise StoreError(f"the key store {where} holds no private key (a trust store?)")
    entry = entries[0]  # store order: the first key entry, as keytool lists them
    if not entry.is_decrypted():
        try:
            entry.decrypt(key_password or "")
        except jks.util.DecryptionFailureException:
            raise StoreError(
                f"cannot decrypt the key {entry.alias!r} in {where}: wrong or missing "
                "ssl.key.password"
            ) from None
    key = serialization.load_der_private_key(entry.pkey_pkcs8, None)
    chain = [x509.load_der_x509_certificate(der) for _, der in entry.cert_chain]
    if not chain:
        raise StoreError(f"the key store {where} holds no certificate for its private key")
    return key, chain


def _jks_certificates(
    data: bytes, password: str | None, where: str, password_key: str
) -> list[x509.Certificate]:
    store = _open_jks(data, password, where, password_key)
    certs = [x509.load_der_x509_certificate(e.cert) for e in store.certs.values()]  # type: ignore[attr-defined]
    for entry in store.private_keys.values():  # type: ignore[attr-defined]
        certs += [x509.load_der_x509_certificate(der) for _, der in entry.cert_chain]
    return certs


# -- into the context --------------------------------------------------------------------


def _trust(context: ssl.SSLContext, certs: list[x509.Certificate], where: str) -> None:
    text = "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certs)
    try:
        context.load_verify_locations(cadata=text)
    except ssl.SSLError as exc:
        raise StoreError(f"cannot load the trust store {where}: {exc.reason or exc}") from None


def _load_key_and_chain(
    context: ssl.SSLContext, key: object, chain: list[x509.Certificate], where: str
) -> None:
    """Hand a key and chain to ``load_cert_chain``, which reads only files: the key goes
    to a 0600 temp file encrypted with a random one-time password, removed right after."""
    one_time = secrets.token_urlsafe(32)
    try:
        key_pem = key.private_bytes(  # type: ignore[attr-defined]
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(one_time.encode()),
        )
    except (AttributeError, TypeError, ValueError) as exc:
        raise StoreError(f"the private key in {where} cannot be used: {exc}") from None
    chain_pem = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain)
    fd, path = tempfile.mkstemp(prefix="sluice-key-", suffix=".pem")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(key_pem + chain_pem)
        context.load_cert_chain(path, path, one_time)
    except ssl.SSLError as exc:
        raise StoreError(
            f"cannot load the key store {where}: {exc.reason or exc} (does the first "
            "certificate belong to the key?)"
        ) from None
    finally:
        os.unlink(path)
