"""Lost-connection evidence (``controller/sessions.py``) with real processes.

The session timeout here is 30 s, far longer than the waits: a broker fenced
within them was fenced by the evidence, not by its session running out.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from harness.cluster import LocalCluster
from harness.wait import wait_for
from log_engine.client.quorum import describe_quorum_sync

SESSION_TIMEOUT_MS = 30_000
FENCED_WITHIN_S = 20  # well inside the session: only the evidence can fence this soon


@contextlib.contextmanager
def _cluster(tmp_path: Path, **overrides: str) -> Iterator[LocalCluster]:
    with LocalCluster(
        tmp_path,
        **{
            "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
            "replica.lag.time.max.ms": "30000",
            **overrides,
        },
    ).running() as nodes:
        yield nodes


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with _cluster(tmp_path, **{"broker.heartbeat.interval.ms": "500"}) as nodes:
        yield nodes


def _active_controller(cluster: LocalCluster) -> int:
    alive = next(n for n in cluster.nodes.values() if n.is_alive())
    leader = describe_quorum_sync("127.0.0.1", alive.controller_port).leader_id
    assert leader is not None
    return leader


def _create_led_by(cluster: LocalCluster, topic: str, leader: int) -> None:
    others = [n for n in sorted(cluster.nodes) if n != leader]
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    new = NewTopic(topic, num_partitions=1, replica_assignment=[[leader, *others]])
    admin.create_topics([new], operation_timeout=30)[topic].result(timeout=60)
    wait_for(lambda: _partition(cluster, topic)["leader"] == leader, f"{topic} led by {leader}")


def _partition(cluster: LocalCluster, topic: str) -> dict[str, Any]:
    def ask() -> dict[str, Any] | None:
        (entry,) = [t for t in cluster.metadata(topic)["topics"] if t["topic"] == topic]
        return dict(entry["partitions"][0]) if entry["partitions"] else None

    return wait_for(ask, f"{topic} in Metadata", retry_on=(subprocess.SubprocessError,))


def test_a_killed_broker_is_fenced_long_before_its_session_ends(cluster: LocalCluster) -> None:
    controller = _active_controller(cluster)
    victim = next(n for n in sorted(cluster.nodes) if n != controller)
    _create_led_by(cluster, "orders", victim)
    cluster.nodes[victim].kill(signal.SIGKILL)
    survivors = sorted(set(cluster.nodes) - {victim})
    cluster.wait_registered(survivors, timeout_s=FENCED_WITHIN_S)
    assert _partition(cluster, "orders")["leader"] in survivors
    controller_log = cluster.nodes[controller].log_text()
    assert f"the heartbeat connection of broker {victim} closed" in controller_log
    assert f"node {victim} refuses connections" in controller_log


def test_a_live_broker_whose_controller_connections_keep_closing_stays_unfenced(
    tmp_path: Path,
) -> None:
    # The controller closes every connection idle for 1 s; brokers heartbeat every 2.5 s,
    # so each heartbeat connection is cut between two heartbeats, and evidence arrives
    # for live brokers again and again: their next heartbeat must keep them unfenced.
    with _cluster(
        tmp_path, **{"broker.heartbeat.interval.ms": "2500", "connections.max.idle.ms": "1000"}
    ) as cluster:
        controller = _active_controller(cluster)
        victim = next(n for n in sorted(cluster.nodes) if n != controller)
        _create_led_by(cluster, "orders", victim)
        before = _partition(cluster, "orders")

        def cuts() -> dict[int, int]:
            text = cluster.nodes[controller].log_text()
            found = re.findall(r"the heartbeat connection of broker (\d+) closed", text)
            return {b: found.count(str(b)) for b in cluster.nodes}

        wait_for(lambda: min(cuts().values()) >= 4, "four cut heartbeat connections per broker")
        assert cluster.live_broker_ids() == [1, 2, 3]
        after = _partition(cluster, "orders")
        assert after["leader"] == victim
        assert "fenced by the controller" not in "".join(
            n.log_text() for n in cluster.nodes.values()
        )
        assert after == before


def test_a_killed_active_controller_is_replaced_and_its_broker_fenced_long_before_timeouts(
    tmp_path: Path,
) -> None:
    # Fetch timeout and session both 30 s: only the refused connections to the dead node
    # (the followers stand at once, the new controller fences its broker) are this quick.
    with _cluster(
        tmp_path,
        **{"broker.heartbeat.interval.ms": "500", "controller.quorum.fetch.timeout.ms": "30000"},
    ) as cluster:
        controller = _active_controller(cluster)
        _create_led_by(cluster, "orders", controller)
        cluster.nodes[controller].kill(signal.SIGKILL)
        survivors = sorted(set(cluster.nodes) - {controller})
        cluster.wait_registered(survivors, timeout_s=FENCED_WITHIN_S)
        assert _active_controller(cluster) in survivors
        assert _partition(cluster, "orders")["leader"] in survivors
        new_controller = cluster.nodes[_active_controller(cluster)].log_text()
        assert f"node {controller} refuses connections" in new_controller
