"""``GET /health`` (KIP-1017): can this worker serve requests and reach its cluster?

- 200 ``{"status": "healthy", "message": ...}``: started, the herder answers and
  the Kafka cluster answered a Metadata request (:class:`~connect_worker.log_probe.LogProbe`);
- 503 ``{"status": "starting", ...}`` while the worker starts (the REST listener
  answers before the broker, plugins and connectors are up; every other
  endpoint answers 503 meanwhile);
- 503 ``{"status": "unhealthy", ...}`` when the cluster cannot be reached (the
  message says which and why); Kafka Connect's 500 is kept for a herder that
  does not answer within :data:`HEALTH_TIMEOUT_S`.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from connect_worker.herder.api import Herder

HEALTH_TIMEOUT_S = 10.0
READY = "Worker has completed startup and is ready to handle requests."

#: Answers None when the cluster is reachable, else the reason it is not.
LogCheck = Callable[[], str | None]

router = APIRouter(tags=["worker"])


@router.get(
    "/health",
    summary="200 healthy; 503 starting or the cluster unreachable; 500 the herder stuck",
    responses={500: {"description": "unhealthy"}, 503: {"description": "starting, or no log"}},
)
async def health(request: Request) -> JSONResponse:
    herder: Herder | None = request.app.state.herder
    if herder is None:
        return _health(503, "starting", "Worker is still starting up.")
    try:
        with anyio.fail_after(HEALTH_TIMEOUT_S):
            await anyio.to_thread.run_sync(herder.connectors, abandon_on_cancel=True)
    except TimeoutError:
        return _health(500, "unhealthy", f"the worker did not answer within {HEALTH_TIMEOUT_S}s")
    except Exception as exc:
        return _health(500, "unhealthy", f"the worker failed a health check: {exc}")
    check: LogCheck | None = getattr(request.app.state, "log_check", None)
    if check is not None:
        try:
            with anyio.fail_after(HEALTH_TIMEOUT_S):
                problem = await anyio.to_thread.run_sync(check, abandon_on_cancel=True)
        except TimeoutError:
            problem = f"the Kafka cluster did not answer within {HEALTH_TIMEOUT_S}s"
        if problem is not None:
            return _health(503, "unhealthy", problem)
    return _health(200, "healthy", READY)


def _health(status: int, state: str, message: str) -> JSONResponse:
    return JSONResponse({"status": state, "message": message}, status)
