"""ACLs as metadata records: the controller's records, the image, snapshots."""

from __future__ import annotations

import pytest

from log_engine.acls import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from log_engine.controller.acls import image_bindings
from log_engine.errors import MetadataReplayError
from log_engine.metadata.records import RemoveAccessControlEntryRecord, UserScramCredentialRecord
from log_engine.metadata.snapshot import encode_snapshot, load_snapshot
from tests.unit.controller.harness import Harness


def _binding(name: str, op: AclOperation = AclOperation.READ) -> AclBinding:
    return AclBinding.build(
        ResourceType.TOPIC, name, PatternType.LITERAL, "User:alice", "*", op,
        AclPermissionType.ALLOW,
    )  # fmt: skip


def _topic_filter(name: str | None) -> AclFilter:
    return AclFilter.build(
        ResourceType.TOPIC, name, PatternType.ANY, None, None, AclOperation.ANY,
        AclPermissionType.ANY,
    )  # fmt: skip


def test_create_is_idempotent_and_delete_removes_each_binding_once() -> None:
    h = Harness()
    a, b = _binding("a"), _binding("b", AclOperation.WRITE)
    assert h.commit(h.controller.create_acls([a, b, a])) is True
    assert set(image_bindings(h.image)) == {a, b}
    before = h.offset
    assert h.commit(h.controller.create_acls([a])) is True
    assert h.offset == before  # nothing new to write
    removed = h.commit(h.controller.delete_acls([_topic_filter("a"), _topic_filter(None)]))
    assert removed == [[a], [a, b]]
    assert image_bindings(h.image) == {}
    assert h.offset == before + 2  # one RemoveAccessControlEntryRecord per binding


def test_acls_survive_a_snapshot() -> None:
    h = Harness()
    h.commit(h.controller.create_acls([_binding("a"), _binding("p-")]))
    image = h.image
    assert load_snapshot(encode_snapshot(image), image.end_offset).acls == image.acls


def test_removing_an_unknown_acl_does_not_replay() -> None:
    h = Harness()
    h.commit(h.controller.create_acls([_binding("a")]))
    (acl_id,) = h.image.acls
    image = h.image.apply(RemoveAccessControlEntryRecord(acl_id))
    with pytest.raises(MetadataReplayError, match="no ACL with id"):
        image.apply(RemoveAccessControlEntryRecord(acl_id))


def test_an_inactive_controller_refuses() -> None:
    h = Harness()
    h.controller.renounce()
    assert h.controller.create_acls([_binding("a")]).response is False
    assert h.controller.delete_acls([_topic_filter(None)]).response is None


def test_scram_credentials_as_records_and_in_snapshots() -> None:
    h = Harness()
    carol = UserScramCredentialRecord("carol", 2, b"salt", b"stored", b"server", 4096)
    assert h.commit(h.controller.alter_scram([("nobody", 2)], [carol])) is True
    assert dict(h.image.scram) == {("carol", 2): carol}
    image = h.image
    assert load_snapshot(encode_snapshot(image), image.end_offset).scram == image.scram
    before = h.offset
    assert h.commit(h.controller.alter_scram([("carol", 2), ("carol", 1)], [])) is True
    assert h.offset == before + 1  # only the credential that exists is removed
    assert dict(h.image.scram) == {}
