"""``/ui/api/...``: the few JSON endpoints the console needs beyond the REST API.

- ``GET /ui/api/pipelines``: the pipeline files folder, each file with the
  problems ``sluice validate`` finds offline (:mod:`.pipelines_view`);
- ``GET /ui/api/topics``: every topic with its partitions, leaders, replicas,
  log start and end offsets and size in records (:mod:`.log_view`);
- ``GET /ui/api/topics/{topic}/records?limit=N``: the topic's latest records,
  newest first, with their headers (the dead-letter queue's error headers).

Errors have Kafka Connect's body, ``{"error_code", "message"}``: 404 for an
unknown topic, 503 while the worker starts or when it has no log to show
(a worker without the console's sources), 502 when the cluster did not answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Query, Request

from connect_worker.console.log_view import PEEK_MAX_RECORDS, LogView
from connect_worker.console.pipelines_view import pipeline_files
from connect_worker.rest.deps import RegistryDep
from connect_worker.rest.errors import RestError

if TYPE_CHECKING:
    from connect_worker.console import ConsoleSources

router = APIRouter(prefix="/ui/api", tags=["console"], include_in_schema=False)


def _sources(request: Request) -> ConsoleSources:
    sources: ConsoleSources = request.app.state.console
    return sources


def _log(request: Request) -> LogView:
    log = _sources(request).log
    if log is None:
        raise RestError(503, "this worker does not show its topics (no cluster address given)")
    return log


def _unreachable(exc: Exception) -> RestError:
    return RestError(502, f"the Kafka cluster did not answer: {type(exc).__name__}: {exc}")


@router.get("/pipelines")
def pipelines(request: Request, registry: RegistryDep) -> dict[str, Any]:
    sources = _sources(request)
    if sources.pipelines_dir is None:
        return {"directory": None, "exists": False, "files": [], "truncated": False}
    return pipeline_files(sources.pipelines_dir, registry, sources.worker_props)


@router.get("/topics")
def topics(request: Request, registry: RegistryDep) -> dict[str, Any]:
    log = _log(request)
    try:
        return {"topics": log.topics()}
    except Exception as exc:
        raise _unreachable(exc) from exc


@router.get("/topics/{topic}/records")
def latest_records(
    request: Request,
    registry: RegistryDep,
    topic: str,
    limit: int = Query(20, ge=1, le=PEEK_MAX_RECORDS),
) -> dict[str, Any]:
    log = _log(request)
    try:
        known = log.has_topic(topic)
    except Exception as exc:
        raise _unreachable(exc) from exc
    if not known:
        raise RestError(404, f"Topic {topic} does not exist")
    try:
        return {"topic": topic, "records": log.latest_records(topic, limit)}
    except Exception as exc:
        raise RestError(502, f"reading {topic} failed: {type(exc).__name__}: {exc}") from exc
