"""Producer id blocks on a full disk (a real small tmpfs): no id is handed out unsaved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from log_engine.broker.producer_ids import BLOCK_SIZE, ProducerIdManager
from log_engine.errors import KafkaError
from tests.support.small_fs import SmallFilesystem, mounted_or_fail


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[SmallFilesystem]:
    with mounted_or_fail(tmp_path / "mnt", 1 << 20) as fs:
        yield fs


def test_a_block_that_cannot_be_saved_gives_no_id(small_fs: SmallFilesystem) -> None:
    ids = ProducerIdManager(small_fs.root)
    small_fs.fill()
    for _ in range(2):  # the second call must not use the block the first failed to save
        with pytest.raises((OSError, KafkaError)) as failed:
            ids.next_id()
        assert isinstance(failed.value, KafkaError)
        assert failed.value.errno == 56
    assert not (small_fs.root / "producer-id-block").exists()
    assert not list(small_fs.root.glob("producer-id-block*")), "a temp file holds the space"

    small_fs.free()
    assert ids.next_id() == 0
    assert ProducerIdManager(small_fs.root).next_id() == BLOCK_SIZE  # a restart skips the block
