"""Every REST error answered in one place, with Kafka Connect's body.

Kafka Connect answers a failed request with ``{"error_code": <http status>,
"message": "..."}``; so does Sluice, whatever went wrong::

    HerderError (connect_worker.herder.api)  -> its http_status
    ├── NotFoundError                        -> 404
    ├── AlreadyExistsError, ConflictError    -> 409
    └── BadRequestError                      -> 400
    UnknownPluginError (plugins)             -> 404
    RestError (this module)                  -> its http_status (request checks in handlers)
    RequestValidationError (FastAPI)         -> 400 (malformed JSON, wrong body shape)
    HTTPException (Starlette routing)        -> its status (404 unknown path, 405 method,
                                                413 a chunked body over the limit)
    anything else                            -> 500, logged with its traceback
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from connect_worker.herder.api import HerderError
from connect_worker.plugins import UnknownPluginError
from connect_worker.security.redaction import SECRETS

log = logging.getLogger(__name__)

_REASONS = {
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
}


class RestError(Exception):
    """A request the REST layer itself refuses (e.g. a name that does not match the URL)."""

    def __init__(self, http_status: int, message: str) -> None:
        super().__init__(message)
        self.http_status = http_status


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """Kafka Connect's error body, secret values hidden (see security.redaction)."""
    body = {"error_code": status, "message": SECRETS.redact(message)}
    return JSONResponse(body, status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """Register the mapping above on ``app``."""
    app.add_exception_handler(HerderError, _herder_error)
    app.add_exception_handler(RestError, _rest_error)
    app.add_exception_handler(UnknownPluginError, _unknown_plugin)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(StarletteHTTPException, _http_exception)
    app.add_exception_handler(Exception, _unexpected)


async def _herder_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HerderError)
    return error_response(exc.http_status, str(exc) or type(exc).__name__)


async def _rest_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RestError)
    return error_response(exc.http_status, str(exc))


async def _unknown_plugin(_: Request, exc: Exception) -> JSONResponse:
    return error_response(404, str(exc) or "unknown plugin")


async def _invalid_request(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [_describe(error) for error in exc.errors()]
    return error_response(400, "Invalid request: " + "; ".join(problems))


async def _http_exception(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    reason = _REASONS.get(exc.status_code, "")
    message = exc.detail if isinstance(exc.detail, str) and exc.detail != reason else None
    text = message or f"HTTP {exc.status_code} {reason}".rstrip()
    return error_response(exc.status_code, text, getattr(exc, "headers", None))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(500, f"{type(exc).__name__}: {exc}")


def _describe(error: dict[str, Any]) -> str:
    if error.get("type") == "json_invalid":
        reason = (error.get("ctx") or {}).get("error", "malformed")
        return f"the request body is not valid JSON ({reason})"
    where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
    return f"{where}: {error.get('msg', 'invalid')}"
