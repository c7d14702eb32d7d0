"""A throwaway PKI for security tests: a CA, a broker certificate and client
certificates, written as PEM files with the ``cryptography`` package."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Issued:
    """A PEM certificate and its key; ``pem`` holds both (Kafka's PEM key store)."""

    cert: Path
    key: Path
    pem: Path


def _name(cn: str, org: str = "Sluice Tests") -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, "DE"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, org),
            x509.NameAttribute(NameOID.COMMON_NAME, cn),
        ]
    )


class TestCA:
    """A self-signed CA that issues server and client certificates into ``directory``."""

    __test__ = False

    def __init__(self, directory: Path, name: str = "Sluice Test CA") -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        self._name = _name(name)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(self._name)
            .issuer_name(self._name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        slug = name.replace(" ", "-").lower()
        self.cert = directory / f"{slug}.pem"
        self.cert.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))

    def issue(
        self, cn: str, *, server: bool = False, org: str = "Sluice Tests", expired: bool = False
    ) -> Issued:
        """A key and certificate signed by this CA, valid for a day (``expired``:
        it was valid the day before yesterday only)."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        if expired:
            now -= datetime.timedelta(days=2)
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(cn, org))
            .issuer_name(self._name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
        cert = builder.sign(self._key, hashes.SHA256())
        cert_pem = cert.public_bytes(serialization.Encoding.PEM)
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        base = self.directory / cn.replace(" ", "-").lower()
        paths = Issued(
            base.with_suffix(".crt"), base.with_suffix(".key"), base.with_suffix(".pem")
        )
        paths.cert.write_bytes(cert_pem)
        paths.key.write_bytes(key_pem)
        paths.pem.write_bytes(key_pem + cert_pem)
        return paths


def pkcs12_keystore(issued: Issued, ca: TestCA, path: Path, password: str) -> Path:
    """``issued``'s key and certificate (plus the CA) as a PKCS12 key store, the way
    ``openssl pkcs12 -export`` writes one."""
    from cryptography.hazmat.primitives.serialization import pkcs12

    key = serialization.load_pem_private_key(issued.key.read_bytes(), None)
    cert = x509.load_pem_x509_certificate(issued.cert.read_bytes())
    ca_cert = x509.load_pem_x509_certificate(ca.cert.read_bytes())
    path.write_bytes(
        pkcs12.serialize_key_and_certificates(
            b"sluice",
            key,  # type: ignore[arg-type]
            cert,
            [ca_cert],
            serialization.BestAvailableEncryption(password.encode()),
        )
    )
    return path


def keytool(*args: str) -> None:
    """Run the JDK's keytool (Java's own store code writes the JKS/PKCS12 files)."""
    import subprocess

    subprocess.run(["keytool", *args, "-noprompt"], check=True, capture_output=True)


def jks_keystore(
    p12: Path, p12_password: str, path: Path, password: str, key_password: str | None = None
) -> Path:
    """A JKS key store converted by keytool from a PKCS12 one."""
    keytool(
        "-importkeystore", "-srckeystore", str(p12), "-srcstoretype", "PKCS12",
        "-srcstorepass", p12_password, "-destkeystore", str(path), "-deststoretype", "JKS",
        "-deststorepass", password, "-destkeypass", key_password or password,
    )
    return path


def truststore(ca: TestCA, path: Path, password: str, store_type: str) -> Path:
    """A trust store (``PKCS12`` or ``JKS``) holding the CA, made by keytool -importcert."""
    keytool(
        "-importcert", "-alias", "ca", "-file", str(ca.cert), "-keystore", str(path),
        "-storetype", store_type, "-storepass", password,
    )
    return path
