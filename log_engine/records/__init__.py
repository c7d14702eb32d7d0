"""Kafka's RecordBatch v2 format: varints, compression, and the batch codec.

Re-exports the public names of the private modules. The broker touches the
batch header (:func:`read_header`, :func:`validate_batch`, the ``stamp_*``
functions) and, on produce only, walks the records' varints without decoding
them (:mod:`log_engine.records.record_check`); clients and the compaction
cleaner decode whole batches.
"""

from log_engine.records.batch import (
    BATCH_HEADER_SIZE,
    BatchHeader,
    Record,
    TimestampType,
    build_batch,
    decode_batch,
    iter_batches,
    read_header,
    stamp_base_offset,
    stamp_leader_epoch,
    stamp_log_append_time,
    validate_batch,
)
from log_engine.records.compression import Compression

__all__ = [
    "BATCH_HEADER_SIZE",
    "BatchHeader",
    "Compression",
    "Record",
    "TimestampType",
    "build_batch",
    "decode_batch",
    "iter_batches",
    "read_header",
    "stamp_base_offset",
    "stamp_leader_epoch",
    "stamp_log_append_time",
    "validate_batch",
]
