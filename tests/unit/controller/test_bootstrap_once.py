"""The bootstrap records of ``sluice storage format`` go into a metadata log once.

The first activation appends them with the marker FeatureLevelRecord; a later
activation, even of a cluster emptied of everything the records created, adds
nothing: a deleted bootstrap user stays deleted.
"""

from __future__ import annotations

import uuid

from log_engine.metadata.bootstrap import (
    BOOTSTRAP_VERSION,
    BOOTSTRAPPED_FEATURE,
    bootstrap_records,
)
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import (
    FeatureLevelRecord,
    TopicRecord,
    UserScramCredentialRecord,
)
from log_engine.metadata.snapshot import encode_snapshot, load_snapshot
from log_engine.replication.raft.types import LeaderAndEpoch
from tests.unit.controller.harness import Harness

ADMIN = UserScramCredentialRecord("admin", 2, b"salt", b"stored", b"server", 4096)
MARKER = FeatureLevelRecord(BOOTSTRAPPED_FEATURE, BOOTSTRAP_VERSION)


def _activate_again(h: Harness) -> None:
    """A new leader epoch of the same node: the activation NoOp, then one more tick."""
    h.epoch += 1
    h.listener.handle_leader_change(LeaderAndEpoch(0, h.epoch))
    h.commit(h.controller.tick(h.now_ms))
    h.commit(h.controller.tick(h.now_ms))
    assert h.controller.is_active


def test_the_first_activation_writes_the_bootstrap_users_and_the_marker() -> None:
    h = Harness(bootstrap=[ADMIN])
    assert h.image.scram == {("admin", 2): ADMIN}
    assert h.image.features == {BOOTSTRAPPED_FEATURE: BOOTSTRAP_VERSION}


def test_a_deleted_bootstrap_user_does_not_come_back_at_the_next_activation() -> None:
    h = Harness(bootstrap=[ADMIN])
    h.commit(h.controller.alter_scram([("admin", 2)], []))
    assert not h.image.scram  # the cluster is as empty as a new one, but for the marker
    _activate_again(h)
    assert not h.image.scram


def test_a_log_without_the_marker_gets_it_and_the_users_only_if_fresh() -> None:
    fresh = MetadataImage.EMPTY
    used = fresh.apply(TopicRecord("t", uuid.uuid4()))  # written before the marker existed
    assert bootstrap_records(fresh, [ADMIN]) == [MARKER, ADMIN]
    assert bootstrap_records(used, [ADMIN]) == [MARKER]
    assert bootstrap_records(fresh.apply(MARKER), [ADMIN]) == []


def test_the_marker_survives_a_snapshot_and_level_0_removes_it() -> None:
    image = MetadataImage.EMPTY.apply(MARKER)
    assert load_snapshot(encode_snapshot(image), 0) == image
    assert image.apply(FeatureLevelRecord(BOOTSTRAPPED_FEATURE, 0)).features == {}
