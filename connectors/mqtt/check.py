"""``check(props)`` for both MQTT connectors: a real connection to the broker.

Each URI of ``mqtt.server.uri`` is tried in order with a throw-away client id
and a clean session (so a running task's session is never touched), until a
broker accepts the CONNECT. When none does, every URI's problem is reported:
unreachable (refused, timed out, TLS failure) or refused by the broker (bad
user name or password, not authorized).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import paho.mqtt.client as mqtt

from connectors.mqtt.config import MqttConnectionConfig, ServerUri
from connectors.mqtt.connection import describe_os_error, make_client


def check_connection(config: MqttConnectionConfig) -> list[str]:
    """Problems connecting to the configured brokers (``[]`` once one accepts)."""
    problems = []
    for uri in config.uris:
        problem = _try(config, uri)
        if problem is None:
            return []
        problems.append(problem)
    return problems


def _try(config: MqttConnectionConfig, uri: ServerUri) -> str | None:
    client = make_client(config, f"sluice-check-{uuid.uuid4().hex[:12]}", clean_session=True)
    outcome: dict[str, Any] = {}

    def on_connect(
        client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any
    ) -> None:
        outcome["reason"] = reason

    client.on_connect = on_connect
    try:
        client.connect(uri.host, uri.port, config.keepalive_s)
    except OSError as exc:
        return f"mqtt.server.uri: cannot connect to {uri}: {describe_os_error(exc)}"
    try:
        deadline = time.monotonic() + config.connect_timeout_s
        while "reason" not in outcome and time.monotonic() < deadline:
            if client.loop(timeout=0.1) not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_CONN_REFUSED):
                break
    finally:
        client.disconnect()
        client.loop(timeout=0.1)
    reason = outcome.get("reason")
    if reason is None:
        return f"mqtt.server.uri: {uri} did not answer the MQTT CONNECT (is it an MQTT broker?)"
    if reason.is_failure:
        key = "mqtt.username/mqtt.password" if _is_auth_failure(reason) else "mqtt.server.uri"
        return f"{key}: {uri} refused the connection: {reason}"
    return None


def _is_auth_failure(reason: Any) -> bool:
    text = str(reason).lower()
    return "user name" in text or "password" in text or "not authorized" in text
