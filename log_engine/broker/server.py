"""The broker's TCP server: framing, request dispatch and zero-copy responses.

Each connection is one asyncio task reading ``int32 size`` + frame, decoding the
request, awaiting its handler and writing the response before reading the next
request, so responses go out in request order (as Kafka mutes a channel while a
request is in flight). A slow or dead client only holds its own task; idle
connections are closed after ``connections.max.idle.ms``.

Bad input never reaches storage undetected and never stops the server: a frame
over ``socket.request.max.bytes``, an unknown API key, an unsupported version
(other than ApiVersions, which gets the KIP-511 answer) or an undecodable body
closes that connection with a log line. Fetch responses carry record data as
:class:`FileSlice` pieces sent with ``os.sendfile`` (no copy through Python).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import socket
import struct
import time
from typing import TYPE_CHECKING

from log_engine.broker.admission import ConnectionQuota, RequestMemoryPool
from log_engine.broker.authorization import guard
from log_engine.broker.authorization.controller import guard_controller
from log_engine.broker.cluster.scram import ClusterScramStore
from log_engine.broker.config import BrokerConfigError, Listener
from log_engine.broker.handlers import HANDLERS, Handler, RequestContext
from log_engine.broker.handlers.controller import connection_closed as controller_connection_closed
from log_engine.broker.handlers.quorum import CONTROLLER_HANDLERS
from log_engine.broker.security import ListenerSecurity, SecurityConfigError
from log_engine.broker.security.authorizer import ANONYMOUS
from log_engine.broker.security.connection_auth import ConnectionAuth, tls_principal
from log_engine.broker.security.handlers import ACL_HANDLERS, SECURITY_HANDLERS
from log_engine.broker.security.scram_admin import anonymous_refusal
from log_engine.broker.security.tls_transport import TlsSocketIO
from log_engine.file_slice import FileSlice
from log_engine.protocol import (
    ApiKey,
    InvalidRequestError,
    UnknownApiKeyError,
    UnsupportedVersionError,
    api_versions_fallback_response,
    decode_request,
    encode_response,
)
from log_engine.protocol.types import Chunk

if TYPE_CHECKING:
    from log_engine.broker.broker import Broker

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
_RECV_BUFFER_BYTES = 64 * 1024
_FIRST_CHUNK_BYTES = 64 * 1024
_MAX_CHUNK_BYTES = 1024 * 1024
_TLS_HANDSHAKE_S = 10
_ZEROS = memoryview(bytes(_MAX_CHUNK_BYTES))


_CLIENT_HANDLERS: dict[ApiKey, Handler] = {**HANDLERS, **SECURITY_HANDLERS, **ACL_HANDLERS}
_AUTHORIZED_HANDLERS: dict[ApiKey, Handler] = guard(_CLIENT_HANDLERS)
"""The client APIs behind their ACL gates (``authorizer.class.name`` set)."""
_AUTHORIZED_CONTROLLER_HANDLERS: dict[ApiKey, Handler] = guard_controller(CONTROLLER_HANDLERS)
"""The controller listener's APIs behind their cluster operations (the same)."""


class ConnectionClosed(Exception):
    """The peer closed the connection or sent something we close it for."""


