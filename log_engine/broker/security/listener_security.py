"""One listener's security: its TLS context and the SASL mechanisms it accepts.

Settings are Kafka's broker keys, each looked up first with the listener prefix
``listener.name.<listener name lower-case>.`` and then bare (Kafka's override
rule). Key stores and trust stores may be PEM, PKCS12 or JKS
(:mod:`log_engine.client.tls_stores`); ``ssl.enabled.protocols``,
``ssl.protocol`` and ``ssl.cipher.suites`` narrow the context
(:mod:`log_engine.client.tls_policy`); ``ssl.principal.mapping.rules`` maps client
certificate subjects to principals (:mod:`.principal_mapping`).
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from log_engine.broker.security.principal_mapping import PrincipalMapper, PrincipalRulesError
from log_engine.broker.security.reauthentication import (
    AuthenticationStats,
    ReauthConfigError,
    max_reauth_ms_by_mechanism,
)
from log_engine.broker.security.scram_store import (
    MIN_ITERATIONS,
    SCRAM_MECHANISMS,
    ScramCredential,
    ScramCredentialStore,
    ScramLookup,
    store_for,
)
from log_engine.client.tls_policy import apply_tls_policy
from log_engine.client.tls_stores import StoreError, StoreKeys, load_keystore, load_truststore
from log_engine.jaas import JaasConfigError, parse_jaas

SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
TLS_PROTOCOLS = ("SSL", "SASL_SSL")
SUPPORTED_MECHANISMS = ("PLAIN", *SCRAM_MECHANISMS)
_CLIENT_AUTH = {
    "none": ssl.CERT_NONE,
    "requested": ssl.CERT_OPTIONAL,
    "required": ssl.CERT_REQUIRED,
}
MAX_ITERATIONS = 16384  # Kafka's bound for SCRAM credentials
_BOOTSTRAP_ENTRY = re.compile(r"(SCRAM-SHA-(?:256|512))=\[([^\]]*)\]")


class SecurityConfigError(ValueError):
    """A security setting is missing or wrong (messages never hold secrets)."""


@dataclass
class ListenerSecurity:
    """What a listener needs to secure its connections.

    ``ssl_context`` is set for SSL and SASL_SSL; ``mechanisms`` is non-empty for
    SASL_PLAINTEXT and SASL_SSL; ``plain_users`` maps PLAIN user -> password (from
    the JAAS config); SCRAM credentials come from ``scram``. ``max_reauth_ms``
    bounds a SASL session's lifetime per mechanism (0: none, see
    :mod:`.reauthentication`); ``stats`` counts the listener's logins.
    """

    listener_name: str
    protocol: str
    ssl_context: ssl.SSLContext | None = None
    client_auth: str = "none"
    mechanisms: tuple[str, ...] = ()
    plain_users: dict[str, str] = field(default_factory=dict)
    scram: ScramLookup | None = None
    failed_auth_delay_ms: int = 100
    principal_mapper: PrincipalMapper = field(default_factory=lambda: PrincipalMapper(None))
    max_reauth_ms: dict[str, int] = field(default_factory=dict)
    stats: AuthenticationStats = field(default_factory=AuthenticationStats)

    @property
    def sasl(self) -> bool:
        return self.protocol in SASL_PROTOCOLS

    @classmethod
    def build(
        cls,
        listener_name: str,
        protocol: str,
        settings: Mapping[str, str],
        log_dir: Path,
    ) -> ListenerSecurity:
        """Read the listener's settings; :class:`SecurityConfigError` names the bad key."""
        lookup = _Lookup(listener_name, settings)
        security = cls(listener_name, protocol)
        delay = settings.get("connection.failed.authentication.delay.ms", "100")
        if not delay.isdigit():
            raise SecurityConfigError(
                f"connection.failed.authentication.delay.ms={delay!r} is not a non-negative integer"
            )
        security.failed_auth_delay_ms = int(delay)
        if protocol in TLS_PROTOCOLS:
            security.ssl_context, security.client_auth = _ssl_context(lookup)
            try:
                security.principal_mapper = PrincipalMapper(
                    lookup.get("ssl.principal.mapping.rules")
                )
            except PrincipalRulesError as exc:
                raise SecurityConfigError(
                    str(exc).replace(
                        "ssl.principal.mapping.rules", lookup.name("ssl.principal.mapping.rules"), 1
                    )
                ) from None
        if protocol in SASL_PROTOCOLS:
            security.mechanisms = _mechanisms(lookup)
            try:
                security.max_reauth_ms = max_reauth_ms_by_mechanism(
                    listener_name, security.mechanisms, settings
                )
            except ReauthConfigError as exc:
                raise SecurityConfigError(str(exc)) from None
            if "PLAIN" in security.mechanisms:
                security.plain_users = _plain_users(lookup)
            if any(m in SCRAM_MECHANISMS for m in security.mechanisms):
                store = store_for(log_dir)
                bootstrap = settings.get("sasl.scram.bootstrap.users", "")
                bootstrap_scram_users(store, bootstrap)
                security.scram = store
        return security


class _Lookup:
    """Kafka's per-listener override rule for one listener."""

    def __init__(self, listener_name: str, settings: Mapping[str, str]) -> None:
        self.prefix = f"listener.name.{listener_name.lower()}."
        self.settings = settings

    def get(self, key: str, default: str | None = None) -> str | None:
        value = self.settings.get(self.prefix + key)
        if value is None:
            value = self.settings.get(key, default)
        return value

    def name(self, key: str) -> str:
        """The key as the user should set it (prefixed when the prefixed one is set)."""
        return self.prefix + key if self.prefix + key in self.settings else key


