"""The metadata log's bootstrap records: what ``sluice storage format`` leaves for the
first active controller (Kafka's ``bootstrap.checkpoint`` of ``kafka-storage format``).

``<log.dirs>/bootstrap.checkpoint`` holds metadata records (today the
UserScramCredentialRecords of ``--add-scram``) framed as a snapshot payload
(``snapshot.py``), behind a CRC-32C::

    crc : u32 (CRC-32C of the payload)   payload : length-prefixed framed records

The file is written mode 0600 (StoredKey and ServerKey let a thief try passwords
offline) and replaced atomically.

The first controller to become active appends, in one batch, the marker
``FeatureLevelRecord(sluice.bootstrap.version=1)`` and, on a *fresh* log
(:func:`is_fresh`), these records (:func:`bootstrap_records`); every node then
has them in its image. The marker makes it once per cluster, as Kafka's
bootstrap metadata goes only into an empty log: a cluster whose topics and
users were all deleted later does not get its bootstrap users back. A log
written before the marker existed gets the marker alone unless it is fresh.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from pathlib import Path

import crc32c

from log_engine.errors import MetadataRecordError
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import FeatureLevelRecord, MetadataRecord, encode_record
from log_engine.metadata.snapshot import decode_snapshot_records
from log_engine.protocol.types import uvarint_bytes

BOOTSTRAP_FILE = "bootstrap.checkpoint"
BOOTSTRAPPED_FEATURE = "sluice.bootstrap.version"
"""The feature whose FeatureLevelRecord marks a metadata log as bootstrapped."""
BOOTSTRAP_VERSION = 1
_CRC = struct.Struct(">I")


def write_bootstrap(log_dir: Path, records: Sequence[MetadataRecord]) -> Path:
    """Write ``records`` as ``log_dir``'s bootstrap file (0600, atomically); its path."""
    payload = bytearray()
    for record in records:
        data = encode_record(record)
        payload += uvarint_bytes(len(data))
        payload += data
    path = log_dir / BOOTSTRAP_FILE
    temporary = path.with_name(path.name + ".tmp")
    log_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(_CRC.pack(crc32c.crc32c(bytes(payload))) + payload)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return path


def read_bootstrap(log_dir: Path) -> list[MetadataRecord]:
    """The bootstrap records of ``log_dir`` (none without the file);
    :class:`MetadataRecordError` naming the file if it is damaged."""
    path = log_dir / BOOTSTRAP_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    if len(data) < _CRC.size or _CRC.unpack_from(data)[0] != crc32c.crc32c(data[_CRC.size :]):
        raise MetadataRecordError(
            f"{path} is damaged (checksum mismatch): format the node again "
            "(sluice storage format) or remove the file"
        )
    try:
        return decode_snapshot_records(data[_CRC.size :])
    except MetadataRecordError as exc:
        raise MetadataRecordError(f"{path}: {exc}") from exc


def is_fresh(image: MetadataImage) -> bool:
    """Whether the committed image is a new cluster's: no topic, config, producer-id
    block, ACL or SCRAM credential yet (broker registrations may already be there:
    brokers register as soon as a controller is active, before anything else can
    happen, since clients are served only by unfenced brokers)."""
    return not (
        image.topics or image.configs or image.producer_ids or image.acls or image.scram
    )


def bootstrap_records(
    image: MetadataImage, bootstrap: Sequence[MetadataRecord]
) -> list[MetadataRecord]:
    """What an active controller appends on ``image``, as one batch: nothing once
    the log has the bootstrap marker; else the marker, and ``bootstrap`` too if the
    log is fresh."""
    if BOOTSTRAPPED_FEATURE in image.features:
        return []
    marker = FeatureLevelRecord(BOOTSTRAPPED_FEATURE, BOOTSTRAP_VERSION)
    return [marker, *bootstrap] if is_fresh(image) else [marker]
