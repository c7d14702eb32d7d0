"""``sluice distributed`` workers on the replicated 3-node cluster (issue 18 on issue 17).

Two workers with the keys of ``configs/distributed/worker.properties`` (free ports,
their internal topics at the shipped replication factor 3) on three ``sluice broker`` processes
(``harness.cluster.LocalCluster``, as ``configs/cluster/``). A file pipeline runs;
the broker coordinating the workers' group (and, as the coordinator of every group
here, the sink's consumer group) is killed with SIGKILL: the workers find the new
coordinator, the connectors keep running, and the sink gets every line, with
duplicates bounded by what was not yet committed (the sink's committed offsets
moved with the group).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cluster import LocalCluster
from harness.distributed_process import DistributedProcess, config_of, put_config
from harness.standalone_process import file_sink, file_source, read_lines, wait_for_rest
from harness.wait import wait_for
from log_engine.client.config import ClientConfig
from log_engine.client.connection import BrokerConnection
from log_engine.protocol import ApiKey

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "configs" / "distributed" / "worker.properties"
LINES = 200
# set per worker by the harness (ports, folders, topic names)
_PER_WORKER = {"bootstrap.servers", "group.id", "listeners", "pipelines.dir"}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(
        tmp_path / "brokers",
        **{
            "broker.session.timeout.ms": "3000",
            "broker.heartbeat.interval.ms": "500",
            "replica.lag.time.max.ms": "3000",
            "default.replication.factor": "3",
        },
    ).running() as nodes:
        yield nodes


def _shipped_keys() -> dict[str, str]:
    keys = config_of(SHIPPED.read_text())
    keys = {k: v for k, v in keys.items() if k not in _PER_WORKER and not k.endswith(".topic")}
    assert all(keys[k] == "3" for k in keys if k.endswith(".replication.factor"))
    keys["scheduled.rebalance.max.delay.ms"] = "2000"
    return keys


def _send(port: int, api: ApiKey, body: dict[str, Any], version: int) -> dict[str, Any]:
    async def ask() -> dict[str, Any]:
        config = ClientConfig.from_mapping({"bootstrap.servers": [f"127.0.0.1:{port}"]})
        connection = await BrokerConnection.open("127.0.0.1", port, config)
        try:
            return dict(await connection.send(api, body, version=version))
        finally:
            connection.close()

    return asyncio.run(ask())


def _committed(port: int, group: str, topic: str) -> int:
    body = {"group_id": group, "topics": [{"name": topic, "partition_indexes": [0]}]}
    (partition,) = _send(port, ApiKey.OFFSET_FETCH, body, 5)["topics"][0]["partitions"]
    return int(partition["committed_offset"])


def _coordinator(cluster: LocalCluster, group: str, other_than: int | None = None) -> int:
    def ask(port: int) -> int:
        answer = _send(port, ApiKey.FIND_COORDINATOR, {"key": group, "key_type": 0}, 2)
        return int(answer["node_id"]) if answer["error_code"] == 0 else 0

    def agreed() -> int | None:
        named = {ask(n.broker_port) for n in cluster.nodes.values() if n.is_alive()}
        if len(named) != 1 or 0 in named or other_than in named:
            return None
        return named.pop()

    return wait_for(agreed, f"the coordinator of {group}", 60, retry_on=(OSError,))


def test_workers_on_the_cluster_survive_the_group_coordinators_broker(
    tmp_path: Path, cluster: LocalCluster
) -> None:
    bootstrap = ",".join(node.bootstrap for node in cluster.nodes.values())
    keys = _shipped_keys()
    workers = [
        DistributedProcess(tmp_path / name, bootstrap=bootstrap, group_id="connect", **keys)
        for name in ("a", "b")
    ]
    try:
        for worker in workers:
            worker.start()
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("".join(f"line-{i}\n" for i in range(LINES)))
        put_config(workers[1], "src", config_of(file_source("src", source, "lines", tasks_max=1)))
        put_config(workers[1], "snk", config_of(file_sink("snk", sink, "lines", tasks_max=1)))
        wait_for_rest(lambda: len(read_lines(sink)) >= LINES, "every line in the sink")

        coordinator = _coordinator(cluster, "connect")
        assert _coordinator(cluster, "connect-snk") == coordinator  # one offsets partition
        port = cluster.nodes[coordinator].broker_port
        wait_for(lambda: _committed(port, "connect-snk", "lines") == LINES, "the sink's commit")
        cluster.nodes[coordinator].kill()
        with source.open("a") as out:
            out.write("".join(f"more-{i}\n" for i in range(LINES)))
        _coordinator(cluster, "connect", other_than=coordinator)

        expected = {f"line-{i}" for i in range(LINES)} | {f"more-{i}" for i in range(LINES)}
        wait_for_rest(
            lambda: expected <= set(read_lines(sink)), "every line after the kill", timeout_s=90
        )
        for worker in workers:
            worker.wait_running("src")
            worker.wait_running("snk")
        got = read_lines(sink)
        # the sink resumed from its group's committed offsets at the new coordinator:
        # only lines after its commit of the first LINES may come twice
        assert len(got) - len(expected) <= LINES
        assert sorted(got[:LINES]) == sorted({f"line-{i}" for i in range(LINES)})
        assert not any(line.startswith("line-") for line in got[LINES:])
    except BaseException:
        for worker in workers:
            print(f"--- worker {worker.root.name}\n{worker.log_text()[-4000:]}")
        raise
    finally:
        for worker in workers:
            worker.close()
