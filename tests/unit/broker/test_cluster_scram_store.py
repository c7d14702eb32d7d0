"""A clustered broker logs SCRAM users in with the credentials of its metadata image
(records as the controller writes them), falling back to its local bootstrap users."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from scramp import ScramClient

from log_engine.broker.cluster.scram import ClusterScramStore
from log_engine.broker.security import ListenerSecurity
from log_engine.broker.security.sasl_session import AuthenticationFailed, SaslSession
from log_engine.broker.security.scram_admin import scram_record
from log_engine.broker.security.scram_store import ScramCredential, ScramCredentialStore
from log_engine.metadata.image import MetadataImage


@dataclass
class FakeNode:
    image: MetadataImage


def _image_with(user: str, password: str) -> MetadataImage:
    salt = os.urandom(16)
    salted = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, 4096)
    record = scram_record(
        {"name": user, "mechanism": 2, "iterations": 4096, "salt": salt,
         "salted_password": salted}
    )  # fmt: skip
    return MetadataImage.EMPTY.apply(record)


def _login(store: ClusterScramStore, user: str, password: str) -> bool:
    security = ListenerSecurity("SASL_PLAINTEXT", "SASL_PLAINTEXT")
    security.mechanisms = ("SCRAM-SHA-512",)
    security.scram = store
    session = SaslSession(security)
    session.handshake("SCRAM-SHA-512", 1)
    client = ScramClient(["SCRAM-SHA-512"], user, password)
    try:
        first = session.authenticate(client.get_client_first().encode())
        client.set_server_first(first.decode())
        final = session.authenticate(client.get_client_final().encode())
    except AuthenticationFailed:
        return False
    client.set_server_final(final.decode())
    return session.principal == f"User:{user}"


def test_login_with_the_image_credential_then_the_fallback(tmp_path: Path) -> None:
    local = ScramCredentialStore(tmp_path)
    local.set("SCRAM-SHA-512", "admin", ScramCredential.from_password("SCRAM-SHA-512", "boot"))
    node = FakeNode(_image_with("carol", "carol-secret"))
    store = ClusterScramStore(node, local)  # type: ignore[arg-type]
    assert _login(store, "carol", "carol-secret")
    assert not _login(store, "carol", "wrong")
    assert _login(store, "admin", "boot")  # not in the metadata log: the local fallback
    assert store.users() == {"carol": {"SCRAM-SHA-512": 4096}}
    node.image = _image_with("admin", "replicated")  # the log's credential wins
    assert _login(store, "admin", "replicated")
    assert not _login(store, "admin", "boot")
