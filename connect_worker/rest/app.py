"""The worker's REST API: Kafka Connect's paths, status codes and JSON shapes.

``create_app(herder, registry)`` builds the FastAPI application; ``sluice
standalone`` serves it with uvicorn on ``listeners``. Resource groups live in
their own modules (:mod:`.connectors`, :mod:`.lifecycle`, :mod:`.offsets`,
:mod:`.plugins`, :mod:`.admin`); every error is mapped in :mod:`.errors`.
OpenAPI documentation is served at ``/docs`` (Swagger UI) and ``/redoc``
(schema at ``/openapi.json``); their scripts and styles come from the worker
itself (``/static-offline-docs/``, shipped by the ``fastapi-offline`` package),
so the pages work without internet access. The web console is mounted at ``/ui``
(:mod:`connect_worker.console`).
"""

from __future__ import annotations

import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi_offline import FastAPIOffline

from connect_worker import console
from connect_worker.herder.api import Herder
from connect_worker.plugins import PluginRegistry
from connect_worker.rest import admin, connectors, health, lifecycle, metrics, offsets, plugins
from connect_worker.rest.basic_auth import BasicAuth
from connect_worker.rest.body_limit import DEFAULT_MAX_BYTES, BodyLimit
from connect_worker.rest.errors import install_error_handlers
from connect_worker.rest.file_managed import PipelineFileLookup, no_pipeline_files
from connect_worker.rest.health import LogCheck
from connect_worker.security.jaas_file import RestUsers

root = APIRouter(tags=["worker"])


def create_app(
    herder: Herder | None,
    registry: PluginRegistry | None,
    *,
    kafka_cluster_id: str | None = None,
    request_max_bytes: int = DEFAULT_MAX_BYTES,
    pipeline_files: PipelineFileLookup = no_pipeline_files,
    log_check: LogCheck | None = None,
    basic_auth_users: RestUsers | None = None,
) -> FastAPI:
    """The REST application over ``herder``; ``kafka_cluster_id`` is shown by ``GET /``.

    With ``basic_auth_users``, every request must authenticate as one of them
    (:mod:`.basic_auth`), before anything else is done with it.

    Request bodies over ``request_max_bytes`` are refused with 413 (:mod:`.body_limit`).
    ``pipeline_files`` says which connectors pipeline files define; REST does not
    change those (:mod:`.file_managed`). ``log_check`` tells ``GET /health`` whether
    the cluster is reachable (:mod:`.health`).

    A worker still starting builds the app with ``herder=None`` and serves it at
    once: ``/health`` answers 503 ``starting`` and every endpoint that needs the
    herder 503, until :func:`attach` hands the started parts over.
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
    app.state.log_check = log_check
    install_error_handlers(app)
    routers = (root, health.router, metrics.router, connectors.router, lifecycle.router)
    for router in (*routers, offsets.router, plugins.router):
        app.include_router(router)
    app.include_router(admin.router)
    console.mount(app)  # /ui: static pages over this API (connect_worker/console)
    app.add_middleware(BodyLimit, max_bytes=request_max_bytes)
    if basic_auth_users is not None:  # added last: the outermost, it runs first
        app.add_middleware(BasicAuth, users=basic_auth_users, max_bytes=request_max_bytes)
    return app


def attach(
    app: FastAPI,
    herder: Herder,
    registry: PluginRegistry,
    *,
    kafka_cluster_id: str | None = None,
    pipeline_files: PipelineFileLookup = no_pipeline_files,
    log_check: LogCheck | None = None,
) -> None:
    """Hand a started worker's parts to an app built while it was starting."""
    app.state.registry = registry
    app.state.kafka_cluster_id = kafka_cluster_id
    app.state.pipeline_files = pipeline_files
    app.state.log_check = log_check
    app.state.herder = herder  # last: from now on the worker is served


@root.get("/", summary="Worker version, commit and the Kafka cluster id")
def server_info(request: Request) -> dict[str, Any]:
    return {
        "version": sluice_version(),
        "commit": source_commit(),
        "kafka_cluster_id": request.app.state.kafka_cluster_id,
    }


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
