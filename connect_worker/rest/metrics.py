"""``GET /metrics``: the worker's metrics in Prometheus text format.

Names and labels: :mod:`connect_worker.metrics.collector` and ``docs/metrics.md``.
With ``metrics.enabled=false`` nothing is measured and this answers 404.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from connect_worker.metrics.collector import metrics_registry, render
from connect_worker.rest.deps import HerderDep
from connect_worker.rest.errors import RestError

router = APIRouter(tags=["worker"])


@router.get(
    "/metrics",
    summary="Connector, task and worker metrics (Prometheus text format)",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}}, 404: {"description": "metrics disabled"}},
)
def metrics(request: Request, herder: HerderDep) -> Response:
    registry = getattr(request.app.state, "metrics_registry", None)
    if registry is None:
        worker_metrics = herder.worker_metrics()
        if worker_metrics is None:
            raise RestError(404, "metrics are disabled on this worker (metrics.enabled=false)")
        registry = request.app.state.metrics_registry = metrics_registry(herder, worker_metrics)
    body, content_type = render(registry)
    return Response(body, media_type=content_type)
