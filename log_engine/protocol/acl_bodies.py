"""ACL bindings and filters to and from CreateAcls / DescribeAcls / DeleteAcls bodies.

One place for the field names, used by the admin client, the broker's ACL
handlers and the broker-to-controller forwarding. ``from_*`` raise
:class:`~log_engine.acls.AclError` for unknown or unusable codes.
"""

from __future__ import annotations

from typing import Any

from log_engine.acls import AclBinding, AclFilter

Body = dict[str, Any]


def creation_body(b: AclBinding) -> Body:
    """One ``creations`` entry of CreateAcls."""
    return {
        "resource_type": int(b.resource_type),
        "resource_name": b.resource_name,
        "resource_pattern_type": int(b.pattern_type),
        "principal": b.principal,
        "host": b.host,
        "operation": int(b.operation),
        "permission_type": int(b.permission),
    }


def binding_from_creation(item: Body) -> AclBinding:
    return AclBinding.build(
        item["resource_type"],
        item["resource_name"],
        item["resource_pattern_type"],
        item["principal"],
        item["host"],
        item["operation"],
        item["permission_type"],
    )


def filter_body(f: AclFilter) -> Body:
    """A DescribeAcls body, or one ``filters`` entry of DeleteAcls."""
    return {
        "resource_type_filter": int(f.resource_type),
        "resource_name_filter": f.resource_name,
        "pattern_type_filter": int(f.pattern_type),
        "principal_filter": f.principal,
        "host_filter": f.host,
        "operation": int(f.operation),
        "permission_type": int(f.permission),
    }


def filter_from_body(item: Body) -> AclFilter:
    return AclFilter.build(
        item["resource_type_filter"],
        item["resource_name_filter"],
        item["pattern_type_filter"],
        item["principal_filter"],
        item["host_filter"],
        item["operation"],
        item["permission_type"],
    )


def matching_body(b: AclBinding) -> Body:
    """One ``matching_acls`` entry of DeleteAcls (deleted: no error)."""
    return {
        "error_code": 0,
        "error_message": None,
        "resource_type": int(b.resource_type),
        "resource_name": b.resource_name,
        "pattern_type": int(b.pattern_type),
        "principal": b.principal,
        "host": b.host,
        "operation": int(b.operation),
        "permission_type": int(b.permission),
    }


def binding_from_matching(m: Body) -> AclBinding:
    return AclBinding.build(
        m["resource_type"],
        m["resource_name"],
        m["pattern_type"],
        m["principal"],
        m["host"],
        m["operation"],
        m["permission_type"],
    )
