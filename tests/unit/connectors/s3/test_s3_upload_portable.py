"""What the upload process sends back for a failure: something the worker can unpickle that
keeps what the task's messages are made of (exception class, S3 error code, text)."""

from __future__ import annotations

import pickle
import threading

from botocore.exceptions import ClientError, EndpointConnectionError

from connectors.s3.upload_process import portable


class NoSuchBucket(ClientError):
    """Like boto3's ``client.exceptions.NoSuchBucket``: a class made at run time."""


def test_client_errors_come_back_as_plain_client_errors_with_the_same_response() -> None:
    response = {"Error": {"Code": "NoSuchBucket", "Message": "gone"}}
    back = pickle.loads(pickle.dumps(portable(NoSuchBucket(response, "PutObject"))))  # type: ignore[arg-type]
    assert type(back) is ClientError
    assert back.response["Error"] == {"Code": "NoSuchBucket", "Message": "gone"}
    assert back.operation_name == "PutObject"


def test_botocore_errors_keep_their_class_and_others_their_text() -> None:
    unreachable = pickle.loads(pickle.dumps(portable(EndpointConnectionError(endpoint_url="u"))))
    assert isinstance(unreachable, EndpointConnectionError) and '"u"' in str(unreachable)
    odd = ValueError("holds a lock")
    odd.lock = threading.Lock()  # type: ignore[attr-defined]  # cannot be pickled
    back = portable(odd)
    assert type(back) is RuntimeError and str(back) == "ValueError: holds a lock"
