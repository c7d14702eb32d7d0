"""ACL changes as metadata records (Kafka's AclControlManager).

Creating a binding appends an ``AccessControlEntryRecord`` under a new random
id, unless an identical binding exists (then nothing: creating is
idempotent, as in Kafka). Deleting appends a ``RemoveAccessControlEntryRecord``
per binding a filter matches; one binding matched by two filters is removed
once and reported under both.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable, Sequence

from log_engine.acls import AclBinding, AclFilter
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import (
    AccessControlEntryRecord,
    MetadataRecord,
    RemoveAccessControlEntryRecord,
)


def binding_of(record: AccessControlEntryRecord) -> AclBinding:
    """The binding a record carries (records are checked when created)."""
    return AclBinding.build(
        record.resource_type,
        record.resource_name,
        record.pattern_type,
        record.principal,
        record.host,
        record.operation,
        record.permission_type,
    )


def image_bindings(image: MetadataImage) -> dict[AclBinding, uuid.UUID]:
    """binding -> id of every ACL in the image."""
    return {binding_of(record): acl_id for acl_id, record in image.acls.items()}


def create_acl_records(
    image: MetadataImage, bindings: Iterable[AclBinding], rng: random.Random
) -> list[MetadataRecord]:
    existing = image_bindings(image)
    records: list[MetadataRecord] = []
    for b in bindings:
        if b in existing:
            continue
        acl_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        while acl_id in image.acls:
            acl_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        existing[b] = acl_id
        records.append(
            AccessControlEntryRecord(
                acl_id,
                int(b.resource_type),
                b.resource_name,
                int(b.pattern_type),
                b.principal,
                b.host,
                int(b.operation),
                int(b.permission),
            )
        )
    return records


def delete_acl_records(
    image: MetadataImage, filters: Sequence[AclFilter]
) -> tuple[list[list[AclBinding]], list[MetadataRecord]]:
    """Per filter the bindings it matched, and the records removing them."""
    existing = image_bindings(image)
    matched = [[b for b in existing if f.matches(b)] for f in filters]
    gone = dict.fromkeys(b for group in matched for b in group)
    records: list[MetadataRecord] = [RemoveAccessControlEntryRecord(existing[b]) for b in gone]
    return matched, records
