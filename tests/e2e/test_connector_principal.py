"""A connector logs in as its own user through ``consumer.override.*`` (issue 19).

The broker has an authorizer; the worker's user ``connect`` is a super user,
the sink connectors' user ``sinker`` may READ one topic only. Both sinks
override ``sasl.jaas.config`` per connector, as Kafka Connect operators scope
a connector to its own principal: the sink of the granted topic delivers
every line, the sink of the other topic fails with the broker's
authorization error and delivers nothing, and neither password is logged.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from harness.broker_process import BrokerProcess
from harness.secured_broker import SCRAM_JAAS, sasl_ssl_broker, sasl_ssl_client_props
from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    read_lines,
    wait_for_rest,
)
from harness.tls_certs import TestCA

CONNECT_PASSWORD = "connect-worker-secret"
SINKER_PASSWORD = "sinker-connector-secret"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def broker(ca: TestCA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    process = sasl_ssl_broker(
        tmp_path_factory.mktemp("broker") / "data", ca, "connect", CONNECT_PASSWORD
    )
    process.overrides.update(
        {
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:connect",
            "sasl.scram.bootstrap.users": (
                f"SCRAM-SHA-512=[name=connect,password={CONNECT_PASSWORD}] "
                f"SCRAM-SHA-512=[name=sinker,password={SINKER_PASSWORD}]"
            ),
        }
    )
    process.start()
    yield process
    assert process.stop() == 0, process.log_text()


def _grant_sinker(broker: BrokerProcess, ca: TestCA) -> None:
    admin = AdminClient(
        {
            "bootstrap.servers": broker.bootstrap,
            "security.protocol": "SASL_SSL",
            "ssl.ca.location": str(ca.cert),
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "connect",
            "sasl.password": CONNECT_PASSWORD,
        }
    )

    def allow(kind: ResourceType, name: str, operation: AclOperation) -> AclBinding:
        return AclBinding(
            kind, name, ResourcePatternType.LITERAL, "User:sinker", "*",
            operation, AclPermissionType.ALLOW,
        )  # fmt: skip

    bindings = [
        allow(ResourceType.TOPIC, "granted-lines", AclOperation.READ),
        allow(ResourceType.GROUP, "connect-", AclOperation.READ),
    ]
    bindings[1] = AclBinding(
        ResourceType.GROUP, "connect-", ResourcePatternType.PREFIXED, "User:sinker", "*",
        AclOperation.READ, AclPermissionType.ALLOW,
    )  # fmt: skip
    for future in admin.create_acls(bindings).values():
        future.result(30)


def test_sinks_log_in_as_their_own_user(broker: BrokerProcess, ca: TestCA, tmp_path: Path) -> None:
    _grant_sinker(broker, ca)
    worker = StandaloneProcess(
        tmp_path / "worker",
        **{
            "bootstrap.servers": broker.bootstrap,
            **sasl_ssl_client_props(ca, "connect", CONNECT_PASSWORD),
            "task.restart.enabled": "false",
        },
    ).start()
    sinker = {
        "consumer_override_sasl_jaas_config": SCRAM_JAAS.format(
            user="sinker", password=SINKER_PASSWORD
        )
    }
    try:
        for topic in ("granted-lines", "forbidden-lines"):
            source = tmp_path / f"{topic}.txt"
            source.write_text("".join(f"{topic} {i}\n" for i in range(20)))
            worker.write_pipeline(f"src-{topic}", file_source(f"src-{topic}", source, topic))
        granted, forbidden = tmp_path / "granted.out", tmp_path / "forbidden.out"
        worker.write_pipeline(
            "granted-sink", file_sink("granted-sink", granted, "granted-lines", **sinker)
        )
        worker.write_pipeline(
            "forbidden-sink", file_sink("forbidden-sink", forbidden, "forbidden-lines", **sinker)
        )
        wait_for_rest(lambda: len(read_lines(granted)) == 20, "the granted sink's lines")
        assert read_lines(granted) == [f"granted-lines {i}" for i in range(20)]

        def failed_trace() -> str:
            status = worker.status("forbidden-sink") or {}
            tasks = status.get("tasks") or [{}]
            return tasks[0].get("trace") or "" if tasks[0].get("state") == "FAILED" else ""

        trace = wait_for_rest(failed_trace, "the forbidden sink's task FAILED")
        assert "TOPIC_AUTHORIZATION_FAILED" in trace or "Not authorized" in trace, trace
        assert "forbidden-lines" in trace, trace
        assert read_lines(forbidden) == []
    finally:
        code = worker.stop()
        worker.close()
    assert code == 0, worker.log_text()
    log = worker.log_text()
    assert SINKER_PASSWORD not in log and CONNECT_PASSWORD not in log
