"""The KRaft cluster keys of ``BrokerConfig``: each rule's clear error, and no change
for a single node without voters."""

from __future__ import annotations

import pytest

from log_engine.broker.cluster_config import derive_cluster_id, parse_voters
from log_engine.broker.config import BrokerConfig, BrokerConfigError

VOTERS = "1@127.0.0.1:9093,2@127.0.0.1:9095,3@127.0.0.1:9097"
COMBINED = {
    "node.id": "1",
    "process.roles": "broker,controller",
    "controller.quorum.voters": VOTERS,
    "controller.listener.names": "CONTROLLER",
    "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
}


def test_a_node_without_voters_is_a_single_broker_as_before() -> None:
    config = BrokerConfig.from_properties({"listeners": "PLAINTEXT://127.0.0.1:9092"})
    assert config.cluster is None
    assert str(config.listener) == "PLAINTEXT://127.0.0.1:9092"


def test_combined_node() -> None:
    config = BrokerConfig.from_properties(COMBINED)
    cluster = config.cluster
    assert cluster is not None
    assert cluster.is_broker and cluster.is_controller
    assert cluster.voter_ids == {1, 2, 3}
    assert str(cluster.controller_listener) == "CONTROLLER://127.0.0.1:9093"
    assert str(config.listener) == "PLAINTEXT://127.0.0.1:9092"  # clients: not the controller's
    assert str(config.advertised_listener) == "PLAINTEXT://127.0.0.1:9092"
    assert cluster.cluster_id == derive_cluster_id(parse_voters(VOTERS))
    assert len(cluster.cluster_id) == 22


def test_controller_listener_first_and_broker_only_observer() -> None:
    config = BrokerConfig.from_properties(
        {**COMBINED, "listeners": "CONTROLLER://0.0.0.0:9093,PLAINTEXT://127.0.0.1:9092"}
    )
    assert str(config.listener) == "PLAINTEXT://127.0.0.1:9092"
    observer = BrokerConfig.from_properties(
        {
            **COMBINED,
            "node.id": "4",
            "process.roles": "broker",
            "listeners": "PLAINTEXT://127.0.0.1:9092",
        }
    ).cluster
    assert (
        observer is not None and not observer.is_controller and observer.controller_listener is None
    )


def test_cluster_id_key_wins_and_voter_order_does_not_matter() -> None:
    shuffled = "3@127.0.0.1:9097,1@127.0.0.1:9093,2@127.0.0.1:9095"
    a = BrokerConfig.from_properties(COMBINED).cluster
    b = BrokerConfig.from_properties({**COMBINED, "controller.quorum.voters": shuffled}).cluster
    assert a is not None and b is not None and a.cluster_id == b.cluster_id
    fixed = BrokerConfig.from_properties({**COMBINED, "cluster.id": "my-cluster"}).cluster
    assert fixed is not None and fixed.cluster_id == "my-cluster"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"controller.quorum.voters": "1@127.0.0.1"}, "'1@127.0.0.1' is not id@host:port"),
        ({"controller.quorum.voters": "x@127.0.0.1:9093"}, "is not id@host:port"),
        ({"controller.quorum.voters": "1@127.0.0.1:9093,1@h:9"}, "node id 1 appears twice"),
        ({"controller.quorum.voters": "1@h:9093,2@h:9093"}, "is given to two voters"),
        ({"node.id": "7"}, "node.id=7 has the controller role but is not in"),
        (
            {"listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9999"},
            "does not match this node's entry 1@127.0.0.1:9093",
        ),
        (
            {"listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://10.0.0.1:9093"},
            "does not match",
        ),
        ({"listeners": "PLAINTEXT://127.0.0.1:9092"}, "needs a CONTROLLER listener"),
        ({"process.roles": "controller"}, "may only hold controller listeners"),
        ({"process.roles": "broker"}, "node.id=1 is in controller.quorum.voters"),
        ({"process.roles": "zookeeper"}, "expected broker, controller or broker,controller"),
        ({"controller.listener.names": ""}, "controller.listener.names must be set"),
        ({"process.roles": ""}, "process.roles must be set"),
        ({"controller.quorum.voters": ""}, "controller.quorum.voters must be set"),
        ({"inter.broker.listener.name": "CONTROLLER"}, "inter.broker.listener.name"),
        ({"listeners": "EXTERNAL://h:1,CONTROLLER://127.0.0.1:9093"}, "EXTERNAL is not in"),
        ({"cluster.id": "a b"}, "letters, digits"),
        ({"controller.quorum.request.timeout.ms": "400"}, "must exceed fetch_max_wait_ms"),
    ],
)
def test_inconsistent_cluster_settings_are_refused(change: dict[str, str], message: str) -> None:
    with pytest.raises(BrokerConfigError) as caught:
        BrokerConfig.from_properties({**COMBINED, **change})
    assert message in str(caught.value)
    assert "got {" not in str(caught.value)  # a cross-key rule names the keys, not the map


def test_controller_only_and_broker_only_without_controller_listener() -> None:
    controller = BrokerConfig.from_properties(
        {**COMBINED, "process.roles": "controller", "listeners": "CONTROLLER://127.0.0.1:9093"}
    )
    assert controller.cluster is not None and not controller.cluster.is_broker
    with pytest.raises(BrokerConfigError, match="has the controller listener"):
        BrokerConfig.from_properties({**COMBINED, "node.id": "4", "process.roles": "broker"})
    with pytest.raises(BrokerConfigError, match=r"process\.roles and controller\.quorum\.voters"):
        BrokerConfig.from_properties(
            {
                "controller.listener.names": "CONTROLLER",
                "listeners": "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
            }
        )
