"""Uploading large object bodies from a child process, on an interpreter lock of its own.

In the worker, the upload thread shares the GIL with the runtime's consumer
and task threads, which keep it busy. A PUT gives the lock up a dozen times
(socket writes and reads, botocore's payload hash in 1 MiB pieces, the
connection pool) and each time waits to get it back while those threads run
Python; on the S3 bench the task thread then spent about half its time
waiting for the upload queue to drain. An :class:`UploadProcess` hands each
body to a long-lived child (``python -m connectors.s3.upload_process``: no
fork of a threaded worker, no import of the worker's main module) through a
socket pair: the body goes out in one ``write``, during which the worker's
GIL is free, and a small answer comes back. The child runs
:func:`connectors.s3.upload.put_object` with its own boto3 client built from
the task's config, so the object, its metadata and multipart handling are the
same as in the thread.

One request at a time: ``put`` returns when S3 answered, so the uploader's
ordering (a batch's head last, batches in order) is unchanged. Failures come
back as the botocore exception the child caught (``client.exceptions.*``
classes as a plain ``ClientError`` with the same response), so the task turns
them into the same RetriableError/ConnectError sentences. A child that died
(killed, out of memory) is reported as a RetriableError and started again on
the next ``put``; a child whose worker died reads end-of-file and exits
(after the PUT it may be in: the same object a restarted task writes again).
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from connectors.api import RetriableError
from connectors.s3.client import build_client
from connectors.s3.upload import put_object

if TYPE_CHECKING:
    from connectors.s3.config import S3ConnectionConfig

log = logging.getLogger(__name__)

#: Socket buffers asked for (the kernel caps them): fewer wake-ups per 5 MB body.
SOCKET_BUFFER_BYTES = 4 * 1024 * 1024
STOP_TIMEOUT_S = 10.0


class UploadProcess:
    """A child process that writes objects to S3 for one sink task, one at a time."""

    def __init__(self, config: S3ConnectionConfig) -> None:
        self._config = config
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None

    @property
    def pid(self) -> int | None:
        """The child's process id (None: not started, or stopped)."""
        return self._process.pid if self._process is not None else None

    def put(
        self, bucket: str, key: str, data: bytes, part_size: int, metadata: Mapping[str, str]
    ) -> int:
        """Write ``data`` at ``key`` from the child; returns its parts (see ``put_object``)."""
        with self._lock:
            try:
                conn = self._conn if self._conn is not None else self._start()
                conn.send((bucket, key, part_size, dict(metadata), len(data)))
                _write_all(conn.fileno(), data)
                outcome, value = conn.recv()
            except (OSError, EOFError) as exc:
                code = self._reap()
                raise RetriableError(
                    f"the S3 upload process stopped (exit code {code}) while writing {key}; "
                    "it is started again on the next attempt"
                ) from exc
        if outcome == "error":
            raise value
        return int(value)

    def close(self) -> None:
        """Stop the child; one still in a PUT after STOP_TIMEOUT_S is killed (what the
        exactly-once protocol allows at any point: its batch is rewritten after a restart)."""
        if not self._lock.acquire(timeout=STOP_TIMEOUT_S):
            process = self._process
            if process is not None:
                process.kill()  # the waiting put() reads end-of-file and lets go of the lock
            self._lock.acquire()
        try:
            self._reap()
        finally:
            self._lock.release()

    def _start(self) -> Connection:
        ours, theirs = socket.socketpair()
        with ours, theirs:
            for end in (ours, theirs):
                end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER_BYTES)
                end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER_BYTES)
            self._process = subprocess.Popen(
                [sys.executable, "-m", __name__, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
            )
            self._conn = Connection(ours.detach())
        log.debug("S3 sink: upload process %s started", self._process.pid)
        self._conn.send(self._config)
        return self._conn

    def _reap(self) -> int | None:
        conn, process = self._conn, self._process
        self._conn = self._process = None
        if conn is not None:
            conn.close()  # the child reads end-of-file and returns
        if process is None:
            return None
        try:
            return process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait(STOP_TIMEOUT_S)


def serve(conn: Connection) -> None:
    """The child's loop: the config, then per object a request and its body, each answered
    with ("ok", parts) or ("error", exception)."""
    try:
        config = conn.recv()
    except EOFError:
        return
    client = build_client(config)
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        while True:
            try:
                bucket, key, part_size, metadata, size = conn.recv()
                data = _read_exactly(sock, size)
            except EOFError:
                return
            try:
                _answer(conn, client, bucket, key, data, part_size, metadata)
            except OSError:  # the worker is gone: nobody waits for the answer
                return


def _answer(
    conn: Connection,
    client: Any,
    bucket: str,
    key: str,
    data: bytearray,
    part_size: int,
    metadata: dict[str, str],
) -> None:
    try:
        answer: tuple[str, Any] = ("ok", put_object(client, bucket, key, data, part_size, metadata))
    except Exception as exc:
        answer = ("error", portable(exc))
    conn.send(answer)


def _write_all(fd: int, data: bytes) -> None:
    """The whole of ``data`` (a blocking socket takes it in one call, with the GIL released)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(sock: socket.socket, size: int) -> bytearray:
    """``size`` bytes into one buffer: no per-chunk bytes objects, no joining copy."""
    data = bytearray(size)
    view = memoryview(data)
    got = 0
    while got < size:
        n = sock.recv_into(view[got:], size - got, socket.MSG_WAITALL)
        if not n:
            raise EOFError("the worker closed the connection in the middle of a body")
        got += n
    return data


def portable(exc: Exception) -> Exception:
    """``exc`` in a form the parent can unpickle, keeping what the task's messages read."""
    if isinstance(exc, ClientError):  # client.exceptions.* classes exist only in the child
        return ClientError(exc.response, exc.operation_name)  # type: ignore[arg-type]
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the worker, which stops us
    serve(Connection(int(argv[1])))


if __name__ == "__main__":
    main(sys.argv)
