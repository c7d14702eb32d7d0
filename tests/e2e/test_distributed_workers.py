"""Two ``sluice distributed`` workers sharing one broker process: one Connect cluster.

A file source -> sink pipeline is created through the follower's REST API (so
the write is forwarded to the leader), records flow, every worker reports the
same statuses with the worker ids running each task; the worker running the
tasks is killed with SIGKILL and its tasks resume on the survivor once the
group drops it and ``scheduled.rebalance.max.delay.ms`` has passed; the sink
file then holds every input line (duplicates allowed: at-least-once).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from httpx import Response

from harness.broker_process import BrokerProcess
from harness.distributed_process import DistributedProcess, config_of, put_config
from harness.standalone_process import file_sink, file_source, read_lines, wait_for_rest

#: Short enough for a test, long enough that a worker's restart is not needed.
DELAY_MS = "2000"
LINES = 300


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    process = BrokerProcess(tmp_path / "broker").start()
    yield process
    process.stop()


def _workers(tmp_path: Path, broker: BrokerProcess, *names: str) -> list[DistributedProcess]:
    return [
        DistributedProcess(
            tmp_path / name,
            bootstrap=broker.bootstrap,
            group_id="cluster",
            **{"scheduled.rebalance.max.delay.ms": DELAY_MS},
        )
        for name in names
    ]


def _leader_and_follower(
    workers: list[DistributedProcess],
) -> tuple[DistributedProcess, DistributedProcess]:
    """Which worker leads: the one whose GET /connectors works is not enough; ask the log."""
    for worker in workers:
        if "(leader)" in worker.log_text():
            others = [w for w in workers if w is not worker]
            return worker, others[0]
    raise AssertionError("no worker says it leads")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[DistributedProcess]]:
    """A broker process and two workers shared by the REST tests (own names per test)."""
    root = tmp_path_factory.mktemp("cluster")
    broker = BrokerProcess(root / "broker").start()
    workers = _workers(root, broker, "a", "b")
    try:
        for worker in workers:
            worker.start()
        wait_for_rest(lambda: _leader_and_follower(workers), "a leader", timeout_s=30)
        yield workers
    finally:
        for worker in workers:
            worker.close()
        broker.stop()


def _call(worker: DistributedProcess, method: str, path: str, **kwargs: object) -> Response:
    """A REST write, again while the group answers 409 (a rebalance in progress)."""

    def attempt() -> Response | None:
        response = worker.http.request(method, path, **kwargs)  # type: ignore[arg-type]
        return None if response.status_code == 409 and "rebalance" in response.text else response

    return wait_for_rest(attempt, f"{method} {path} outside a rebalance")


def _state(worker: DistributedProcess, name: str) -> tuple[str, list[str]] | None:
    status = worker.status(name)
    if status is None:
        return None
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


def test_rest_writes_through_the_follower(
    cluster: list[DistributedProcess], tmp_path: Path
) -> None:
    leader, follower = _leader_and_follower(cluster)
    for worker in cluster:
        assert worker.http.get("/").json()["kafka_cluster_id"]
    source = tmp_path / "in.txt"
    source.write_text("a\nb\n")
    put_config(follower, "rest-src", config_of(file_source("rest-src", source, "rest-lines")))
    for worker in cluster:
        worker.wait_running("rest-src")

    assert _call(follower, "PUT", "/connectors/rest-src/pause").status_code == 202
    for worker in cluster:
        wait_for_rest(lambda w=worker: _state(w, "rest-src") == ("PAUSED", ["PAUSED"]), "paused")
    assert _call(follower, "PUT", "/connectors/rest-src/resume").status_code == 202
    for worker in cluster:
        worker.wait_running("rest-src")
    restarted = _call(
        follower, "POST", "/connectors/rest-src/restart",
        params={"includeTasks": "true", "onlyFailed": "false"},
    )  # fmt: skip
    assert restarted.status_code == 202, restarted.text
    assert restarted.json()["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in restarted.json()["tasks"]] == ["RESTARTING"]
    follower.wait_running("rest-src")

    assert _call(follower, "PUT", "/connectors/rest-src/stop").status_code == 204
    for worker in cluster:
        wait_for_rest(lambda w=worker: _state(w, "rest-src") == ("STOPPED", []), "stopped")
    offsets = wait_for_rest(
        lambda: follower.http.get("/connectors/rest-src/offsets").json()["offsets"],
        "the source's offsets",
    )
    assert offsets[0]["offset"]["position"] > 0
    altered = _call(
        follower, "PATCH", "/connectors/rest-src/offsets",
        json={"offsets": [{"partition": offsets[0]["partition"], "offset": {"position": 0}}]},
    )  # fmt: skip
    assert altered.status_code == 200, altered.text
    assert leader.http.get("/connectors/rest-src/offsets").json()["offsets"][0]["offset"] == {
        "position": 0
    }

    assert _call(follower, "DELETE", "/connectors/rest-src").status_code == 204
    for worker in cluster:
        wait_for_rest(
            lambda w=worker: w.http.get("/connectors/rest-src").status_code == 404, "deleted"
        )
    missing = follower.http.put("/connectors/nope/pause")
    assert missing.status_code in (404, 409)


def test_every_worker_serves_the_console_with_the_clusters_topics(
    cluster: list[DistributedProcess],
) -> None:
    for worker in cluster:
        assert worker.http.get("/ui/").status_code == 200
        answer = worker.http.get("/ui/api/topics")
        assert answer.status_code == 200, answer.text
        names = {t["name"] for t in answer.json()["topics"]}
        assert {"cluster-configs", "cluster-offsets", "cluster-status"} <= names, names
        pipelines = worker.http.get("/ui/api/pipelines").json()
        assert pipelines["directory"] == str(worker.pipelines)


def test_the_same_pipeline_file_on_both_workers_is_one_connector(
    cluster: list[DistributedProcess], tmp_path: Path
) -> None:
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"file-{i}\n" for i in range(50)))
    for worker in cluster:
        worker.write_pipeline("file-src", file_source("file-src", source, "file-lines"))
        worker.write_pipeline("file-snk", file_sink("file-snk", sink, "file-lines"))
    for worker in cluster:
        worker.wait_running("file-src")
        worker.wait_running("file-snk")
    wait_for_rest(lambda: len(read_lines(sink)) >= 50, "every line in the sink")
    assert sorted(read_lines(sink)) == sorted(f"file-{i}" for i in range(50))  # run once
    assert cluster[0].http.get("/connectors/file-src/tasks").json() == cluster[1].http.get(
        "/connectors/file-src/tasks"
    ).json()


def test_internal_requests_must_be_signed(
    cluster: list[DistributedProcess], tmp_path: Path
) -> None:
    """KIP-507: task configs that are not signed with the session key are refused."""
    leader, follower = _leader_and_follower(cluster)
    source = tmp_path / "in.txt"
    source.write_text("x\n")
    put_config(follower, "signed-src", config_of(file_source("signed-src", source, "signed")))
    follower.wait_running("signed-src")  # its owner's signed task configs were accepted
    body = b'[{"task.class": "evil"}]'
    unsigned = leader.http.post("/connectors/signed-src/tasks", content=body)
    assert unsigned.status_code == 400, unsigned.text
    forged = leader.http.post(
        "/connectors/signed-src/tasks",
        content=body,
        headers={
            "X-Connect-Authorization": "bm90IGEgc2lnbmF0dXJl",
            "X-Connect-Request-Signature-Algorithm": "HmacSHA256",
        },
    )
    assert forged.status_code == 403, forged.text
    assert "evil" not in str(leader.http.get("/connectors/signed-src/tasks").json())


def test_pipeline_through_the_follower_then_failover(
    tmp_path: Path, broker: BrokerProcess
) -> None:
    workers = _workers(tmp_path, broker, "a", "b")
    try:
        for worker in workers:
            worker.start()
        wait_for_rest(
            lambda: _leader_and_follower(workers), "a leader", timeout_s=30
        )
        _, follower = _leader_and_follower(workers)
        source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
        source.write_text("".join(f"line-{i}\n" for i in range(LINES)))
        put_config(follower, "src", config_of(file_source("src", source, "lines", tasks_max=1)))
        put_config(follower, "snk", config_of(file_sink("snk", sink, "lines", tasks_max=1)))
        wait_for_rest(lambda: len(read_lines(sink)) >= LINES, "every line in the sink")
        for worker in workers:  # both answer from the status topic: the same owners
            worker.wait_running("src")
            worker.wait_running("snk")
        ids = {w.worker_id for w in workers}
        owners = {name: workers[0].task_owners(name) for name in ("src", "snk")}
        assert all(owner in ids for names in owners.values() for owner in names), owners
        assert {name: workers[1].task_owners(name) for name in owners} == owners
        assert set(workers[0].http.get("/connectors").json()) == {"src", "snk"}

        # Kill the worker running the source task; more lines arrive meanwhile.
        victim = next(w for w in workers if w.worker_id == owners["src"][0])
        survivor = next(w for w in workers if w is not victim)
        victim.stop(signal.SIGKILL)
        with source.open("a") as out:
            out.write("".join(f"more-{i}\n" for i in range(LINES)))
        wait_for_rest(
            lambda: survivor.running("src")
            and survivor.running("snk")
            and set(survivor.task_owners("src") + survivor.task_owners("snk"))
            == {survivor.worker_id},
            "the tasks running on the survivor",
            timeout_s=60,
        )
        expected = {f"line-{i}" for i in range(LINES)} | {f"more-{i}" for i in range(LINES)}
        wait_for_rest(lambda: expected <= set(read_lines(sink)), "every line after failover")
        got = read_lines(sink)
        assert len(got) - len(expected) <= 2 * LINES  # duplicates, bounded by a re-read

        # The killed worker comes back: it gets its share (one connector, one task).
        victim.start()
        wait_for_rest(
            lambda: sorted(survivor.task_owners("src") + survivor.task_owners("snk"))
            == sorted([survivor.worker_id, victim.worker_id]),
            "the tasks spread over both workers again",
            timeout_s=60,
        )
        for name in ("src", "snk"):
            survivor.wait_running(name)
    finally:
        for worker in workers:
            worker.close()


def test_a_worker_paused_past_its_session_stops_its_tasks(
    tmp_path: Path, broker: BrokerProcess
) -> None:
    """No zombies: a worker frozen (SIGSTOP) past its session stops what it ran as soon
    as it runs again, while the other worker has taken its tasks over."""
    workers = _workers(tmp_path, broker, "p", "q")
    try:
        for worker in workers:
            worker.start()
        source = tmp_path / "in.txt"
        source.write_text("x\n")
        put_config(workers[0], "z-src", config_of(file_source("z-src", source, "z")))
        workers[0].wait_running("z-src")
        owner = workers[0].task_owners("z-src")[0]
        victim = next(w for w in workers if w.worker_id == owner)
        survivor = next(w for w in workers if w is not victim)
        assert victim.process is not None
        victim.process.send_signal(signal.SIGSTOP)
        try:
            wait_for_rest(
                lambda: survivor.running("z-src")
                and survivor.task_owners("z-src") == [survivor.worker_id],
                "the task taken over by the other worker",
                timeout_s=60,
            )
        finally:
            victim.process.send_signal(signal.SIGCONT)
        wait_for_rest(
            lambda: "out of the group" in victim.log_text(), "the frozen worker told it is out"
        )
        for worker in workers:  # one owner, the same for both (the zombie hides nothing)
            wait_for_rest(
                lambda w=worker: w.running("z-src")
                and len(set(w.task_owners("z-src"))) == 1
                and w.task_owners("z-src") == survivor.task_owners("z-src"),
                "one owner of the task, seen alike by both workers",
            )
    finally:
        for worker in workers:
            worker.close()


def test_writes_get_409_while_the_group_rebalances(tmp_path: Path, broker: BrokerProcess) -> None:
    """Kafka's 409 during a rebalance: a worker frozen (SIGSTOP) holds the group's
    rebalance open until its session ends; writes meanwhile get 409 with Kafka's
    message, and the same write succeeds once the group has settled."""
    first, frozen, joining = _workers(tmp_path, broker, "r1", "r2", "r3")
    workers = [first, frozen, joining]
    try:
        first.start()
        wait_for_rest(lambda: "(leader)" in first.log_text(), "the first worker to lead")
        frozen.start()
        wait_for_rest(lambda: "running connectors" in frozen.log_text(), "the second in")
        assert frozen.process is not None
        frozen.process.send_signal(signal.SIGSTOP)
        joining.start()  # a rebalance that waits for the frozen member's session to end
        config = {"connector.class": "FileStreamSource", "file": "/dev/null", "topic": "r"}
        attempts = iter(range(1_000_000))

        def refused() -> Response | None:
            """A write under a fresh name each time, until one gets the 409."""
            response = first.http.put(f"/connectors/r-{next(attempts)}/config", json=config)
            return response if response.status_code == 409 else None

        conflict = wait_for_rest(refused, "a write refused during the rebalance")
        assert conflict.json() == {
            "error_code": 409,
            "message": "Cannot complete request because of a conflicting operation "
            "(e.g. worker rebalance)",
        }
        put_config(first, "after-rebalance", config)  # retried while 409: accepted after
        first.wait_running("after-rebalance")
    finally:
        if frozen.process is not None:
            frozen.process.send_signal(signal.SIGCONT)
        for worker in workers:
            worker.close()


def test_the_leader_rotates_the_session_key(tmp_path: Path, broker: BrokerProcess) -> None:
    """``inter.worker.key.ttl.ms``: the leader writes a new key when the current one is
    that old; task configs published after a rotation are signed with the new key and
    accepted (the owner of the connector may be either worker)."""
    workers = [
        DistributedProcess(
            tmp_path / name,
            bootstrap=broker.bootstrap,
            group_id="rotating",
            **{"inter.worker.key.ttl.ms": "1500"},
        )
        for name in ("k1", "k2")
    ]
    try:
        for worker in workers:
            worker.start()
        leader, follower = wait_for_rest(lambda: _leader_and_follower(workers), "a leader")

        def keys_written() -> int:
            return leader.log_text().count("wrote a new session key")

        wait_for_rest(lambda: keys_written() >= 3, "two rotations of the session key")
        source = tmp_path / "in.txt"
        source.write_text("k\n")
        for topic in ("first-topic", "second-topic"):  # each change: newly signed task configs
            put_config(follower, "rotated", config_of(file_source("rotated", source, topic)))
            wait_for_rest(
                lambda t=topic: t in str(leader.http.get("/connectors/rotated/tasks").json())
                and leader.running("rotated"),
                f"task configs for {topic} accepted",
            )
    finally:
        for worker in workers:
            worker.close()


def test_a_joining_worker_takes_a_share_without_restarting_the_rest(
    tmp_path: Path, broker: BrokerProcess
) -> None:
    """KIP-415 with real workers: six sink tasks on two workers, a third joins; it gets
    a share, and every task that stays where it was is not restarted (each worker logs
    ``starting task <connector>-<n>`` once per start)."""
    first, second, third = _workers(tmp_path, broker, "s1", "s2", "s3")
    workers = [first, second, third]
    try:
        first.start()
        second.start()
        put_config(first, "spread", {
            **config_of(file_sink("spread", tmp_path / "out.txt", "sp")), "tasks.max": "6"
        })  # fmt: skip

        def placement() -> dict[int, str] | None:
            status = first.status("spread")
            if status is None or len(status["tasks"]) != 6:
                return None
            if any(t["state"] != "RUNNING" for t in status["tasks"]):
                return None
            return {t["id"]: t["worker_id"] for t in status["tasks"]}

        before = wait_for_rest(placement, "six tasks running on the first two workers")
        assert set(before.values()) == {first.worker_id, second.worker_id}
        third.start()
        after = wait_for_rest(
            lambda: (p := placement()) and third.worker_id in p.values() and p,
            "the third worker running a share",
        )
        # the group settles (the cooperative protocol may take two rebalances)
        wait_for_rest(lambda: placement() == after and len(set(after.values())) == 3, "3 owners")
        for task, owner in after.items():
            worker = next(w for w in workers if w.worker_id == owner)
            starts = worker.log_text().count(f"starting task spread-{task} ")
            assert starts == 1, (task, owner, starts)  # started once where it runs now
        stayed = [t for t in after if after[t] == before[t]]
        assert stayed, (before, after)  # the two first workers kept some of their tasks
    finally:
        for worker in workers:
            worker.close()
