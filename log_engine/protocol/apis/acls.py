"""DescribeAcls (29), CreateAcls (30), DeleteAcls (31), versions 0-3.

v1 adds the resource pattern type (v0 bindings and filters are LITERAL); v2+
is flexible; v3 adds the USER resource type (no new field). Enums travel as
int8 with Kafka's codes (``log_engine.acls``). In filters a
null string means "any".
"""

from __future__ import annotations

from log_engine.protocol.schema import ALL_VERSIONS, Array, Field, Message
from log_engine.protocol.types import INT8, INT16, INT32, STRING
from log_engine.protocol.versions import ApiKey

_LITERAL = 3
_THROTTLE_TIME = Field("throttle_time_ms", INT32)
_ERROR_MESSAGE = Field("error_message", STRING, nullable=ALL_VERSIONS)

_FILTER = (
    Field("resource_type_filter", INT8),
    Field("resource_name_filter", STRING, nullable=ALL_VERSIONS),
    Field("pattern_type_filter", INT8, versions=(1, None), default=_LITERAL),
    Field("principal_filter", STRING, nullable=ALL_VERSIONS),
    Field("host_filter", STRING, nullable=ALL_VERSIONS),
    Field("operation", INT8),
    Field("permission_type", INT8),
)

DESCRIBE_ACLS_REQUEST = Message(
    "DescribeAclsRequest", ApiKey.DESCRIBE_ACLS, (0, 3), _FILTER, flexible=2
)

DESCRIBE_ACLS_RESPONSE = Message(
    "DescribeAclsResponse",
    ApiKey.DESCRIBE_ACLS,
    (0, 3),
    (
        _THROTTLE_TIME,
        Field("error_code", INT16),
        _ERROR_MESSAGE,
        Field(
            "resources",
            Array(
                (
                    Field("resource_type", INT8),
                    Field("resource_name", STRING),
                    Field("pattern_type", INT8, versions=(1, None), default=_LITERAL),
                    Field(
                        "acls",
                        Array(
                            (
                                Field("principal", STRING),
                                Field("host", STRING),
                                Field("operation", INT8),
                                Field("permission_type", INT8),
                            )
                        ),
                    ),
                )
            ),
        ),
    ),
    flexible=2,
)

CREATE_ACLS_REQUEST = Message(
    "CreateAclsRequest",
    ApiKey.CREATE_ACLS,
    (0, 3),
    (
        Field(
            "creations",
            Array(
                (
                    Field("resource_type", INT8),
                    Field("resource_name", STRING),
                    Field("resource_pattern_type", INT8, versions=(1, None), default=_LITERAL),
                    Field("principal", STRING),
                    Field("host", STRING),
                    Field("operation", INT8),
                    Field("permission_type", INT8),
                )
            ),
        ),
    ),
    flexible=2,
)

CREATE_ACLS_RESPONSE = Message(
    "CreateAclsResponse",
    ApiKey.CREATE_ACLS,
    (0, 3),
    (
        _THROTTLE_TIME,
        Field("results", Array((Field("error_code", INT16), _ERROR_MESSAGE))),
    ),
    flexible=2,
)

DELETE_ACLS_REQUEST = Message(
    "DeleteAclsRequest",
    ApiKey.DELETE_ACLS,
    (0, 3),
    (Field("filters", Array(_FILTER)),),
    flexible=2,
)

DELETE_ACLS_RESPONSE = Message(
    "DeleteAclsResponse",
    ApiKey.DELETE_ACLS,
    (0, 3),
    (
        _THROTTLE_TIME,
        Field(
            "filter_results",
            Array(
                (
                    Field("error_code", INT16),
                    _ERROR_MESSAGE,
                    Field(
                        "matching_acls",
                        Array(
                            (
                                Field("error_code", INT16),
                                _ERROR_MESSAGE,
                                Field("resource_type", INT8),
                                Field("resource_name", STRING),
                                Field("pattern_type", INT8, versions=(1, None), default=_LITERAL),
                                Field("principal", STRING),
                                Field("host", STRING),
                                Field("operation", INT8),
                                Field("permission_type", INT8),
                            )
                        ),
                    ),
                )
            ),
        ),
    ),
    flexible=2,
)

ACL_PAIRS = (
    (DESCRIBE_ACLS_REQUEST, DESCRIBE_ACLS_RESPONSE),
    (CREATE_ACLS_REQUEST, CREATE_ACLS_RESPONSE),
    (DELETE_ACLS_REQUEST, DELETE_ACLS_RESPONSE),
)
