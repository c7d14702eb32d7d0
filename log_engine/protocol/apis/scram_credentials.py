"""DescribeUserScramCredentials (api key 50) and AlterUserScramCredentials (51),
version 0 (flexible only: KIP-554).

Mechanisms travel as int8: 1 = SCRAM-SHA-256, 2 = SCRAM-SHA-512. An upsertion
carries the salt and the salted password (PBKDF2 done by the client), never
the password itself.
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message
from log_engine.protocol.types import BYTES, INT8, INT16, INT32, STRING
from log_engine.protocol.versions import ApiKey

DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST = Message(
    "DescribeUserScramCredentialsRequest",
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    (0, 0),
    (Field("users", Array((Field("name", STRING),)), nullable=ALL_VERSIONS),),
    flexible=0,
)

DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE = Message(
    "DescribeUserScramCredentialsResponse",
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    (0, 0),
    (
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable=ALL_VERSIONS),
        Field(
            "results",
            Array(
                (
                    Field("user", STRING),
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=ALL_VERSIONS),
                    Field(
                        "credential_infos",
                        Array((Field("mechanism", INT8), Field("iterations", INT32))),
                    ),
                )
            ),
        ),
    ),
    flexible=0,
)

ALTER_USER_SCRAM_CREDENTIALS_REQUEST = Message(
    "AlterUserScramCredentialsRequest",
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    (0, 0),
    (
        Field("deletions", Array((Field("name", STRING), Field("mechanism", INT8)))),
        Field(
            "upsertions",
            Array(
                (
                    Field("name", STRING),
                    Field("mechanism", INT8),
                    Field("iterations", INT32),
                    Field("salt", BYTES),
                    Field("salted_password", BYTES),
                )
            ),
        ),
    ),
    flexible=0,
)

ALTER_USER_SCRAM_CREDENTIALS_RESPONSE = Message(
    "AlterUserScramCredentialsResponse",
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    (0, 0),
    (
        Field("throttle_time_ms", INT32),
        Field(
            "results",
            Array(
                (
                    Field("user", STRING),
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable=ALL_VERSIONS),
                )
            ),
        ),
    ),
    flexible=0,
)
