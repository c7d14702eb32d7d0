"""One TCP connection to one broker: framing, correlation, pipelining, versions.

Requests are written as soon as an in-flight slot is free (at most
``max.in.flight.requests.per.connection`` await their responses); a reader task
matches each response to its request by correlation id. A broker answers the
requests of one connection in order, so a response for anything but the oldest
pending request means the stream is broken and the connection is closed.

On connect the connection negotiates versions (KIP-511): it sends ApiVersions
at the newest version the client speaks (v4, flexible, naming the client
software); a broker that does not know it answers with a v0 body carrying
error 35 and its own ApiVersions range (a Sluice broker serves v0-2), and the
request is repeated at the highest version both sides know. For every other
API the connection then uses the highest version that both ``CLIENT_VERSIONS``
(what the client speaks, flexible versions included) and the broker allow.

A SASL connection whose broker gave the session a lifetime (KIP-368,
``connections.max.reauth.ms``) re-authenticates on the same connection once
the point :func:`security.reauthentication_delay_s` picked has passed: the
next request waits, the requests in flight are answered, SaslHandshake and
SaslAuthenticate go out alone, then requests flow again. A refused
re-authentication (a changed password) closes the connection and raises
SASL_AUTHENTICATION_FAILED to the requests that waited for it.

Failures are retriable Kafka errors: a dropped or refused connection is
``NETWORK_EXCEPTION``, a request without a response within its timeout is
``REQUEST_TIMED_OUT`` and closes the connection (later responses would queue
behind the missing one). A closed connection is never reopened; the cluster
opens a new one.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from log_engine.client import errors, security
from log_engine.client.config import ClientConfig
from log_engine.errors import ErrorCode
from log_engine.protocol import ApiKey, decode_response, encode_request
from log_engine.protocol.versions import CLIENT_VERSIONS

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
_STREAM_LIMIT_BYTES = 4 * 1024 * 1024  # reader buffer high-water mark
_APIVERSIONS_PREFERRED = CLIENT_VERSIONS[ApiKey.API_VERSIONS][1]
_CLIENT_SOFTWARE = {"client_software_name": "sluice", "client_software_version": "0.1.0"}
_INT32_MAX = 2**31 - 1


@dataclass(slots=True)
class _Pending:
    api_key: ApiKey
    version: int
    future: asyncio.Future[dict[str, Any]]
    timer: asyncio.TimerHandle | None


class BrokerConnection:
    """A pipelined connection to one broker, with its negotiated API versions.

    Use :meth:`open` to connect and negotiate; :meth:`send` returns the decoded
    response body. ``node_id`` is the broker's id, or ``None`` for a bootstrap
    address whose id is not known yet.
    """

    def __init__(
        self, host: str, port: int, config: ClientConfig, node_id: int | None = None
    ) -> None:
        self.host = host
        self.port = port
        self.node_id = node_id
        self._config = config
        self._client_id = config.client_id
        self._max_frame_bytes = config.receive_message_max_bytes
        self._slots = asyncio.Semaphore(config.max_in_flight_requests_per_connection)
        self._pending: dict[int, _Pending] = {}
        self._next_correlation_id = 0
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._read_task: asyncio.Task[None] | None = None
        self._versions: dict[ApiKey, int] = {}
        self._closed = False
        self._close_reason = "connection not opened"
        self._reauth_at: float | None = None  # loop.time() to re-authenticate after
        self._reauth_task: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"<BrokerConnection node={self.node_id} {self.host}:{self.port}>"

    @classmethod
    async def open(
        cls, host: str, port: int, config: ClientConfig, node_id: int | None = None
    ) -> BrokerConnection:
        """Connect, negotiate API versions and return the ready connection."""
        conn = cls(host, port, config, node_id)
        timeout_s = config.socket_connection_setup_timeout_ms / 1000
        try:
            async with asyncio.timeout(timeout_s):
                await conn._connect()
                await conn._negotiate_versions()
                if config.security_protocol.startswith("SASL_"):
                    lifetime_ms = await security.authenticate(conn.send, conn.where, config)
                    conn._schedule_reauthentication(lifetime_ms)
        except TimeoutError:
            conn.close(f"connection setup took more than {timeout_s}s")
            raise errors.network_error(f"{conn!r}: connection setup timed out") from None
        except BaseException:
            conn.close("connection setup failed")
            raise
        return conn

    @property
    def where(self) -> str:
        """``host:port``, for error messages."""
        return f"{self.host}:{self.port}"

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_flight(self) -> int:
        """Requests sent and awaiting their response."""
        return len(self._pending)

    @property
    def has_free_slot(self) -> bool:
        """Whether a request sent now would go out without waiting for a slot."""
        return not self._closed and len(self._pending) < (
            self._config.max_in_flight_requests_per_connection
        )

    @property
    def api_versions(self) -> Mapping[ApiKey, int]:
        """The version used per API, after negotiation."""
        return self._versions

    def api_version(self, api_key: ApiKey) -> int:
        """The negotiated version of ``api_key``; raises UNSUPPORTED_VERSION if none overlap."""
        try:
            return self._versions[api_key]
        except KeyError:
            raise errors.kafka_error(
                ErrorCode.UNSUPPORTED_VERSION,
                f"{self!r} supports no version of {api_key.name} that this client implements",
            ) from None

    async def send(
        self,
        api_key: ApiKey,
        body: dict[str, Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> dict[str, Any]:
        """Send one request and return its decoded response body."""
        if version is None:
            version = self.api_version(api_key)
        await self._acquire_slot()
        try:
            future = self._write(api_key, version, body, timeout_ms)
            assert self._writer is not None
            if self._writer.transport.get_write_buffer_size() > _STREAM_LIMIT_BYTES:
                await self._drain()
            return await future
        finally:
            self._slots.release()

    async def send_no_response(self, api_key: ApiKey, body: dict[str, Any]) -> None:
        """Send a request the broker does not answer (Produce with acks=0)."""
        await self._acquire_slot()
        try:
            self._check_open()
            frame = encode_request(
                api_key,
                self.api_version(api_key),
                self._take_correlation_id(),
                self._client_id,
                body,
            )
            assert self._writer is not None
            self._writer.write(frame)
            await self._drain()
            self._check_open()
        finally:
            self._slots.release()

    def close(self, reason: str = "closed by the client") -> None:
        """Close the socket and fail every pending request with NETWORK_EXCEPTION."""
        if self._closed:
            return
        self._closed = True
        self._close_reason = reason
        if self._writer is not None:
            self._writer.close()
        if self._read_task is not None and self._read_task is not asyncio.current_task():
            self._read_task.cancel()
        pending, self._pending = self._pending, {}
        for entry in pending.values():
            if entry.timer is not None:
                entry.timer.cancel()
            if not entry.future.done():
                entry.future.set_exception(errors.network_error(f"{self!r} closed: {reason}"))
        log.debug("%r closed: %s", self, reason)

    async def wait_closed(self) -> None:
        """Wait until the reader task has finished after :meth:`close`."""
        if self._read_task is not None:
            await asyncio.gather(self._read_task, return_exceptions=True)

    # -- internals -----------------------------------------------------------------------

    def _schedule_reauthentication(self, session_lifetime_ms: int) -> None:
        delay_s = security.reauthentication_delay_s(session_lifetime_ms)
        self._reauth_at = (
            None if delay_s is None else asyncio.get_running_loop().time() + delay_s
        )

    def _reauthentication_due(self) -> bool:
        return self._reauth_task is not None or (
            self._reauth_at is not None and asyncio.get_running_loop().time() >= self._reauth_at
        )

    async def _acquire_slot(self) -> None:
        """An in-flight slot, after re-authenticating if the session is near its end
        (checked again once the slot is ours: waiting for it may take a while)."""
        while True:
            if self._reauthentication_due():
                if self._reauth_task is None:
                    self._reauth_task = asyncio.get_running_loop().create_task(
                        self._reauthenticate()
                    )
                # every request arriving meanwhile waits for the same re-authentication
                await asyncio.shield(self._reauth_task)
            await self._slots.acquire()
            if not self._reauthentication_due():
                return
            self._slots.release()

    async def _reauthenticate(self) -> None:
        slots = self._config.max_in_flight_requests_per_connection
        held = 0
        try:
            for _ in range(slots):  # holding every slot: nothing else is in flight
                await self._slots.acquire()
                held += 1
            lifetime_ms = await security.authenticate(self._send_alone, self.where, self._config)
            self._schedule_reauthentication(lifetime_ms)
            log.debug("%r re-authenticated; session lifetime %d ms", self, lifetime_ms)
        except BaseException as exc:
            self._reauth_at = None  # the requests still waiting fail as the connection closed
            self.close(f"re-authentication failed: {exc}")
            raise
        finally:
            for _ in range(held):
                self._slots.release()
            self._reauth_task = None

    async def _send_alone(self, api_key: ApiKey, body: dict[str, Any]) -> dict[str, Any]:
        """Send while :meth:`_reauthenticate` holds every slot."""
        return await self._write(api_key, self.api_version(api_key), body, None)

    async def _connect(self) -> None:
        context = security.ssl_context(self._config)
        try:
            self._reader, self._writer = await asyncio.open_connection(
                self.host,
                self.port,
                limit=_STREAM_LIMIT_BYTES,
                ssl=context,
                server_hostname=self.host if context is not None else None,
            )
        except ssl.SSLError as exc:
            raise security.SslAuthenticationError(
                f"TLS handshake with {self.host}:{self.port} failed: {exc.reason or exc}"
            ) from None
        except OSError as exc:
            raise errors.network_error(f"cannot connect to {self.host}:{self.port}: {exc}") from exc
        self._closed = False
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop())

    async def _negotiate_versions(self) -> None:
        version = _APIVERSIONS_PREFERRED
        body = await self.send(ApiKey.API_VERSIONS, _CLIENT_SOFTWARE, version=version)
        if body["error_code"] == ErrorCode.UNSUPPORTED_VERSION and version > 0:
            broker_max = next(
                (k["max_version"] for k in body["api_keys"] if k["api_key"] == ApiKey.API_VERSIONS),
                0,
            )
            version = max(0, min(broker_max, version))
            body = await self.send(ApiKey.API_VERSIONS, _CLIENT_SOFTWARE, version=version)
        errors.check_error(body["error_code"], f"ApiVersions v{version} to {self.host}:{self.port}")
        self._versions = choose_versions(body["api_keys"])

    def _take_correlation_id(self) -> int:
        correlation_id = self._next_correlation_id
        self._next_correlation_id = (correlation_id + 1) & _INT32_MAX
        return correlation_id

    def _check_open(self) -> None:
        if self._closed:
            raise errors.network_error(f"{self!r} is closed: {self._close_reason}")

    def _write(
        self, api_key: ApiKey, version: int, body: dict[str, Any], timeout_ms: int | None
    ) -> asyncio.Future[dict[str, Any]]:
        self._check_open()
        correlation_id = self._take_correlation_id()
        frame = encode_request(api_key, version, correlation_id, self._client_id, body)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        timeout_s = (
            timeout_ms if timeout_ms is not None else self._config.request_timeout_ms
        ) / 1000
        timer = loop.call_later(timeout_s, self._expire, correlation_id, timeout_s)
        self._pending[correlation_id] = _Pending(api_key, version, future, timer)
        assert self._writer is not None
        self._writer.write(frame)
        return future

    async def _drain(self) -> None:
        """Wait for the socket buffer to empty; a failure closes the connection."""
        assert self._writer is not None
        try:
            await self._writer.drain()
        except (OSError, RuntimeError) as exc:
            self.close(f"write failed: {exc!r}")

    def _expire(self, correlation_id: int, timeout_s: float) -> None:
        entry = self._pending.pop(correlation_id, None)
        if entry is None or entry.future.done():
            return
        entry.future.set_exception(
            errors.timeout_error(
                f"{self!r}: no response to {entry.api_key.name} v{entry.version} "
                f"within {timeout_s:g}s"
            )
        )
        self.close(f"{entry.api_key.name} request timed out")

    async def _read_loop(self) -> None:
        reader = self._reader
        assert reader is not None
        reason = "broker closed the connection"
        try:
            while True:
                size_bytes = await reader.readexactly(4)
                (size,) = _SIZE.unpack(size_bytes)
                if size < 4 or size > self._max_frame_bytes:
                    reason = f"response size {size} outside [4, {self._max_frame_bytes}]"
                    break
                frame = await reader.readexactly(size)
                failure = self._dispatch(frame)
                if failure is not None:
                    reason = failure
                    break
        except (asyncio.IncompleteReadError, OSError) as exc:
            reason = f"read failed: {exc!r}"
        except asyncio.CancelledError:
            return
        self.close(reason)

    def _dispatch(self, frame: bytes) -> str | None:
        """Complete the request ``frame`` answers; a reason to close the connection if any."""
        (correlation_id,) = _SIZE.unpack_from(frame, 0)
        if not self._pending or next(iter(self._pending)) != correlation_id:
            return f"response with correlation id {correlation_id} is not the oldest pending"
        entry = self._pending.pop(correlation_id)
        if entry.timer is not None:
            entry.timer.cancel()
        try:
            body = self._decode(entry, frame)
        except Exception as exc:  # the stream can no longer be trusted
            if not entry.future.done():
                entry.future.set_exception(
                    errors.CorruptResponseError(
                        f"{self!r}: cannot decode {entry.api_key.name} v{entry.version}: {exc}"
                    )
                )
            return f"undecodable {entry.api_key.name} response"
        if not entry.future.done():
            entry.future.set_result(body)
        return None

    @staticmethod
    def _decode(entry: _Pending, frame: bytes) -> dict[str, Any]:
        # decode_response re-reads an unparsable ApiVersions answer as v0 (KIP-511).
        return decode_response(entry.api_key, entry.version, frame)[1]


def choose_versions(broker_ranges: list[dict[str, Any]]) -> dict[ApiKey, int]:
    """Per API, the highest version in both ``CLIENT_VERSIONS`` and the broker's range."""
    chosen: dict[ApiKey, int] = {}
    for entry in broker_ranges:
        try:
            api_key = ApiKey(entry["api_key"])
        except ValueError:
            continue
        ours = CLIENT_VERSIONS.get(api_key)
        if ours is None:
            continue
        high = min(ours[1], entry["max_version"])
        if high >= max(ours[0], entry["min_version"]):
            chosen[api_key] = high
    return chosen
