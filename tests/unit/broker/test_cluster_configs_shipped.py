"""configs/cluster/: three node files that form one cluster as shipped."""

from __future__ import annotations

from pathlib import Path

from connect_worker.properties import load_properties
from log_engine.broker.config import BrokerConfig

CONFIGS = Path(__file__).resolve().parents[3] / "configs" / "cluster"


def test_the_three_node_files_form_one_cluster() -> None:
    clusters = [
        BrokerConfig.from_properties(load_properties(CONFIGS / f"node{i}.properties")).cluster
        for i in (1, 2, 3)
    ]
    assert all(c is not None and c.is_broker and c.is_controller for c in clusters)
    assert [c.node_id for c in clusters if c] == [1, 2, 3]
    assert len({c.cluster_id for c in clusters if c}) == 1
    assert all(c.voter_ids == {1, 2, 3} for c in clusters if c)
