"""IncrementalAlterConfigs (44) of topics: SET and DELETE of a topic's keys.

Each resource's operations are checked first: a topic resource only (a broker's
configs come from its properties file: INVALID_REQUEST), SET (0) with a value
or DELETE (1) (APPEND and SUBTRACT: INVALID_REQUEST), no key twice, and the
topic's resulting keys must be valid (INVALID_CONFIG with the reason). A
single broker then rewrites the topic's overrides; a clustered broker forwards
the change to the active controller (ConfigRecords in the metadata log, which
every broker applies to its replicas) and answers once its image has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from log_engine.broker.cluster import admin as cluster_admin
from log_engine.broker.handlers.context import RequestContext
from log_engine.broker.topics import TopicError
from log_engine.errors import ErrorCode

RESOURCE_TOPIC = 2
RESOURCE_BROKER = 4
SET, DELETE = 0, 1
Body = dict[str, Any]


class _Refused(Exception):
    def __init__(self, error_code: int, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


async def handle_incremental_alter_configs(ctx: RequestContext, body: Body) -> Body:
    validate_only = bool(body.get("validate_only"))
    node = ctx.broker.cluster_node
    answers: list[Body] = []
    forward: list[Body] = []
    for resource in body["resources"]:
        answer = {
            "error_code": 0,
            "error_message": None,
            "resource_type": resource["resource_type"],
            "resource_name": resource["resource_name"],
        }
        answers.append(answer)
        try:
            current = _current(ctx, resource)
            merged = _merged(current, resource["configs"])
            problem = cluster_admin.config_error(merged)
            if problem is not None:
                raise _Refused(int(ErrorCode.INVALID_CONFIG), problem)
            if node is not None:
                forward.append(resource)
            elif not validate_only:
                ctx.broker.topics.update_configs(resource["resource_name"], merged)
        except _Refused as exc:
            answer.update(error_code=exc.error_code, error_message=exc.message)
        except TopicError as exc:
            answer.update(error_code=exc.error_code, error_message=exc.message)
    if node is not None and forward:
        outcomes = await cluster_admin.alter_topic_configs(node, forward, validate_only)
        for answer in answers:
            if answer["resource_name"] in outcomes and answer["error_code"] == 0:
                answer.update(outcomes[answer["resource_name"]])
    return {"throttle_time_ms": 0, "responses": answers}


def _current(ctx: RequestContext, resource: Body) -> Mapping[str, str]:
    kind, name = resource["resource_type"], resource["resource_name"]
    if kind == RESOURCE_BROKER:
        raise _Refused(
            int(ErrorCode.INVALID_REQUEST),
            "broker configs are read from the broker's properties file at start; "
            "only topic configs can be altered",
        )
    if kind != RESOURCE_TOPIC:
        raise _Refused(int(ErrorCode.INVALID_REQUEST), f"unknown resource type {kind}")
    node = ctx.broker.cluster_node
    if node is not None:
        if name not in node.image.topics:
            raise _Refused(
                int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), f"topic {name!r} does not exist"
            )
        return {k: v for k, v in node.image.topic_configs(name).items() if v is not None}
    if not ctx.broker.topics.exists(name):
        raise _Refused(int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), f"topic {name!r} does not exist")
    return ctx.broker.logs.topic_overrides(name)


def _merged(current: Mapping[str, str], configs: list[Body]) -> dict[str, str]:
    names = [c["name"] for c in configs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise _Refused(int(ErrorCode.INVALID_REQUEST), f"config key(s) {repeated} given twice")
    merged = dict(current)
    for config in configs:
        operation, key, value = config["config_operation"], config["name"], config["value"]
        if operation == SET:
            if value is None:
                raise _Refused(int(ErrorCode.INVALID_REQUEST), f"SET of {key} needs a value")
            merged[key] = value
        elif operation == DELETE:
            merged.pop(key, None)
        else:
            raise _Refused(
                int(ErrorCode.INVALID_REQUEST),
                f"config operation {operation} on {key} is not supported (SET 0 and DELETE 1 "
                "are)",
            )
    return merged
