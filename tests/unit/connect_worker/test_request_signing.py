"""KIP-507 request signatures: what one worker signs, another verifies."""

from __future__ import annotations

import pytest

from connect_worker.herder.api import BadRequestError
from connect_worker.herder.request_signing import (
    ForbiddenError,
    key_expired,
    new_session_key,
    signature_headers,
    verify,
)


def test_a_signed_body_verifies_and_any_change_is_refused() -> None:
    key = new_session_key()
    body = b'[{"topic": "t"}]'
    headers = signature_headers(key, body)
    verify(key, body, headers)
    with pytest.raises(ForbiddenError):
        verify(key, body + b" ", headers)
    with pytest.raises(ForbiddenError):
        verify(new_session_key(), body, headers)


def test_a_missing_signature_is_a_bad_request() -> None:
    with pytest.raises(BadRequestError, match="missing required signature"):
        verify(new_session_key(), b"[]", {})


def test_java_mac_names_sign_and_verify_and_the_accepted_list_is_enforced() -> None:
    key = new_session_key("HmacSHA512", 64)
    body = b"[]"
    headers = signature_headers(key, body, "HmacSHA512")
    assert headers["X-Connect-Request-Signature-Algorithm"] == "HmacSHA512"
    verify(key, body, headers, ("HmacSHA256", "HmacSHA512"))
    with pytest.raises(BadRequestError, match="accepts HmacSHA256"):
        verify(key, body, headers, ("HmacSHA256",))
    with pytest.raises(ForbiddenError):  # signed with another hash than it claims
        verify(key, body, {**signature_headers(key, body, "HmacSHA1"),
                           "X-Connect-Request-Signature-Algorithm": "HmacSHA512"},
               ("HmacSHA512",))  # fmt: skip


def test_a_key_expires_after_its_ttl() -> None:
    key = new_session_key()
    created = key.creation_timestamp_ms
    assert not key_expired(key, 1000, now_ms=created + 999)
    assert key_expired(key, 1000, now_ms=created + 1000)
