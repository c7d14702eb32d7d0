"""``/connectors``: list, create, read, configure and delete connectors.

Thin calls into the herder; the herder's errors become HTTP answers in
:mod:`connect_worker.rest.errors`. A connector that a pipeline file defines is
not created, changed or deleted here (409 naming the file: :mod:`.file_managed`).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Body, Query, Response
from fastapi.responses import JSONResponse

from connect_worker.herder.api import NotFoundError
from connect_worker.rest.deps import HerderDep, PipelineFilesDep
from connect_worker.rest.errors import RestError
from connect_worker.rest.file_managed import FileManagedError, refuse_file_managed
from connect_worker.rest.models import (
    ConfigMap,
    ConfigPatch,
    CreateConnectorRequest,
    connector_info_json,
    connector_status_json,
)
from connect_worker.states import TargetState

log = logging.getLogger(__name__)
router = APIRouter(prefix="/connectors", tags=["connectors"])


@router.get("", summary="List connectors (names, or with expand=status/info a map)")
@router.get("/", include_in_schema=False)
def list_connectors(
    herder: HerderDep,
    expand: list[str] = Query(default=[], description="status and/or info"),  # noqa: B008
) -> Any:
    names = herder.connectors()
    if not expand:
        return names
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        try:
            out[name] = _expansions(herder, name, expand)
        except NotFoundError:
            continue  # deleted while we were looking
    return out


def _expansions(herder: HerderDep, name: str, expand: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    for kind in expand:
        if kind == "status":
            entry["status"] = connector_status_json(herder.connector_status(name))
        elif kind == "info":
            entry["info"] = connector_info_json(herder.connector_info(name))
        else:
            log.info("ignoring unknown expansion %r", kind)
    return entry


@router.post("", status_code=201, summary="Create a connector")
@router.post("/", status_code=201, include_in_schema=False)
def create_connector(
    herder: HerderDep, files: PipelineFilesDep, request: CreateConnectorRequest
) -> JSONResponse:
    name = (request.name or "").strip()
    if not name:
        raise RestError(400, 'Connector name is required: set "name" in the request body')
    refuse_file_managed(files, name, "create")
    config = _named(name, dict(request.config))
    info, _ = herder.put_connector_config(
        name,
        config,
        allow_replace=False,
        initial_state=request.initial_state or TargetState.RUNNING,
    )
    return _created(name, connector_info_json(info))


@router.get("/{connector}", summary="A connector's config and task ids")
def get_connector(herder: HerderDep, connector: str) -> dict[str, Any]:
    return connector_info_json(herder.connector_info(connector))


@router.get("/{connector}/config", summary="A connector's config (secrets masked)")
def get_connector_config(herder: HerderDep, connector: str) -> dict[str, str]:
    return herder.connector_config(connector)


@router.put(
    "/{connector}/config",
    summary="Create (201) or replace (200) a connector's config",
    responses={201: {"description": "Created"}},
)
def put_connector_config(
    herder: HerderDep,
    files: PipelineFilesDep,
    connector: str,
    config: ConfigMap = Body(),  # noqa: B008
) -> JSONResponse:
    wanted = _named(connector, dict(config))
    pipeline = files(connector)
    if pipeline is not None:
        if wanted != pipeline.config:
            raise FileManagedError(pipeline, "change the config of")
        return JSONResponse(connector_info_json(herder.connector_info(connector)))
    info, created = herder.put_connector_config(connector, wanted, allow_replace=True)
    if created:
        return _created(connector, connector_info_json(info))
    return JSONResponse(connector_info_json(info))


@router.patch("/{connector}/config", summary="Merge into a connector's config (null removes)")
def patch_connector_config(
    herder: HerderDep,
    files: PipelineFilesDep,
    connector: str,
    patch: ConfigPatch = Body(),  # noqa: B008
) -> dict[str, Any]:
    if patch.get("name") not in (None, connector):
        raise RestError(400, _name_mismatch(str(patch["name"]), connector))
    pipeline = files(connector)
    if pipeline is not None:
        if _patched(pipeline.config, dict(patch)) != pipeline.config:
            raise FileManagedError(pipeline, "change the config of")
        return connector_info_json(herder.connector_info(connector))
    return connector_info_json(herder.patch_connector_config(connector, dict(patch)))


@router.delete("/{connector}", status_code=204, summary="Delete a connector")
def delete_connector(herder: HerderDep, files: PipelineFilesDep, connector: str) -> Response:
    refuse_file_managed(files, connector, "delete")
    herder.delete_connector(connector)
    return Response(status_code=204)


def _named(name: str, config: dict[str, str]) -> dict[str, str]:
    """Kafka Connect's rule: ``name`` in the config, when present, must match."""
    given = config.get("name")
    if given is not None and given.strip() != name:
        raise RestError(400, _name_mismatch(given, name))
    config["name"] = name
    return config


def _patched(config: dict[str, str], patch: dict[str, str | None]) -> dict[str, str]:
    merged = dict(config)
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def _name_mismatch(given: str, name: str) -> str:
    return (
        f"Connector name configuration ({given}) doesn't match connector name in the URL ({name})"
    )


def _created(name: str, body: dict[str, Any]) -> JSONResponse:
    return JSONResponse(body, 201, headers={"Location": f"/connectors/{quote(name, safe='')}"})
