"""``sluice storage format``: Kafka's ``kafka-storage format`` for a cluster node.

``sluice storage format -c node1.properties --add-scram
'SCRAM-SHA-512=[name=admin,password=admin-secret]'`` writes the node's
``meta.properties`` and the SCRAM credentials the first active controller puts
into the new metadata log (``log_engine/broker/cluster/storage_format.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO


def add_commands(commands: Any) -> None:
    """Register ``sluice storage ...`` on the top-level sub-command parser."""
    storage = commands.add_parser("storage", help="format a cluster node's data dir")
    actions = storage.add_subparsers(required=True, metavar="ACTION")
    fmt = actions.add_parser(
        "format", help="write meta.properties and the metadata log's bootstrap credentials"
    )
    fmt.add_argument(
        "-c", "--config", type=Path, required=True, help="the node's broker .properties"
    )
    fmt.add_argument(
        "-S",
        "--add-scram",
        action="append",
        default=[],
        metavar="CREDENTIAL",
        help="a SCRAM credential for the new metadata log, as Kafka writes it: "
        "'SCRAM-SHA-512=[name=admin,password=admin-secret]' (repeatable; iterations= optional)",
    )
    fmt.add_argument(
        "-g",
        "--ignore-formatted",
        action="store_true",
        help="leave an already formatted data dir as it is (exit 0) instead of failing",
    )
    fmt.set_defaults(run=run_storage_format)


def run_storage_format(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from connect_worker.properties import load_properties
    from log_engine.broker.cluster.storage_format import format_storage
    from log_engine.broker.config import BrokerConfig

    config = BrokerConfig.from_properties(load_properties(args.config))
    print(format_storage(config, args.add_scram, args.ignore_formatted), file=out)
    return 0
