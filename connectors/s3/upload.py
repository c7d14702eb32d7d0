"""Writing one object: a single PUT, or a multipart upload in ``s3.part.size`` parts.

An object is complete or absent: a multipart upload is invisible until
``CompleteMultipartUpload``, and aborted when a part fails (parts of an upload
left behind by a crash are not visible either; a bucket lifecycle rule
``AbortIncompleteMultipartUpload`` reclaims their space, as for Confluent's sink).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

MIN_PART_SIZE = 5 * 1024 * 1024
MAX_PARTS = 10_000


def put_object(
    client: Any,
    bucket: str,
    key: str,
    data: bytes | bytearray,
    part_size: int,
    metadata: Mapping[str, str],
) -> int:
    """Write ``data`` at ``key`` with ``metadata``; returns the number of parts (1 = plain PUT)."""
    assert part_size >= MIN_PART_SIZE, "s3.part.size is validated to be at least 5 MiB"
    if len(data) <= part_size:
        client.put_object(Bucket=bucket, Key=key, Body=data, Metadata=dict(metadata))
        return 1
    if len(data) > part_size * MAX_PARTS:  # S3 allows 10,000 parts: grow them to fit
        part_size = -(-len(data) // MAX_PARTS)
    upload_id = client.create_multipart_upload(Bucket=bucket, Key=key, Metadata=dict(metadata))[
        "UploadId"
    ]
    parts = []
    view = memoryview(data)
    try:
        for number, start in enumerate(range(0, len(data), part_size), start=1):
            answer = client.upload_part(
                Bucket=bucket,
                Key=key,
                UploadId=upload_id,
                PartNumber=number,
                Body=view[start : start + part_size].tobytes(),
            )
            parts.append({"PartNumber": number, "ETag": answer["ETag"]})
        client.complete_multipart_upload(
            Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
        )
    except BaseException:
        with contextlib.suppress(Exception):  # the first error is the one to report
            client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
        raise
    return len(parts)
