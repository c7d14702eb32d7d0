"""AllocateProducerIds (API 67) as a ``ProducerIdsRecord`` (Kafka's ProducerIdControlManager).

A broker at its current broker epoch gets the next ``producer_id_block_size``
ids, from the image's ``next_producer_id`` on; the record names the start of
the block after it, so no two blocks overlap. Another epoch: STALE_BROKER_EPOCH.
"""

from __future__ import annotations

from log_engine.controller.brokers import current_registration
from log_engine.controller.results import ControllerResult, ProducerIdBlock
from log_engine.errors import ErrorCode
from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import ProducerIdsRecord


def allocate_producer_ids_result(
    image: MetadataImage, broker_id: int, broker_epoch: int, block_size: int
) -> ControllerResult[ProducerIdBlock]:
    """The record and reply giving ``broker_id`` its next block of ``block_size`` ids."""
    if current_registration(image, broker_id, broker_epoch) is None:
        return ControllerResult((), ProducerIdBlock(int(ErrorCode.STALE_BROKER_EPOCH)))
    start = image.next_producer_id
    record = ProducerIdsRecord(broker_id, broker_epoch, start + block_size)
    return ControllerResult((record,), ProducerIdBlock(int(ErrorCode.NONE), start, block_size))
