"""The bootstrap file of ``sluice storage format``: round trip, damage, freshness."""

from __future__ import annotations

import stat
import uuid
from pathlib import Path

import pytest

from log_engine.broker.cluster.storage_format import scram_bootstrap_records
from log_engine.broker.config import BrokerConfigError
from log_engine.errors import MetadataRecordError
from log_engine.metadata.bootstrap import BOOTSTRAP_FILE, is_fresh, read_bootstrap, write_bootstrap
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import RegisterBrokerRecord, TopicRecord


def test_records_round_trip_in_a_private_file(tmp_path: Path) -> None:
    records = scram_bootstrap_records(
        ["SCRAM-SHA-256=[name=alice,password=a-secret] SCRAM-SHA-512=[name=bob,password=b,"
         "iterations=8192]"]
    )  # fmt: skip
    assert [(r.name, r.mechanism, r.iterations) for r in records] == [
        ("alice", 1, 4096), ("bob", 2, 8192),
    ]  # fmt: skip
    path = write_bootstrap(tmp_path, records)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert b"a-secret" not in path.read_bytes()
    assert read_bootstrap(tmp_path) == records
    assert read_bootstrap(tmp_path / "elsewhere") == []


def test_a_damaged_file_is_named(tmp_path: Path) -> None:
    path = write_bootstrap(tmp_path, scram_bootstrap_records(["SCRAM-SHA-256=[name=a,password=p]"]))
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(MetadataRecordError, match=BOOTSTRAP_FILE):
        read_bootstrap(tmp_path)


@pytest.mark.parametrize(
    "text",
    [
        "alice:secret",
        "SCRAM-SHA-256=[name=alice]",
        "SCRAM-SHA-512=[name=a,password=p,iterations=x]",
    ],
)
def test_bad_add_scram_arguments_are_refused(text: str) -> None:
    with pytest.raises(BrokerConfigError, match="--add-scram"):
        scram_bootstrap_records([text])


def test_registrations_leave_the_log_fresh_a_topic_does_not() -> None:
    registered = MetadataImage.EMPTY.apply(RegisterBrokerRecord(1, uuid.uuid4(), 5))
    assert is_fresh(MetadataImage.EMPTY) and is_fresh(registered)
    assert not is_fresh(registered.apply(TopicRecord("t", uuid.uuid4())))
