"""The broker as a client of another node: its own security settings for a listener.

A follower fetching from a leader (and, later, a broker reaching the
controllers) connects to a listener of the other node with that listener's
security protocol and Kafka's broker keys for the broker's own credentials:

- SASL: the mechanism from ``sasl.mechanism.inter.broker.protocol`` (for the
  controller listener ``sasl.mechanism.controller.protocol``), default: the
  listener's first ``sasl.enabled.mechanisms`` entry; the user name and
  password from the ``username=``/``password=`` options of
  ``listener.name.<listener>.<mechanism>.sasl.jaas.config`` (the same entry
  whose ``user_<name>`` options list PLAIN's users), else
  ``listener.name.<listener>.sasl.jaas.config``, else ``sasl.jaas.config``.
- TLS: the CAs to trust from ``ssl.truststore.*``, the broker's own key
  store (``ssl.keystore.*``, any type) as client certificate when the other side asks
  for one, ``ssl.endpoint.identification.algorithm`` (default ``https``: the
  certificate must name the host), ``ssl.enabled.protocols``, ``ssl.protocol``
  and ``ssl.cipher.suites`` (the listener's own versions and suites), each with Kafka's
  ``listener.name.<listener>.`` override first.

The result is a mapping of client keys (:class:`log_engine.client.config.ClientConfig`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from log_engine.broker.security.listener_security import (
    SASL_PROTOCOLS,
    TLS_PROTOCOLS,
    SecurityConfigError,
)
from log_engine.jaas import JaasConfigError, parse_jaas

INTER_BROKER_MECHANISM = "sasl.mechanism.inter.broker.protocol"
CONTROLLER_MECHANISM = "sasl.mechanism.controller.protocol"


def client_settings(
    listener_name: str,
    protocol: str,
    settings: Mapping[str, str],
    mechanism_key: str = INTER_BROKER_MECHANISM,
) -> dict[str, str]:
    """Client keys for connecting to ``listener_name`` (security ``protocol``) of
    another node; :class:`SecurityConfigError` names a missing or bad key."""
    prefix = f"listener.name.{listener_name.lower()}."

    def get(key: str) -> str | None:
        value = settings.get(prefix + key)
        return value if value is not None else settings.get(key)

    out: dict[str, str] = {"security.protocol": protocol}
    if protocol in TLS_PROTOCOLS:
        out["ssl.endpoint.identification.algorithm"] = (
            get("ssl.endpoint.identification.algorithm") or "https"
        ).lower()
        if location := get("ssl.truststore.location"):
            out["ssl.ca.location"] = location
        elif text := get("ssl.truststore.certificates"):
            out["ssl.ca.pem"] = text
        if get("ssl.keystore.location"):
            keystore_keys: tuple[str, ...] = ("ssl.keystore.location", "ssl.keystore.password")
        else:
            keystore_keys = ("ssl.keystore.certificate.chain", "ssl.keystore.key")
        for key in (
            "ssl.truststore.type",
            "ssl.truststore.password",
            "ssl.keystore.type",
            "ssl.key.password",
            "ssl.enabled.protocols",
            "ssl.protocol",
            "ssl.cipher.suites",
            *keystore_keys,
        ):
            if value := get(key):
                out[key] = value
    if protocol in SASL_PROTOCOLS:
        mechanism = _mechanism(get, mechanism_key)
        out["sasl.mechanism"] = mechanism
        user, password = _credentials(settings, prefix, mechanism, listener_name)
        out["sasl.username"] = user
        out["sasl.password"] = password
    return out


def _mechanism(get: Callable[[str], str | None], mechanism_key: str) -> str:
    mechanism = get(mechanism_key)  # a listener prefix is not Kafka's, but harmless
    if mechanism is None:
        enabled = get("sasl.enabled.mechanisms") or ""
        first = next((m.strip() for m in enabled.split(",") if m.strip()), None)
        if first is None:
            raise SecurityConfigError(
                f"{mechanism_key} is not set and no sasl.enabled.mechanisms to default to"
            )
        mechanism = first
    mechanism = mechanism.strip().upper()
    if mechanism not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        raise SecurityConfigError(
            f"{mechanism_key}={mechanism}: the broker's own client speaks PLAIN, "
            "SCRAM-SHA-256 or SCRAM-SHA-512"
        )
    return mechanism


def _credentials(
    settings: Mapping[str, str], prefix: str, mechanism: str, listener_name: str
) -> tuple[str, str]:
    keys = (
        f"{prefix}{mechanism.lower()}.sasl.jaas.config",
        f"{prefix}sasl.jaas.config",
        "sasl.jaas.config",
    )
    key = next((k for k in keys if settings.get(k)), None)
    if key is None:
        raise SecurityConfigError(
            f"the broker connects to listener {listener_name} with SASL {mechanism}: set "
            f'{keys[0]} with username="..." password="..." (its own credentials)'
        )
    try:
        entry = parse_jaas(settings[key], key)
    except JaasConfigError as exc:
        raise SecurityConfigError(str(exc)) from None
    user, password = entry.options.get("username"), entry.options.get("password")
    if not user or password is None:
        raise SecurityConfigError(
            f'{key}: the broker\'s own credentials need username="..." and password="..."'
        )
    return user, password
