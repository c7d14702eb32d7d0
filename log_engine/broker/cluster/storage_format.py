"""``sluice storage format``: a cluster node's data dir, formatted before its first start.

Kafka's ``kafka-storage format -c server.properties --add-scram ...``: writes
``meta.properties`` (the cluster id, from ``cluster.id`` or derived from
``controller.quorum.voters``, and the node id; what ``sluice broker`` also writes
on a first start without a format) and, for each ``--add-scram`` credential, a
salted UserScramCredentialRecord into ``bootstrap.checkpoint``
(``metadata/bootstrap.py``). The first controller to become active on the new
metadata log appends those records, so the first admin can log in with SCRAM
on every broker before anyone has called AlterUserScramCredentials.
"""

from __future__ import annotations

from collections.abc import Sequence

from log_engine.broker.config import BrokerConfig, BrokerConfigError
from log_engine.broker.security.listener_security import SecurityConfigError, parse_scram_entries
from log_engine.broker.security.scram_admin import MECHANISM_CODES
from log_engine.broker.security.scram_store import ScramCredential
from log_engine.metadata.bootstrap import BOOTSTRAP_FILE, write_bootstrap
from log_engine.metadata.records import UserScramCredentialRecord
from log_engine.replication.quorum.meta_properties import ensure_formatted, read_meta_properties


def scram_bootstrap_records(add_scram: Sequence[str]) -> list[UserScramCredentialRecord]:
    """The salted records of ``--add-scram`` arguments (Kafka's syntax)."""
    records = []
    for text in add_scram:
        try:
            entries = parse_scram_entries(text, "--add-scram")
        except SecurityConfigError as exc:
            raise BrokerConfigError(str(exc)) from None
        if not entries:
            raise BrokerConfigError("--add-scram needs MECHANISM=[name=...,password=...]")
        for entry in entries:
            credential = ScramCredential.from_password(
                entry.mechanism, entry.password, entry.iterations
            )
            records.append(
                UserScramCredentialRecord(
                    entry.name, MECHANISM_CODES[entry.mechanism], credential.salt,
                    credential.stored_key, credential.server_key, credential.iterations,
                )
            )  # fmt: skip
    return records


def format_storage(
    config: BrokerConfig, add_scram: Sequence[str] = (), ignore_formatted: bool = False
) -> str:
    """Format the node's data dir; the line to print. :class:`BrokerConfigError` when it
    cannot (not a cluster node, already formatted without ``ignore_formatted``, bad
    ``--add-scram``, a metadata log without ``meta.properties``)."""
    cluster = config.cluster
    if cluster is None:
        raise BrokerConfigError(
            "storage format is for cluster nodes (controller.quorum.voters); "
            "a single broker needs no format"
        )
    log_dir = config.log_dir
    if read_meta_properties(log_dir) is not None:
        if ignore_formatted:
            return f"{log_dir} is already formatted; left as it is"
        raise BrokerConfigError(
            f"{log_dir} is already formatted (it has meta.properties); "
            "--ignore-formatted skips such a node"
        )
    records = scram_bootstrap_records(add_scram)
    if records:
        write_bootstrap(log_dir, records)
    else:
        (log_dir / BOOTSTRAP_FILE).unlink(missing_ok=True)  # a stale one of a failed format
    ensure_formatted(log_dir, cluster.cluster_id, config.node_id)
    done = f"Formatted {log_dir}: cluster.id={cluster.cluster_id}, node.id={config.node_id}"
    if records:
        users = ", ".join(sorted({r.name for r in records}))
        done += f", {len(records)} bootstrap SCRAM credential(s) (users {users})"
    return done
