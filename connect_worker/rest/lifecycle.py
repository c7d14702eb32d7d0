"""``/connectors/{c}/status|tasks|restart|pause|resume|stop``: states and transitions.

Status codes as Kafka Connect answers them: pause and resume 202, stop 204,
a plain restart 204, a restart with ``includeTasks`` or ``onlyFailed`` 202
with the connector's status (RESTARTING where a restart was scheduled).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from connect_worker.rest.deps import HerderDep
from connect_worker.rest.errors import RestError
from connect_worker.rest.models import connector_status_json, task_status_json
from connect_worker.states import TargetState

router = APIRouter(prefix="/connectors", tags=["connector state"])


@router.get("/{connector}/status", summary="The connector's and its tasks' states")
def connector_status(herder: HerderDep, connector: str) -> dict[str, Any]:
    return connector_status_json(herder.connector_status(connector))


@router.get("/{connector}/tasks", summary="Task ids with their configs (secrets masked)")
def task_configs(herder: HerderDep, connector: str) -> list[dict[str, Any]]:
    return [
        {"id": {"connector": connector, "task": task_id}, "config": config}
        for task_id, config in enumerate(herder.task_configs(connector))
    ]


@router.post("/{connector}/tasks", status_code=204, include_in_schema=False)
async def put_task_configs(herder: HerderDep, connector: str, request: Request) -> Response:
    """Internal (distributed mode): a worker publishes its connector's task configs,
    signed when the group is ``sessioned`` (the exact body bytes are checked)."""
    body = await request.body()
    await run_in_threadpool(herder.check_internal_request, body, request.headers)
    try:
        configs = json.loads(body)
    except ValueError as exc:
        raise RestError(400, f"task configs are not JSON: {exc}") from None
    if not isinstance(configs, list) or not all(isinstance(c, dict) for c in configs):
        raise RestError(400, "task configs must be a JSON list of objects")
    configs = [{str(k): str(v) for k, v in c.items()} for c in configs]
    await run_in_threadpool(herder.put_task_configs, connector, configs)
    return Response(status_code=204)


@router.get("/{connector}/tasks/{task}/status", summary="One task's state")
def task_status(herder: HerderDep, connector: str, task: int) -> dict[str, Any]:
    for status in herder.connector_status(connector).tasks:
        if status.id == task:
            return task_status_json(status)
    raise RestError(404, f"No status found for task {connector}-{task}")


@router.post("/{connector}/tasks/{task}/restart", status_code=204, summary="Restart one task")
def restart_task(herder: HerderDep, connector: str, task: int) -> Response:
    herder.restart_task(connector, task)
    return Response(status_code=204)


@router.post(
    "/{connector}/restart",
    summary="Restart the connector (204), or with its tasks (202 + status)",
    responses={202: {"description": "Restart scheduled; the body is the status"}},
)
def restart_connector(
    herder: HerderDep,
    connector: str,
    include_tasks: bool = Query(False, alias="includeTasks"),
    only_failed: bool = Query(False, alias="onlyFailed"),
) -> Response:
    status = herder.restart_connector(
        connector, include_tasks=include_tasks, only_failed=only_failed
    )
    if not include_tasks and not only_failed:
        return Response(status_code=204)
    return JSONResponse(connector_status_json(status), 202)


@router.put("/{connector}/pause", status_code=202, summary="Pause the connector and its tasks")
def pause(herder: HerderDep, connector: str) -> Response:
    herder.set_target_state(connector, TargetState.PAUSED)
    return Response(status_code=202)


@router.put("/{connector}/resume", status_code=202, summary="Resume a paused or stopped connector")
def resume(herder: HerderDep, connector: str) -> Response:
    herder.set_target_state(connector, TargetState.RUNNING)
    return Response(status_code=202)


@router.put("/{connector}/stop", status_code=204, summary="Stop the connector and free its tasks")
def stop(herder: HerderDep, connector: str) -> Response:
    herder.set_target_state(connector, TargetState.STOPPED)
    return Response(status_code=204)