class BrokerServer:
    """Accepts connections and runs one :class:`Connection` task per client.

    ``controller=True``: the controller listener, which serves KRaft's quorum APIs
    (``CONTROLLER_HANDLERS``, ``CONTROLLER_VERSIONS``) instead of the client APIs.
    """

    def __init__(self, broker: Broker, *, controller: bool = False) -> None:
        self._broker = broker
        self._controller = controller
        self._sock: socket.socket | None = None
        self._accept_task: asyncio.Task[None] | None = None
        self._connections: set[asyncio.Task[None]] = set()
        config = broker.config
        self.quota = ConnectionQuota(
            config.max_connections,
            config.max_connections_per_ip,
            config.connection_limits_per_ip,
        )
        self.memory = RequestMemoryPool(config.queued_max_request_bytes)
        self.port = 0
        self.address = ""
        self.listener_name = ""
        self._accepting = asyncio.Event()
        self.security: ListenerSecurity | None = None

    def configure(self, listener: Listener) -> None:
        """Read ``listener``'s security settings (BrokerConfigError naming a bad key),
        binding nothing: a broker checks every listener before it binds any, so a bad
        key on one never leaves the others serving for a moment."""
        if self.listener_name == listener.name:
            return
        if listener.protocol != "PLAINTEXT" or self._broker.config.security_settings:
            try:
                self.security = ListenerSecurity.build(
                    listener.name,
                    listener.protocol,
                    self._broker.config.security_settings,
                    self._broker.config.log_dir,
                )
            except SecurityConfigError as exc:
                raise BrokerConfigError(str(exc)) from None
            node = self._broker.cluster_node
            if node is not None and self.security.scram is not None:
                # a cluster's SCRAM users live in the metadata log (local: the fallback)
                self.security.scram = ClusterScramStore(node, self.security.scram)
        self.listener_name = listener.name

    async def start(self, listener: Listener, *, accepting: bool = True) -> None:
        """Bind and listen; with ``accepting=False`` connections wait in the backlog
        until :meth:`open` (a clustered broker not yet unfenced)."""
        self.configure(listener)
        family = socket.AF_INET6 if ":" in listener.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((listener.host or "0.0.0.0", listener.port))
        sock.listen(512)
        sock.setblocking(False)
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.address = f"{listener.host}:{self.port}"
        if accepting:
            self._accepting.set()
        self._accept_task = asyncio.get_running_loop().create_task(self._accept())

    def open(self) -> None:
        """Start accepting connections (after ``start(accepting=False)``)."""
        self._accepting.set()

    async def stop(self) -> None:
        if self._accept_task:
            self._accept_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accept_task
        if self._sock:
            self._sock.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    def _closed(self, ip: str, _task: asyncio.Task[None]) -> None:
        self.quota.release(ip)

    async def _accept(self) -> None:
        assert self._sock is not None
        loop = asyncio.get_running_loop()
        await self._accepting.wait()
        while True:
            try:
                client, address = await loop.sock_accept(self._sock)
            except OSError as exc:  # e.g. EMFILE: back off instead of spinning
                log.warning("accept failed: %s", exc)
                await asyncio.sleep(0.1)
                continue
            ip = address[0]
            if not self.quota.admit(ip):
                client.close()
                continue
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client.setblocking(False)
            peer = f"{ip}:{address[1]}"
            conn: Connection
            if self.security is not None and self.security.ssl_context is not None:
                conn = TlsConnection(
                    self._broker,
                    client,
                    peer,
                    self.memory,
                    self._controller,
                    self.security,
                    self.listener_name,
                )
            else:
                auth = ConnectionAuth(self.security, None) if self.security else None
                conn = Connection(
                    self._broker,
                    client,
                    peer,
                    self.memory,
                    self._controller,
                    auth,
                    self.listener_name,
                )
            task = loop.create_task(conn.run())
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)
            task.add_done_callback(functools.partial(self._closed, ip))


