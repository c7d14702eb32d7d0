"""``/connectors/{c}/topics`` and ``/connectors/{c}/offsets`` (KIP-558, KIP-875).

Offsets are ``{"offsets": [{"partition": {...}, "offset": {...}}]}``; for a
sink, partition ``{"kafka_topic", "kafka_partition"}`` and offset
``{"kafka_offset"}``. Altering and resetting need the connector STOPPED (the
herder refuses otherwise).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from connect_worker.rest.deps import HerderDep
from connect_worker.rest.errors import RestError
from connect_worker.rest.models import OffsetsRequest

router = APIRouter(prefix="/connectors", tags=["offsets and topics"])


@router.get("/{connector}/topics", summary="Topics the connector has used")
def connector_topics(herder: HerderDep, connector: str) -> dict[str, Any]:
    return {connector: {"topics": herder.connector_topics(connector)}}


@router.put("/{connector}/topics/reset", status_code=202, summary="Forget the topics used")
def reset_connector_topics(herder: HerderDep, connector: str) -> Response:
    herder.reset_connector_topics(connector)
    return Response(status_code=202)


@router.get("/{connector}/offsets", summary="The connector's committed offsets")
def get_offsets(herder: HerderDep, connector: str) -> dict[str, Any]:
    return {"offsets": herder.connector_offsets(connector)}


@router.patch("/{connector}/offsets", summary="Alter offsets (connector must be STOPPED)")
def alter_offsets(herder: HerderDep, connector: str, request: OffsetsRequest) -> dict[str, str]:
    if not request.offsets:
        raise RestError(
            400, "Partitions / offsets need to be provided for an alter offsets request"
        )
    for entry in request.offsets:
        if not isinstance(entry.get("partition"), dict):
            raise RestError(400, f'every entry needs a "partition" object: {entry}')
    herder.alter_connector_offsets(connector, request.offsets)
    return {"message": "The offsets for this connector have been altered successfully"}


@router.delete("/{connector}/offsets", summary="Reset offsets (connector must be STOPPED)")
def reset_offsets(herder: HerderDep, connector: str) -> dict[str, str]:
    herder.reset_connector_offsets(connector)
    return {"message": "The offsets for this connector have been reset successfully"}
