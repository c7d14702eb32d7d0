"""The worker's REST API: Kafka Connect's paths, status codes and JSON shapes.

``create_app(herder, registry)`` builds the FastAPI application; ``sluice
standalone`` serves it with uvicorn on ``listeners``. Resource groups live in
their own modules (:mod:`.connectors`, :mod:`.lifecycle`, :mod:`.offsets`,
:mod:`.plugins`, :mod:`.admin`); every error is mapped in :mod:`.errors`.
OpenAPI documentation is served at ``/docs`` (Swagger UI) and ``/redoc``
(schema at ``/openapi.json``); their scripts and styles come from the worker
itself (``/static-offline-docs/``, shipped by the ``fastapi-offline`` package),
so the pages work without internet access.
"""

from __future__ import annotations

import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline

from connect_worker.herder.api import Herder
from connect_worker.plugins import PluginRegistry
from connect_worker.rest import admin, connectors, lifecycle, offsets, plugins
from connect_worker.rest.body_limit import DEFAULT_MAX_BYTES, BodyLimit
from connect_worker.rest.errors import install_error_handlers
from connect_worker.rest.file_managed import PipelineFileLookup, no_pipeline_files

HEALTH_TIMEOUT_S = 10.0

root = APIRouter(tags=["worker"])


def create_app(
    herder: Herder,
    registry: PluginRegistry,
    *,
    kafka_cluster_id: str | None = None,
    request_max_bytes: int = DEFAULT_MAX_BYTES,
    pipeline_files: PipelineFileLookup = no_pipeline_files,
) -> FastAPI:
    """The REST application over ``herder``; ``kafka_cluster_id`` is shown by ``GET /``.

    Request bodies over ``request_max_bytes`` are refused with 413 (:mod:`.body_limit`).
    ``pipeline_files`` says which connectors pipeline files define; REST does not
    change those (:mod:`.file_managed`).
    """
    app = FastAPIOffline(  # /docs and /redoc with their assets served locally
        title="Sluice worker REST API",
        version=sluice_version(),
        description="Kafka Connect's REST API, served by a Sluice worker.",
        # no badge from swagger.io's online validator: nothing on /docs leaves the worker
        swagger_ui_parameters={"validatorUrl": None},
    )
    app.state.herder = herder
    app.state.registry = registry
    app.state.kafka_cluster_id = kafka_cluster_id
    app.state.pipeline_files = pipeline_files
    install_error_handlers(app)
    for router in (root, connectors.router, lifecycle.router, offsets.router, plugins.router):
        app.include_router(router)
    app.include_router(admin.router)
    app.add_middleware(BodyLimit, max_bytes=request_max_bytes)
    return app


@root.get("/", summary="Worker version, commit and the Kafka cluster id")
def server_info(request: Request) -> dict[str, Any]:
    return {
        "version": sluice_version(),
        "commit": source_commit(),
        "kafka_cluster_id": request.app.state.kafka_cluster_id,
    }


@root.get(
    "/health",
    summary="200 healthy, 500 unhealthy (the herder does not answer)",
    responses={500: {"description": "unhealthy"}},
)
async def health(request: Request) -> JSONResponse:
    herder: Herder = request.app.state.herder
    try:
        with anyio.fail_after(HEALTH_TIMEOUT_S):
            await anyio.to_thread.run_sync(herder.connectors, abandon_on_cancel=True)
    except TimeoutError:
        return _health(500, "unhealthy", f"the worker did not answer within {HEALTH_TIMEOUT_S}s")
    except Exception as exc:
        return _health(500, "unhealthy", f"the worker failed a health check: {exc}")
    return _health(200, "healthy", "Worker has completed startup and is ready to handle requests.")


def _health(status: int, state: str, message: str) -> JSONResponse:
    return JSONResponse({"status": state, "message": message}, status)


@cache
def sluice_version() -> str:
    try:
        return metadata.version("sluice")
    except metadata.PackageNotFoundError:
        return "unknown"


@cache
def source_commit() -> str:
    """The git commit of the source tree (an editable install), else ``unknown``."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"
