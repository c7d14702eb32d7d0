"""``sluice cluster status``: the controller quorum as the leader sees it.

Like ``kafka-metadata-quorum --bootstrap-controller HOST:PORT describe --status
--replication``: DescribeQuorum to a controller listener (a follower's answer names
the leader, which is asked next), then the leader, its epoch, the high watermark
and each voter's and observer's log end offset and lag, as a table or ``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, TextIO

from log_engine.client.quorum import QuorumDescription, ReplicaLag, describe_quorum_sync

DEFAULT_CONTROLLER = "localhost:9093"


def add_commands(commands: Any) -> None:
    """Register ``sluice cluster ...`` on the top-level sub-command parser."""
    cluster = commands.add_parser("cluster", help="the controller quorum of a Sluice cluster")
    actions = cluster.add_subparsers(required=True, metavar="ACTION")
    status = actions.add_parser(
        "status", help="leader, epoch, high watermark and each voter's lag (DescribeQuorum)"
    )
    status.add_argument(
        "--bootstrap-controller",
        default=DEFAULT_CONTROLLER,
        metavar="HOST:PORT",
        help="a controller listener (controller.quorum.voters has them)",
    )
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(run=run_cluster_status)


def run_cluster_status(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    host, _, port = args.bootstrap_controller.rpartition(":")
    if not host or not port.isdigit():
        print(
            f"sluice: --bootstrap-controller {args.bootstrap_controller!r} is not HOST:PORT",
            file=sys.stderr,
        )
        return 2
    quorum = describe_quorum_sync(host.strip("[]"), int(port))
    if args.json:
        print(json.dumps(quorum.as_dict()), file=out)
    else:
        print(render(quorum), file=out, end="")
    return 0


def render(quorum: QuorumDescription, now_ms: int | None = None) -> str:
    """The table ``sluice cluster status`` prints."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    lines = [
        f"LeaderId:      {quorum.leader_id}",
        f"LeaderEpoch:   {quorum.leader_epoch}",
        f"HighWatermark: {quorum.high_watermark}",
        f"{'NodeId':<8}{'LogEndOffset':<14}{'Lag':<8}{'LastFetch':<12}Status",
    ]

    def row(replica: ReplicaLag, status: str) -> str:
        ago = "-"
        if replica.last_fetch_timestamp >= 0:
            ago = f"{max(0, now - replica.last_fetch_timestamp)} ms ago"
        return f"{replica.node_id:<8}{replica.log_end_offset:<14}{replica.lag:<8}{ago:<12}{status}"

    for voter in quorum.voters:
        lines.append(row(voter, "Leader" if voter.node_id == quorum.leader_id else "Follower"))
    for observer in quorum.observers:
        lines.append(row(observer, "Observer"))
    return "\n".join(lines) + "\n"