class Connection:
    """One client connection: read a frame, answer it, repeat."""

    def __init__(
        self,
        broker: Broker,
        sock: socket.socket,
        peer: str,
        memory: RequestMemoryPool,
        controller: bool = False,
        auth: ConnectionAuth | None = None,
        listener: str = "",
    ) -> None:
        self._broker = broker
        self._listener = listener
        self._controller = controller
        self._handlers: dict[ApiKey, Handler] = (
            _AUTHORIZED_CONTROLLER_HANDLERS  # each request checks broker.authorizer
            if controller
            else _AUTHORIZED_HANDLERS
            if broker.authorizer is not None
            else _CLIENT_HANDLERS
        )
        self._sock = sock
        self._auth = auth
        self._peer = peer
        self._memory = memory
        self._held_bytes = 0  # charged to the memory pool for the current frame
        self._loop = asyncio.get_running_loop()
        self._buffer = bytearray(_RECV_BUFFER_BYTES)
        self._start = 0
        self._end = 0
        config = broker.config
        self._metrics = None if controller else broker.metrics  # client APIs only
        self._max_frame = config.socket_request_max_bytes
        self._idle_s = config.connections_max_idle_ms / 1000
        self._body_s = config.socket_request_body_timeout_ms / 1000

    async def run(self) -> None:
        try:
            while True:
                frame = await self._read_frame()
                try:
                    await self._serve(frame)
                finally:
                    del frame
                    self._release()
        except (ConnectionClosed, ConnectionError, TimeoutError) as exc:
            if str(exc):
                log.info("closing connection from %s: %s", self._peer, exc)
        except asyncio.CancelledError:
            pass
        except Exception:
            log.exception("closing connection from %s after an internal error", self._peer)
        finally:
            self._release()
            self._close()
            if self._controller:
                controller_connection_closed(self._broker, self._peer)

    def _close(self) -> None:
        self._sock.close()

    async def _recv_into(self, view: memoryview) -> int:
        return await self._loop.sock_recv_into(self._sock, view)

    async def _sendall(self, data: bytes) -> None:
        await self._loop.sock_sendall(self._sock, data)

    def _release(self) -> None:
        if self._held_bytes:
            self._memory.release(self._held_bytes)
            self._held_bytes = 0

    async def _serve(self, frame: memoryview) -> None:
        started = time.perf_counter()  # TotalTimeMs: from the request read to its answer sent
        if self._auth is not None and self._auth.expects_raw_token:
            await self._send([await self._auth.raw_token(frame, self._peer)])
            return
        try:
            header, body = decode_request(frame, controller=self._controller)
        except UnsupportedVersionError as exc:
            if exc.header is not None and exc.header.api_key == ApiKey.API_VERSIONS:
                await self._send([api_versions_fallback_response(exc.header.correlation_id)])
                return
            raise ConnectionClosed(str(exc)) from None
        except (UnknownApiKeyError, InvalidRequestError) as exc:
            raise ConnectionClosed(str(exc)) from None
        if self._auth is not None and self._auth.intercepts(header):
            answer = await self._auth.serve(header, body, self._peer)
            if answer is not None:
                await self._send(encode_response(header, answer[0]))
                close = answer[1]
                if close:
                    raise ConnectionClosed("")
                return
        principal = self._auth.principal if self._auth is not None else ANONYMOUS
        if (
            not self._controller  # forwarded by a broker, which checked its client
            and header.api_key in SECURITY_HANDLERS
            and principal == ANONYMOUS
            and self._broker.authorizer is None
        ):
            await self._send(encode_response(header, anonymous_refusal(header.api_key, body)))
            return
        handler = self._handlers.get(ApiKey(header.api_key))
        if handler is None:
            raise ConnectionClosed(f"no handler for API key {header.api_key}")
        context = RequestContext(self._broker, header, self._peer, principal, self._listener)
        response = await handler(context, body)
        if response is not None:
            await self._send(encode_response(header, response))
        if self._metrics is not None:
            self._metrics.request_done(
                header.api_key, header.api_version, body, time.perf_counter() - started
            )

    async def _read_frame(self) -> memoryview:
        async with asyncio.timeout(self._idle_s):
            await self._fill(4)
        (size,) = _SIZE.unpack_from(self._buffer, self._start)
        if size < 0 or size > self._max_frame:
            raise ConnectionClosed(
                f"frame of {size} bytes exceeds socket.request.max.bytes ({self._max_frame})"
            )
        self._start += 4
        try:
            async with asyncio.timeout(self._body_s):
                if size > len(self._buffer):
                    return await self._read_large(size)
                await self._fill(size)
        except TimeoutError:
            raise ConnectionClosed(
                f"frame of {size} bytes not complete after "
                f"socket.request.body.timeout.ms={round(self._body_s * 1000)}"
            ) from None
        # Copy out: the buffer is reused while handlers may still hold the frame.
        frame = memoryview(bytes(self._buffer[self._start : self._start + size]))
        self._start += size
        return frame

    async def _fill(self, needed: int) -> None:
        """Make ``needed`` bytes available at ``self._start`` in the receive buffer."""
        if self._end - self._start >= needed:
            return
        if self._start + needed > len(self._buffer):
            pending = self._end - self._start
            self._buffer[:pending] = self._buffer[self._start : self._end]
            self._start, self._end = 0, pending
        view = memoryview(self._buffer)
        while self._end - self._start < needed:
            received = await self._recv_into(view[self._end :])
            if received == 0:
                raise ConnectionClosed("")
            self._end += received

    async def _read_large(self, size: int) -> memoryview:
        """Read a frame larger than the receive buffer, growing it as its bytes arrive.

        Each growth step (64 KiB, then the size so far, at most 1 MiB) is charged
        to the memory pool before it is allocated; nothing is allocated for bytes
        that have not been sent. Growing one bytearray (realloc: large blocks
        are remapped, not copied) costs less than joining chunks.
        """
        frame = bytearray()
        pending = memoryview(self._buffer)[self._start : self._end]
        step = _FIRST_CHUNK_BYTES
        while len(frame) < size:
            step = min(max(step, len(pending)), size - len(frame))
            await self._memory.acquire(step)
            self._held_bytes += step
            have = len(frame)
            frame += _ZEROS[:step]
            view = memoryview(frame)
            try:
                filled = min(len(pending), step)
                view[have : have + filled] = pending[:filled]
                pending = pending[filled:]
                while filled < step:
                    received = await self._recv_into(view[have + filled : have + step])
                    if received == 0:
                        raise ConnectionClosed("")
                    filled += received
            finally:
                view.release()
            step = min(len(frame), _MAX_CHUNK_BYTES)
        pending.release()
        self._start = self._end = 0
        return memoryview(frame)

    async def _send(self, chunks: list[Chunk]) -> None:
        pending: list[bytes | memoryview] = []
        for chunk in chunks:
            if isinstance(chunk, FileSlice):
                if pending:
                    await self._sendall(b"".join(pending))
                    pending.clear()
                await self._sendfile(chunk)
            else:
                pending.append(chunk)
        if pending:
            await self._sendall(b"".join(pending))

    async def _sendfile(self, piece: FileSlice) -> None:
        """Send a file range with ``os.sendfile`` (explicit offsets: no seek on the file)."""
        offset, remaining = piece.position, piece.size
        fd = self._sock.fileno()
        while remaining > 0:
            try:
                sent = os.sendfile(fd, piece.fileno, offset, remaining)
            except BlockingIOError:
                await self._writable()
                continue
            if sent == 0:
                raise ConnectionClosed("log file shorter than the slice being sent")
            offset += sent
            remaining -= sent

    async def _writable(self) -> None:
        future: asyncio.Future[None] = self._loop.create_future()
        fd = self._sock.fileno()

        def ready() -> None:
            if not future.done():
                future.set_result(None)

        self._loop.add_writer(fd, ready)
        try:
            await future
        finally:
            self._loop.remove_writer(fd)


