"""meta.properties: written once on the first start, checked on every later one."""

from __future__ import annotations

from pathlib import Path

import pytest

from log_engine.replication.quorum import (
    MetaProperties,
    MetaPropertiesError,
    ensure_formatted,
    read_meta_properties,
)


def test_first_start_formats_then_reads_back(tmp_path: Path) -> None:
    assert read_meta_properties(tmp_path) is None
    assert ensure_formatted(tmp_path, "abc", 1) == MetaProperties("abc", 1)
    text = (tmp_path / "meta.properties").read_text()
    assert "cluster.id=abc\nnode.id=1\nversion=1\n" in text
    assert ensure_formatted(tmp_path, "abc", 1) == MetaProperties("abc", 1)
    assert not list(tmp_path.glob("*.tmp"))


def test_kafka_written_file_with_comments_is_read(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text(
        "#\n#Tue Nov 24 10:00:00 UTC 2026\nnode.id=3\ndirectory.id=x\nversion=1\ncluster.id=K1\n"
    )
    assert ensure_formatted(tmp_path, "K1", 3) == MetaProperties("K1", 3)


@pytest.mark.parametrize(
    ("cluster", "node", "message"),
    [("other", 1, "belongs to another cluster"), ("abc", 2, "belongs to another node")],
)
def test_mismatch_is_refused_and_the_file_kept(
    tmp_path: Path, cluster: str, node: int, message: str
) -> None:
    ensure_formatted(tmp_path, "abc", 1)
    before = (tmp_path / "meta.properties").read_bytes()
    with pytest.raises(MetaPropertiesError, match=message):
        ensure_formatted(tmp_path, cluster, node)
    assert (tmp_path / "meta.properties").read_bytes() == before


def test_malformed_file_and_orphaned_metadata_log_are_refused(tmp_path: Path) -> None:
    (tmp_path / "meta.properties").write_text("node.id=1\n")
    with pytest.raises(MetaPropertiesError, match="malformed"):
        ensure_formatted(tmp_path, "abc", 1)
    other = tmp_path / "other"
    (other / "__cluster_metadata-0").mkdir(parents=True)
    with pytest.raises(MetaPropertiesError, match="holds a metadata log but no meta"):
        ensure_formatted(other, "abc", 1)
