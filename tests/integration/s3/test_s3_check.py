"""``check()`` makes a real call and names the problem: endpoint, credentials, bucket."""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import pytest

from connectors.api import ConnectError
from connectors.s3.sink import S3SinkConnector, S3SinkTask
from connectors.s3.source import S3SourceConnector, S3SourceTask
from harness.broker_process import free_port
from harness.s3_server import REGION, S3Server

ALLOW_ALL = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
}


@pytest.fixture(scope="module")
def auth_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[S3Server, dict[str, str]]]:
    """A moto server that checks credentials after its first 4 requests (user, policy, key,
    bucket): wrong keys are then refused as AWS refuses them."""
    server = S3Server(
        tmp_path_factory.mktemp("s3auth") / "moto.log", env={"INITIAL_NO_AUTH_ACTION_COUNT": "4"}
    ).start()
    iam = boto3.client(
        "iam",
        endpoint_url=server.url,
        region_name=REGION,
        aws_access_key_id="setup",
        aws_secret_access_key="setup",
    )
    iam.create_user(UserName="sluice")
    iam.put_user_policy(UserName="sluice", PolicyName="all", PolicyDocument=json.dumps(ALLOW_ALL))
    key = iam.create_access_key(UserName="sluice")["AccessKey"]
    server.client().create_bucket(Bucket="guarded")
    props = {
        **server.props("guarded"),
        "aws.access.key.id": key["AccessKeyId"],
        "aws.secret.access.key": key["SecretAccessKey"],
    }
    yield server, props
    server.stop()


def test_a_reachable_bucket_has_no_problems(s3: S3Server, bucket: str) -> None:
    assert S3SinkConnector().check(s3.props(bucket)) == []
    assert S3SourceConnector().check({**s3.props(bucket), "mode": "RESTORE_BACKUP"}) == []


def test_an_unreachable_endpoint_is_named() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    props = {"s3.bucket.name": "bucket", "store.url": url, "aws.access.key.id": "k"}
    problems = S3SinkConnector().check({**props, "aws.secret.access.key": "s"})
    assert len(problems) == 1
    assert problems[0].startswith(f"store.url: cannot reach the S3 endpoint {url}")


def test_a_missing_bucket_is_named(s3: S3Server) -> None:
    problems = S3SinkConnector().check(s3.props("no-such-bucket"))
    assert problems == [f"s3.bucket.name: bucket 'no-such-bucket' does not exist at {s3.url}"]
    task = S3SinkTask()
    with pytest.raises(ConnectError, match="bucket 'no-such-bucket' does not exist"):
        task.start({**s3.props("no-such-bucket"), "topics": "t"})
    source = S3SourceTask()
    with pytest.raises(ConnectError, match="bucket 'no-such-bucket' does not exist"):
        source.start(s3.props("no-such-bucket"))


@pytest.mark.slow
def test_wrong_credentials_are_refused_clearly(auth_s3: tuple[S3Server, dict[str, str]]) -> None:
    server, good = auth_s3
    assert S3SinkConnector().check(good) == []
    wrong_secret = S3SinkConnector().check({**good, "aws.secret.access.key": "not-the-secret"})
    assert len(wrong_secret) == 1
    assert wrong_secret[0].startswith(f"aws.access.key.id: {server.url} refused the credentials")
    assert "SignatureDoesNotMatch" in wrong_secret[0]
    unknown = S3SourceConnector().check({**good, "aws.access.key.id": "AKIANOBODY"})
    assert "refused the credentials" in unknown[0] and "InvalidAccessKeyId" in unknown[0]
    assert "not-the-secret" not in wrong_secret[0]


def test_a_bad_config_is_a_problem_too() -> None:
    problems = S3SourceConnector().check({"s3.bucket.name": "bucket", "mode": "generic"})
    assert problems == ["config: topic: mode=generic needs the topic to write to"]