class TlsConnection(Connection):
    """A connection on a TLS listener: handshake first, then the same request loop,
    its I/O through a non-blocking ``SSLSocket`` (:class:`TlsSocketIO`)."""

    def __init__(
        self,
        broker: Broker,
        sock: socket.socket,
        peer: str,
        memory: RequestMemoryPool,
        controller: bool,
        security: ListenerSecurity,
        listener: str,
    ) -> None:
        super().__init__(broker, sock, peer, memory, controller, None, listener)
        self._security = security

    async def run(self) -> None:
        context = self._security.ssl_context
        assert context is not None
        self._tls = TlsSocketIO(self._sock, context, self._loop)
        try:
            async with asyncio.timeout(_TLS_HANDSHAKE_S):
                await self._tls.handshake()
        except (OSError, TimeoutError) as exc:  # ssl.SSLError is an OSError
            reason = "timed out" if isinstance(exc, TimeoutError) else exc
            log.info("failed authentication with %s (SSL handshake failed: %s)", self._peer, reason)
            self._tls.close()
            return
        except asyncio.CancelledError:
            self._tls.close()
            raise
        self._auth = ConnectionAuth(self._security, tls_principal(self._tls.peercert()))
        await super().run()

    def _close(self) -> None:
        self._tls.close()

    async def _recv_into(self, view: memoryview) -> int:
        return await self._tls.recv_into(view)

    async def _sendall(self, data: bytes) -> None:
        await self._tls.sendall(data)

    async def _sendfile(self, piece: FileSlice) -> None:
        await self._tls.sendfile(piece)
