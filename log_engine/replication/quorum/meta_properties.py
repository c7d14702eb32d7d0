"""``meta.properties``: which cluster and node a data directory belongs to (Kafka's file).

Written on the first start of a clustered node (there is no separate format step)::

    #Written by sluice broker on first start; do not edit
    cluster.id=6DY0t_C14ogAGP-URUSHzA
    node.id=1
    version=1

It is written to a temporary file, fsynced and renamed, so a crash leaves either
no file or a whole one. On every later start the file is read back and compared
with the config: a data dir of another cluster or another node id refuses to
start (:class:`MetaPropertiesError`, a ``BrokerConfigError``: the CLI prints it
and exits with status 2) instead of joining a cluster with someone else's log.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from log_engine.broker.config import BrokerConfigError

META_PROPERTIES = "meta.properties"
VERSION = 1


class MetaPropertiesError(BrokerConfigError):
    """The data dir's meta.properties disagrees with the config, or cannot be read."""


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """The identity a data dir was formatted with."""

    cluster_id: str
    node_id: int

    def render(self) -> str:
        return (
            "#Written by sluice broker on first start; do not edit\n"
            f"cluster.id={self.cluster_id}\nnode.id={self.node_id}\nversion={VERSION}\n"
        )


def read_meta_properties(log_dir: Path) -> MetaProperties | None:
    """The data dir's identity, or None when it was never formatted."""
    path = log_dir / META_PROPERTIES
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MetaPropertiesError(f"{path}: cannot read: {exc}") from None
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    try:
        if int(values.get("version", "-1")) not in (0, VERSION):
            raise MetaPropertiesError(f"{path}: version {values['version']} is not supported")
        return MetaProperties(values["cluster.id"], int(values["node.id"]))
    except (KeyError, ValueError) as exc:
        raise MetaPropertiesError(
            f"{path}: malformed ({exc}); expected cluster.id and node.id"
        ) from None


def ensure_formatted(log_dir: Path, cluster_id: str, node_id: int) -> MetaProperties:
    """Check ``log_dir`` belongs to this cluster and node; format it on the first start."""
    expected = MetaProperties(cluster_id, node_id)
    found = read_meta_properties(log_dir)
    if found is None:
        if any(p.name.endswith("-0") for p in log_dir.glob("__cluster_metadata-*")):
            raise MetaPropertiesError(
                f"{log_dir} holds a metadata log but no {META_PROPERTIES}: "
                "restore the file or start from an empty directory"
            )
        _write(log_dir / META_PROPERTIES, expected.render())
        return expected
    if found.cluster_id != cluster_id:
        raise MetaPropertiesError(
            f"{log_dir / META_PROPERTIES} has cluster.id={found.cluster_id} but this node's "
            f"config gives cluster {cluster_id} (derived from controller.quorum.voters unless "
            "cluster.id is set): this data dir belongs to another cluster"
        )
    if found.node_id != node_id:
        raise MetaPropertiesError(
            f"{log_dir / META_PROPERTIES} has node.id={found.node_id} but the config says "
            f"node.id={node_id}: this data dir belongs to another node"
        )
    return found


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