def _ssl_context(lookup: _Lookup) -> tuple[ssl.SSLContext, str]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    keys = StoreKeys(lookup.get, lookup.name)
    try:
        apply_tls_policy(context, keys)
        if not load_keystore(context, keys):
            raise SecurityConfigError(
                f"listener {lookup.prefix.split('.')[2].upper()} uses TLS: set "
                "ssl.keystore.location (a PEM, PKCS12 or JKS key store) or "
                "ssl.keystore.certificate.chain and ssl.keystore.key"
            )
        client_auth = (lookup.get("ssl.client.auth") or "none").lower()
        if client_auth not in _CLIENT_AUTH:
            raise SecurityConfigError(
                f"{lookup.name('ssl.client.auth')}={client_auth!r}: "
                "one of none, requested, required"
            )
        trusted = load_truststore(context, keys)
    except StoreError as exc:
        raise SecurityConfigError(str(exc)) from None
    if client_auth != "none" and not trusted:
        raise SecurityConfigError(
            f"ssl.client.auth={client_auth} needs ssl.truststore.location or "
            "ssl.truststore.certificates (the CAs client certificates must chain to)"
        )
    context.verify_mode = _CLIENT_AUTH[client_auth]
    return context, client_auth


def _mechanisms(lookup: _Lookup) -> tuple[str, ...]:
    text = lookup.get("sasl.enabled.mechanisms")
    if text is None:
        raise SecurityConfigError(
            f"{lookup.prefix}sasl.enabled.mechanisms (or sasl.enabled.mechanisms) must be "
            f"set on a SASL listener: some of {', '.join(SUPPORTED_MECHANISMS)}"
        )
    mechanisms = tuple(m.strip().upper() for m in text.split(",") if m.strip())
    unknown = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
    if unknown or not mechanisms:
        raise SecurityConfigError(
            f"{lookup.name('sasl.enabled.mechanisms')}={text!r}: supported are "
            f"{', '.join(SUPPORTED_MECHANISMS)}"
        )
    return mechanisms


def _plain_users(lookup: _Lookup) -> dict[str, str]:
    key = "plain.sasl.jaas.config"
    text = lookup.get(key)
    if not text:
        raise SecurityConfigError(
            f"PLAIN is enabled: set {lookup.prefix}{key} to a PlainLoginModule entry "
            'with user_<name>="<password>" options'
        )
    try:
        entry = parse_jaas(text, lookup.name(key))
    except JaasConfigError as exc:
        raise SecurityConfigError(str(exc)) from None
    if not entry.login_module.endswith("PlainLoginModule"):
        raise SecurityConfigError(f"{lookup.name(key)}: expected PlainLoginModule")
    users = entry.users()
    if not users:
        raise SecurityConfigError(f"{lookup.name(key)}: no user_<name>=... option")
    return users


@dataclass(frozen=True)
class ScramEntry:
    """One credential of Kafka's ``--add-scram`` syntax (the password in clear)."""

    mechanism: str
    name: str
    password: str = field(repr=False)
    iterations: int = MIN_ITERATIONS


def parse_scram_entries(text: str, source: str = "sasl.scram.bootstrap.users") -> list[ScramEntry]:
    """Kafka's ``--add-scram`` syntax, e.g. ``SCRAM-SHA-512=[name=admin,password=admin-secret]``
    (several separated by spaces or ``;``); ``iterations=N`` optional (4096-16384,
    Kafka's bounds).
    ``source`` names the setting in error messages."""
    entries: list[ScramEntry] = []
    found = _BOOTSTRAP_ENTRY.findall(text)
    if text.strip() and not found:
        raise SecurityConfigError(
            f"{source}: expected SCRAM-SHA-256=[name=...,password=...] or SCRAM-SHA-512=[...]"
        )
    for mechanism, body in found:
        options = dict(part.split("=", 1) for part in body.split(",") if "=" in part)
        options = {k.strip(): v.strip().strip('"') for k, v in options.items()}
        if "name" not in options or "password" not in options:
            raise SecurityConfigError(f"{source}: {mechanism} entry needs name= and password=")
        iterations = options.get("iterations", str(MIN_ITERATIONS))
        if not iterations.isdigit() or not MIN_ITERATIONS <= int(iterations) <= MAX_ITERATIONS:
            raise SecurityConfigError(
                f"{source}: iterations={iterations!r} of user {options['name']} is not "
                f"a number in {MIN_ITERATIONS}-{MAX_ITERATIONS}"
            )
        entries.append(ScramEntry(mechanism, options["name"], options["password"], int(iterations)))
    return entries


def bootstrap_scram_users(store: ScramCredentialStore, text: str) -> None:
    """``sasl.scram.bootstrap.users`` (:func:`parse_scram_entries`) into this broker's
    local store. A user already in the store keeps its stored credential (a password
    changed through the admin API wins)."""
    for entry in parse_scram_entries(text):
        if store.get(entry.mechanism, entry.name) is None:
            store.set(
                entry.mechanism,
                entry.name,
                ScramCredential.from_password(entry.mechanism, entry.password, entry.iterations),
            )
