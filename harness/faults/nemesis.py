"""The nemesis: faults on a seeded schedule against a :class:`~harness.faults.cluster.Cluster`.

Each fault acts, lets the clients run into it, heals, and waits until the
cluster has recovered (a quorum leader, every broker unfenced, every partition's
full ISR) and the producers are acknowledged again. Every step goes to the
history's event log (and the nodes' own logs), so a failing run says what
happened when; the same seed gives the same choices.

Faults (:data:`FAULTS`):

- ``kill_leader``: kill -9 the leader of a random partition, then restart it;
- ``kill_controller``: kill -9 the active controller (the quorum leader), then
  restart it;
- ``pause_leader``: SIGSTOP the leader of a random partition until the cluster
  has elected another leader (past ``broker.session.timeout.ms``), then SIGCONT:
  the zombie must not acknowledge writes that are then lost (the checker says);
- ``restart``: a clean restart (SIGTERM) of a random node;
- ``kill_two``: kill -9 two of the three nodes: no ``acks=all`` write sent after
  that may be acknowledged until both are restarted, and a probe producer with a
  short ``message.timeout.ms`` must get errors (the run's producers have a delivery
  timeout longer than any fault, so they only wait).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import confluent_kafka

from harness.faults.cluster import Cluster
from harness.faults.history import History
from harness.faults.workload import delivered
from harness.wait import wait_for

PROBE_TIMEOUT_MS = 3000
FAULTS = ("kill_leader", "kill_controller", "pause_leader", "restart", "kill_two")


@dataclass
class Nemesis:
    """Runs faults against ``cluster`` on ``topic``, choosing with ``random.Random(seed)``.

    ``hold_s`` is how long a fault lasts before healing (clients run into it).
    ``violations`` collects what the
    nemesis itself observed to be wrong (e.g. an acknowledgement with two nodes
    down); the checker covers the rest at the end.
    """

    cluster: Cluster
    history: History
    topic: str
    partitions: int
    seed: int
    hold_s: float = 2.0
    recovery_timeout_s: float = 90.0
    violations: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.log(f"nemesis seed {self.seed}")

    def log(self, what: str) -> None:
        self.history.event(f"nemesis: {what}")

    # -- schedules -------------------------------------------------------------------

    def run_each_once(self) -> None:
        """Every fault once, in a seeded order (``kill_two`` last but one at most)."""
        order = list(FAULTS)
        self.rng.shuffle(order)
        for name in order:
            self.run(name)

    def run_for(self, duration_s: float, faults: tuple[str, ...] = FAULTS) -> None:
        """Random ``faults`` until ``duration_s`` has passed (each run to recovery)."""
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults {sorted(unknown)}; known: {', '.join(FAULTS)}")
        deadline = time.monotonic() + duration_s
        while time.monotonic() < deadline:
            self.run(self.rng.choice(faults))

    def run(self, name: str) -> None:
        fault: Callable[[], None] = getattr(self, name)
        self.log(f"-> {name}")
        fault()
        self.recover()
        self.done.append(name)
        self.log(f"<- {name} recovered")

    # -- faults ----------------------------------------------------------------------

    def kill_leader(self) -> None:
        partition = self.rng.randrange(self.partitions)
        leader = self.cluster.wait_for_leader(self.topic, partition)
        self.log(f"kill -9 node {leader}, leader of partition {partition}")
        self.cluster.kill(leader)
        new = self.cluster.wait_for_leader(
            self.topic, partition, not_node=leader, timeout_s=self.recovery_timeout_s
        )
        self.log(f"partition {partition} now led by node {new}")
        self._hold()
        self._start(leader)

    def kill_controller(self) -> None:
        controller = self.cluster.wait_for_controller()
        self.log(f"kill -9 node {controller}, the active controller")
        self.cluster.kill(controller)
        new = self.cluster.wait_for_controller(self.recovery_timeout_s)
        self.log(f"node {new} is the active controller")
        self._hold()
        self._start(controller)

    def pause_leader(self) -> None:
        partition = self.rng.randrange(self.partitions)
        leader = self.cluster.wait_for_leader(self.topic, partition)
        self.log(f"SIGSTOP node {leader}, leader of partition {partition}")
        self.cluster.pause(leader)
        new = self.cluster.wait_for_leader(
            self.topic, partition, not_node=leader, timeout_s=self.recovery_timeout_s
        )
        self.log(f"partition {partition} now led by node {new}; node {leader} is a zombie")
        self._hold()
        self.log(f"SIGCONT node {leader}")
        self.cluster.resume(leader)

    def restart(self) -> None:
        node = self.rng.choice(sorted(self.cluster.nodes))
        self.log(f"restart (SIGTERM) node {node}")
        code = self.cluster.node(node).stop()
        if code != 0:
            self.violations.append(f"node {node} exited with {code} on SIGTERM")
        self._start(node)

    def kill_two(self) -> None:
        victims = self.rng.sample(sorted(self.cluster.nodes), 2)
        self.log(f"kill -9 nodes {victims}: one of three left")
        for node in victims:
            self.cluster.kill(node)
        killed_at = time.monotonic()
        errors = self._probe(f"probe{len(self.done)}")
        if errors == 0:
            self.violations.append(
                f"kill_two: a producer with message.timeout.ms={PROBE_TIMEOUT_MS} got no error "
                f"with nodes {victims} down"
            )
        time.sleep(self.hold_s)
        for ack in self.history.acked_between(killed_at, time.monotonic()):
            self.violations.append(
                f"kill_two: {ack.value!r} sent with nodes {victims} down was acknowledged "
                f"at {ack.partition}/{ack.offset}"
            )
        for node in victims:
            self._start(node)

    def _probe(self, name: str) -> int:
        """Send one record per partition with a short delivery timeout; return how many
        failed (each is in the history, so the checker sees an acknowledged one too)."""
        failed = 0

        def on_delivery(err: Any, msg: confluent_kafka.Message) -> None:
            nonlocal failed
            if err is None:
                partition, offset, value = delivered(msg)
                self.history.ack(value, partition, offset)
            else:
                failed += 1
                self.history.fail(msg.value() or b"", str(err))

        producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": self.cluster.bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "message.timeout.ms": PROBE_TIMEOUT_MS,
            }
        )
        for partition in range(self.partitions):
            value = self.history.send(name, partition)
            producer.produce(self.topic, value, partition=partition, on_delivery=on_delivery)
        left = producer.flush(PROBE_TIMEOUT_MS / 1000 * 3)
        self.log(f"{name}: {failed} of {self.partitions} writes failed, {left} unanswered")
        return failed

    # -- healing ---------------------------------------------------------------------

    def recover(self) -> None:
        """Every node serving, a controller, all brokers unfenced, every ISR full, and
        the producers acknowledged again."""
        for node in self.cluster.nodes.values():
            if node.paused:
                self.cluster.resume(node.node_id)
            if not node.is_alive():
                self._start(node.node_id)
        timeout = self.recovery_timeout_s
        self.cluster.wait_for_controller(timeout)
        self.cluster.wait_brokers(sorted(self.cluster.nodes), timeout)
        self.cluster.wait_for_isr(self.topic, self.partitions, set(self.cluster.nodes), timeout)
        before = self.history.acked_count()
        wait_for(
            lambda: self.history.acked_count() > before,
            "the producers to be acknowledged again after recovery",
            timeout,
        )

    def _start(self, node_id: int) -> None:
        self.log(f"start node {node_id}")
        self.cluster.start(node_id)

    def _hold(self) -> None:
        time.sleep(self.hold_s)
