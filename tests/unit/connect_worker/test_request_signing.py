"""KIP-507 request signatures: what one worker signs, another verifies."""

from __future__ import annotations

import pytest

from connect_worker.herder.api import BadRequestError
from connect_worker.herder.request_signing import (
    ForbiddenError,
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
