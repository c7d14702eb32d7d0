"""Serving the REST app on every ``listeners`` entry, HTTP or HTTPS, for both worker commands.

Each listener's socket is bound first (a busy port fails the start at once)
and served by its own uvicorn server on its own thread; an ``https://``
listener gets the TLS context of :mod:`connect_worker.security.rest_tls`.
With ``rest.extension.classes`` naming Connect's basic-auth extension, the
users are read before anything is served (:mod:`connect_worker.security.jaas_file`),
so a bad JAAS file stops the start with a clear message.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import uvicorn

from connect_worker.rest.app import create_app
from connect_worker.security.jaas_file import (
    JaasFileError,
    RestUsers,
    jaas_file_from_env,
    load_rest_users,
)
from connect_worker.security.rest_tls import RestTlsError, RestTlsSettings
from connect_worker.worker_config import WorkerConfig

log = logging.getLogger(__name__)

_REST_STOP_TIMEOUT_S = 10.0
_GRACEFUL_SHUTDOWN_S = 3


class StartupError(Exception):
    """A part of the worker could not start; the message says which and why."""


def bind_rest_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise StartupError(f"REST API cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


class _UvicornServer(uvicorn.Server):
    """uvicorn's server, whose stop drops idle keep-alive connections at once.

    uvicorn ends an idle connection with ``transport.close()``. Over TLS that
    sends close_notify and waits for the client's, which an idle client (a
    pooled HTTP client, another worker's forwarding client) does not send
    until it next uses the connection: every stop of an HTTPS worker waited the
    whole graceful timeout and logged an ERROR. Connections in the middle of a
    request are left to finish, as before.
    """

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for connection in list(self.server_state.connections):
            cycle = getattr(connection, "cycle", None)
            transport = getattr(connection, "transport", None)
            if transport is not None and (cycle is None or cycle.response_complete):
                transport.abort()
        await super().shutdown(sockets)


class RestServer:
    """uvicorn serving the app on already bound sockets (one thread per listener)."""

    def __init__(
        self, app: Any, sockets: list[tuple[socket.socket, ssl.SSLContext | None]]
    ) -> None:
        self._sockets = [sock for sock, _ in sockets]
        self._servers = []
        self._threads = []
        for sock, context in sockets:
            factory = None if context is None else _fixed_context(context)
            config = uvicorn.Config(
                app,
                log_config=None,
                access_log=False,
                lifespan="off",
                ssl_context_factory=factory,
                # a stop waits this long for requests in flight, then closes what is
                # left (an idle keep-alive connection, an open console) instead of
                # waiting for clients to hang up
                timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_S,
            )
            server = _UvicornServer(config)
            self._servers.append(server)
            self._threads.append(
                threading.Thread(
                    target=self._serve, args=(server, sock), name="rest-api", daemon=True
                )
            )

    @staticmethod
    def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
        try:
            server.run(sockets=[sock])
        except BaseException:  # uvicorn exits the thread with SystemExit on errors
            log.exception("the REST server stopped")

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def alive(self) -> bool:
        return all(thread.is_alive() for thread in self._threads)

    def stop(self) -> None:
        for server in self._servers:
            server.should_exit = True
        for thread in self._threads:
            thread.join(_REST_STOP_TIMEOUT_S)
        for sock in self._sockets:
            sock.close()


def _fixed_context(context: ssl.SSLContext) -> Any:
    def factory(config: uvicorn.Config, default: Any) -> ssl.SSLContext:
        return context

    return factory


def rest_users(config: WorkerConfig) -> RestUsers | None:
    """The users of basic authentication, when ``rest.extension.classes`` asks for it."""
    if not config.rest_basic_auth:
        return None
    path: Path | None = config.rest_basic_auth_jaas_config
    if path is None:
        path = jaas_file_from_env(os.environ.get("KAFKA_OPTS"))
    if path is None:
        raise StartupError(
            "rest.extension.classes names BasicAuthSecurityRestExtension: set "
            "rest.basic.auth.jaas.config (or -Djava.security.auth.login.config=... in "
            "KAFKA_OPTS) to the JAAS file naming the users file"
        )
    try:
        return load_rest_users(path)
    except JaasFileError as exc:
        raise StartupError(f"REST basic authentication: {exc}") from None


def rest_urls(config: WorkerConfig) -> str:
    return ", ".join(f"{s}://{h}:{p}" for s, h, p in config.rest_listeners)


def start_rest(running: contextlib.ExitStack, config: WorkerConfig) -> tuple[Any, RestServer]:
    """Bind ``listeners`` and serve at once (``/health`` answers 503 "starting" until
    :func:`~connect_worker.rest.app.attach` gives the app its herder); ``running`` stops it."""
    users = rest_users(config)
    sockets: list[tuple[socket.socket, ssl.SSLContext | None]] = []
    for scheme, host, port in config.rest_listeners:
        context = None
        if scheme == "https":
            try:
                context = RestTlsSettings(config.props).server_context()
            except RestTlsError as exc:
                raise StartupError(f"listener https://{host}:{port}: {exc}") from None
        sock = bind_rest_socket(host, port)
        running.callback(_close_quietly, sock)
        sockets.append((sock, context))
    app = create_app(
        None, None, request_max_bytes=config.rest_request_max_bytes, basic_auth_users=users
    )
    rest = RestServer(app, sockets)
    rest.start()
    running.callback(_stop_quietly, rest)
    if users is not None:
        log.info("REST API: basic authentication, %d user(s) from %s", len(users.passwords),
                 users.source)
    return app, rest


def _close_quietly(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()


def _stop_quietly(rest: RestServer) -> None:
    try:
        rest.stop()
    except Exception:
        log.exception("stopping the rest failed")
