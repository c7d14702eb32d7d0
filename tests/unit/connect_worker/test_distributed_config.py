"""The distributed worker's settings: shipped files parse, bad ones name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_worker.herder.distributed_config import DistributedConfig
from connect_worker.properties import load_properties
from connectors.api import ConfigError

CONFIGS = Path(__file__).resolve().parents[3] / "configs" / "distributed"


def test_the_two_shipped_workers_form_one_cluster_on_other_ports() -> None:
    first, second = (
        DistributedConfig.from_properties(load_properties(CONFIGS / name))
        for name in ("worker.properties", "worker2.properties")
    )
    assert first.group.group_id == second.group.group_id
    assert first.config_storage_topic == second.config_storage_topic
    assert first.worker_id != second.worker_id
    assert first.advertised_url == "http://127.0.0.1:8083/"
    cluster = [
        line.split("//")[1].split(",")[0]
        for name in ("node1", "node2", "node3")
        for line in (CONFIGS.parent / "cluster" / f"{name}.properties").read_text().splitlines()
        if line.startswith("listeners=")
    ]
    assert first.bootstrap_servers == ",".join(cluster)  # every broker of configs/cluster


def test_advertised_keys_make_the_worker_id() -> None:
    config = DistributedConfig.from_properties(
        {
            "bootstrap.servers": "b:9092",
            "group.id": "g",
            "listeners": "http://0.0.0.0:8083",
            "rest.advertised.host.name": "worker-1.example",
            "rest.advertised.port": "18083",
        }
    )
    assert config.worker_id == "worker-1.example:18083"
    assert config.advertised_url == "http://worker-1.example:18083/"


@pytest.mark.parametrize(
    ("props", "named"),
    [
        ({"group.id": "g"}, "bootstrap.servers"),
        ({"bootstrap.servers": "b:1"}, "group.id"),
        ({"bootstrap.servers": "b:1", "group.id": "g", "session.timeout.ms": "x"}, "session"),
        ({"bootstrap.servers": "b:1", "group.id": "g", "offset.storage.partitions": "0"}, "offset"),
        (
            {"bootstrap.servers": "b:1", "group.id": "g", "inter.worker.key.size": "0"},
            "inter.worker.key.size",
        ),
        (
            {"bootstrap.servers": "b", "group.id": "g", "inter.worker.signature.algorithm": "MD5"},
            "inter.worker.signature.algorithm: MD5 is not one of HmacSHA1",
        ),
        (
            {
                "bootstrap.servers": "b:1",
                "group.id": "g",
                "inter.worker.signature.algorithm": "HmacSHA512",
            },
            "verification.algorithms must include",
        ),
        ({"bootstrap.servers": "b:1", "group.id": "g", "worker.sync.timeout.ms": "0"}, "sync"),
    ],
)
def test_bad_settings_name_the_key(props: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        DistributedConfig.from_properties(props)
