"""The controller APIs end to end through the codec: request frame -> controller -> response."""

from __future__ import annotations

import uuid
from typing import Any

from log_engine.controller.wire import ControllerApis
from log_engine.errors import ErrorCode
from log_engine.protocol import encode_request, encode_response, schema_for
from log_engine.protocol.codec import decode_response
from log_engine.protocol.headers import RequestHeader
from log_engine.protocol.types import Reader
from log_engine.protocol.versions import ApiKey
from tests.unit.controller.harness import Harness


def call(h: Harness, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
    """Encode ``body`` as a broker would, run it, commit, and decode the response."""
    frame = encode_request(api_key, version, 1, "broker", body)
    schema = schema_for(api_key, version, "request")
    reader = Reader(frame)
    reader.skip(4 + 8 + 2 + len("broker"))
    reader.tagged_fields()  # request header v2
    decoded = schema.read(reader)
    response = h.commit(ControllerApis(h.controller).handle(api_key, version, decoded, h.now_ms))
    chunks = encode_response(RequestHeader(api_key, version, 1, "broker"), response)
    _, body_out = decode_response(api_key, version, b"".join(chunks)[4:])  # type: ignore[arg-type]
    return body_out


def register(h: Harness, broker_id: int, version: int = 4) -> int:
    body = {
        "broker_id": broker_id,
        "cluster_id": "c",
        "incarnation_id": uuid.UUID(int=broker_id),
        "listeners": [
            {"name": "PLAINTEXT", "host": "localhost", "port": 9092, "security_protocol": 0}
        ],
        "rack": "r1",
    }
    reply = call(h, ApiKey.BROKER_REGISTRATION, version, body)
    assert reply["error_code"] == 0
    epoch: int = reply["broker_epoch"]
    heartbeat = {
        "broker_id": broker_id,
        "broker_epoch": epoch,
        "current_metadata_offset": h.image.end_offset - 1,
    }
    reply = call(h, ApiKey.BROKER_HEARTBEAT, 1, heartbeat)
    assert (reply["error_code"], reply["is_caught_up"], reply["is_fenced"]) == (0, True, False)
    return epoch


def test_registration_and_heartbeat_at_every_version() -> None:
    h = Harness()
    for version in range(5):
        register(h, 10 + version, version)
    info = h.image.brokers[10]
    assert info.rack == "r1" and info.endpoint("PLAINTEXT").port == 9092  # type: ignore[union-attr]
    reply = call(h, ApiKey.BROKER_HEARTBEAT, 0, {"broker_id": 99, "broker_epoch": 1})
    assert reply["error_code"] == ErrorCode.STALE_BROKER_EPOCH


def test_alter_partition_by_id_and_by_name() -> None:
    h = Harness()
    epochs = {b: register(h, b) for b in (1, 2, 3)}
    h.create("t", -1, -1, assignments={0: (1, 2, 3)})
    topic_id = h.image.topics["t"].topic_id
    partition = {"partition_index": 0, "leader_epoch": 0, "partition_epoch": 0}
    v3 = {
        "broker_id": 1,
        "broker_epoch": epochs[1],
        "topics": [
            {
                "topic_id": topic_id,
                "partitions": [
                    {
                        **partition,
                        "new_isr_with_epochs": [
                            {"broker_id": 1, "broker_epoch": epochs[1]},
                            {"broker_id": 2, "broker_epoch": epochs[2]},
                        ],
                    }
                ],
            }
        ],
    }
    reply = call(h, ApiKey.ALTER_PARTITION, 3, v3)
    (topic,) = reply["topics"]
    assert topic["topic_id"] == topic_id
    (p,) = topic["partitions"]
    assert (p["error_code"], p["leader_id"], p["isr"], p["partition_epoch"]) == (0, 1, [1, 2], 1)
    v0 = {
        "broker_id": 1,
        "broker_epoch": epochs[1],
        "topics": [
            {"topic_name": "t", "partitions": [{**partition, "new_isr": [1, 2, 3]}]},
            {"topic_name": "nope", "partitions": [{**partition, "new_isr": [1]}]},
        ],
    }
    reply = call(h, ApiKey.ALTER_PARTITION, 0, v0)
    t, nope = reply["topics"]
    assert t["topic_name"] == "t"
    assert t["partitions"][0]["error_code"] == ErrorCode.INVALID_UPDATE_VERSION  # epoch 0 < 1
    assert nope["topic_name"] == "nope"
    assert nope["partitions"][0]["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_allocate_producer_ids() -> None:
    h = Harness()
    epoch = register(h, 1)
    reply = call(h, ApiKey.ALLOCATE_PRODUCER_IDS, 0, {"broker_id": 1, "broker_epoch": epoch})
    assert (reply["error_code"], reply["producer_id_start"], reply["producer_id_len"]) == (
        0,
        0,
        1000,
    )


def test_not_controller_bodies_encode() -> None:
    for key in (56, 62, 63, 67):
        body = ControllerApis.not_controller(key)
        lo, hi = (0, 0) if key == 67 else (0, 1)
        for version in (lo, hi):
            encode_response(RequestHeader(key, version, 1, None), body)
