"""A real Mosquitto 2.0 broker for the tests, started as a local process.

Debian's ``mosquitto`` package (``make test`` installs it) runs on a free
loopback port with a configuration written into its own folder. Persistence
is off: sessions live in memory for as long as the process runs, which is
what the crash tests need (the *worker* dies, Mosquitto keeps its sessions).

Settings that matter for loss-free tests and benchmarks:

- ``max_queued_messages 0``: no limit on the QoS 1/2 messages Mosquitto keeps
  for a disconnected persistent session (its default, 1000, drops the rest);
- ``max_inflight_messages``: how many unacknowledged QoS 1/2 messages it sends
  a client at once (its default is 20);
- ``max_packet_size`` (0: MQTT's limit): announced to MQTT 5 clients in CONNACK.

:meth:`MosquittoServer.with_password` starts a second listener that refuses
anonymous clients and checks a password file made with ``mosquitto_passwd``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from harness.broker_process import free_port

MOSQUITTO = "mosquitto"
MOSQUITTO_PASSWD = "mosquitto_passwd"
USER = "sluice"
PASSWORD = "mqtt-s3cret"
START_TIMEOUT_S = 10.0


class MosquittoServer:
    """One Mosquitto process on 127.0.0.1, its config and log under ``root``."""

    def __init__(
        self,
        root: Path,
        *,
        max_inflight_messages: int = 1000,
        max_packet_size: int = 0,
        with_password: bool = True,
        with_tls: bool = False,
    ) -> None:
        if shutil.which(MOSQUITTO) is None:
            raise RuntimeError("mosquitto is not installed; `make test` installs it")
        self.root = root
        self.port = free_port()
        self.password_port = free_port() if with_password else None
        self.tls_port = free_port() if with_tls else None
        self.ca_path = root / "ca.pem"
        self.max_inflight_messages = max_inflight_messages
        self.max_packet_size = max_packet_size
        self.log_path = root / "mosquitto.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        """The anonymous listener, as ``mqtt.server.uri`` takes it."""
        return f"tcp://127.0.0.1:{self.port}"

    @property
    def password_uri(self) -> str:
        """The listener that needs :data:`USER`/:data:`PASSWORD`."""
        assert self.password_port is not None, "started without a password listener"
        return f"tcp://127.0.0.1:{self.password_port}"

    @property
    def tls_uri(self) -> str:
        """The TLS listener (server certificate for 127.0.0.1 signed by :attr:`ca_path`)."""
        assert self.tls_port is not None, "started without a TLS listener"
        return f"ssl://127.0.0.1:{self.tls_port}"

    def start(self) -> MosquittoServer:
        self.root.mkdir(parents=True, exist_ok=True)
        config = self.root / "mosquitto.conf"
        lines = [
            "per_listener_settings true",
            "persistence false",
            f"max_inflight_messages {self.max_inflight_messages}",
            "max_queued_messages 0",
            "log_dest stderr",
            f"listener {self.port} 127.0.0.1",
            "allow_anonymous true",
        ]
        if os.geteuid() == 0:  # else it would read its files as user mosquitto: no access
            lines.insert(0, "user root")
        if self.max_packet_size:
            lines.insert(2, f"max_packet_size {self.max_packet_size}")
        if self.password_port is not None:
            passwords = self.root / "passwords"
            subprocess.run(
                [MOSQUITTO_PASSWD, "-b", "-c", str(passwords), USER, PASSWORD],
                check=True,
                capture_output=True,
            )
            lines += [
                f"listener {self.password_port} 127.0.0.1",
                "allow_anonymous false",
                f"password_file {passwords}",
            ]
        if self.tls_port is not None:
            certificate, key = make_certificates(self.root)
            lines += [
                f"listener {self.tls_port} 127.0.0.1",
                "allow_anonymous true",
                f"cafile {self.ca_path}",
                f"certfile {certificate}",
                f"keyfile {key}",
            ]
        config.write_text("\n".join(lines) + "\n")
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [MOSQUITTO, "-c", str(config)], stdout=log, stderr=subprocess.STDOUT
            )
        self._wait_listening()
        return self

    def _wait_listening(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto exited early: {self.log_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen within {START_TIMEOUT_S}s")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def make_certificates(folder: Path) -> tuple[Path, Path]:
    """A test CA (``ca.pem``) and a server certificate and key for 127.0.0.1 signed by it."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    validity = (now - datetime.timedelta(days=1), now + datetime.timedelta(days=30))

    def build(
        subject: str, key: ec.EllipticCurvePrivateKey, issuer: str
    ) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(validity[0])
            .not_valid_after(validity[1])
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        build("sluice test CA", ca_key, "sluice test CA")
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = (
        build("127.0.0.1", server_key, "sluice test CA")
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(ca.public_bytes(pem))
    (folder / "server.pem").write_bytes(server.public_bytes(pem))
    (folder / "server.key").write_bytes(
        server_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return folder / "server.pem", folder / "server.key"
