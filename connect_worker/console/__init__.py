"""The web console at ``/ui``: static pages served by the worker, reading its REST API.

No separate server, no CDN, no build step: ``static/`` holds plain HTML, CSS
and JavaScript, served as they are (with a ``Content-Security-Policy`` that
allows the worker's own origin only, so the page cannot reach another host).
The pages read the worker's REST API (``/connectors?expand=status&expand=info``,
``/connectors/{c}/config``, ``/connector-plugins``, ``/metrics``, the offsets API)
and the few JSON endpoints of :mod:`.api` under ``/ui/api/``: the pipeline
files with their problems, the topics with partitions and sizes, and a peek at
a topic's latest records (the dead-letter queue's too).

:func:`mount` adds the console to a REST app; :func:`connect` hands it what it
reads besides the herder (the cluster's address and the pipelines folder),
once the worker has started. ``docs/console.md`` is the user's guide.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from connect_worker.console import api
from connect_worker.console.log_view import LogView

STATIC_DIR = Path(__file__).resolve().parent / "static"

#: Only the worker's own origin: scripts, styles, images and fetches.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


@dataclass
class ConsoleSources:
    """What the console reads besides the herder: the log and the pipelines folder."""

    log: LogView | None = None
    pipelines_dir: Path | None = None
    worker_props: Mapping[str, str] = field(default_factory=dict)

    def close(self) -> None:
        if self.log is not None:
            self.log.close()


class _ConsoleFiles(StaticFiles):
    """The static files, each answer with the console's security policy."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response.headers["Cache-Control"] = "no-cache"  # revalidate: a new worker, new files
        return response


def mount(app: FastAPI) -> None:
    """Serve the console at ``/ui/`` and its JSON endpoints at ``/ui/api/``."""
    app.state.console = ConsoleSources()
    app.include_router(api.router)

    @app.get("/ui", include_in_schema=False)
    def console_root() -> RedirectResponse:
        return RedirectResponse("/ui/")

    app.mount("/ui", _ConsoleFiles(directory=STATIC_DIR, html=True), name="console")


def connect(
    app: FastAPI,
    *,
    bootstrap: str | None,
    client_props: Mapping[str, str] | None = None,
    pipelines_dir: Path | None = None,
    worker_props: Mapping[str, str] | None = None,
) -> ConsoleSources:
    """Give the console the cluster at ``bootstrap`` and the pipelines folder; close it at exit."""
    sources = ConsoleSources(
        log=LogView(bootstrap, client_props) if bootstrap else None,
        pipelines_dir=pipelines_dir,
        worker_props=dict(worker_props or {}),
    )
    app.state.console = sources
    return sources
