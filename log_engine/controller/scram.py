"""SCRAM credential changes as metadata records (Kafka's ScramControlManager).

An upsertion becomes a ``UserScramCredentialRecord`` (salted: StoredKey and
ServerKey, derived from the salted password by the broker that took the
request); a deletion of a credential the image has becomes a
``RemoveUserScramCredentialRecord`` (one it lacks: nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import (
    MetadataRecord,
    RemoveUserScramCredentialRecord,
    UserScramCredentialRecord,
)


def scram_records(
    image: MetadataImage,
    deletions: Sequence[tuple[str, int]],
    upsertions: Sequence[UserScramCredentialRecord],
) -> list[MetadataRecord]:
    records: list[MetadataRecord] = [
        RemoveUserScramCredentialRecord(name, mechanism)
        for name, mechanism in dict.fromkeys(deletions)
        if (name, mechanism) in image.scram
    ]
    records.extend(upsertions)
    return records
