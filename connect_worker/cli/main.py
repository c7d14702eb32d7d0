"""The ``sluice`` command line: one sub-command per job.

- ``sluice broker [broker.properties] [--override key=value ...]`` runs a broker
  (:mod:`connect_worker.cli.broker`).
- ``sluice standalone [worker.properties] [connector.properties ...]`` runs the
  embedded default in one process: a single-node broker (unless
  ``bootstrap.servers`` is set), the worker, the REST API and the pipelines
  folder watcher (:mod:`connect_worker.cli.standalone`).
- ``sluice distributed worker.properties`` runs one worker of a distributed
  Connect cluster (``group.id``; :mod:`connect_worker.cli.distributed`).
- ``sluice topics|produce|consume|groups ...``: kafka-*.sh-like tools
  (:mod:`connect_worker.cli.log_commands`).
- ``sluice acls add|list|remove`` and ``sluice users scram set|list|delete``:
  kafka-acls.sh / kafka-configs.sh-like tools
  (:mod:`connect_worker.cli.security_commands`).
- ``sluice cluster status --bootstrap-controller HOST:PORT [--json]``: the
  controller quorum (:mod:`connect_worker.cli.cluster_commands`).
- ``sluice storage format -c node.properties [--add-scram CREDENTIAL ...]``:
  kafka-storage format for a cluster node (:mod:`connect_worker.cli.storage_commands`).
- ``sluice test PIPELINE.properties --input RECORDS.jsonl``: the pipeline's
  converters and transforms on sample records, offline
  (:mod:`connect_worker.cli.dry_run`).
- ``sluice connectors|plugins|top ...``: clients of a worker's REST API
  (``top``: :mod:`connect_worker.cli.top`), and
  ``sluice validate FILE``: an offline dry run of a pipeline file
  (:mod:`connect_worker.cli.rest_client_commands`).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from connect_worker.cli import (
    cluster_commands,
    log_commands,
    rest_client_commands,
    security_commands,
    storage_commands,
)
from connect_worker.cli.broker import BrokerConfigError, run_broker_command
from connect_worker.log_context import TEXT_FORMAT, install_filter
from connect_worker.properties import PropertiesError
from connect_worker.security.redaction import install_redaction
from log_engine.client.errors import KafkaError
from log_engine.errors import LogDirLockedError

log = logging.getLogger("sluice")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()), format=TEXT_FORMAT, stream=sys.stderr
    )
    install_filter()
    install_redaction()  # no secret of a config in any log line
    try:
        return int(args.run(args) or 0)
    except (PropertiesError, BrokerConfigError, LogDirLockedError) as exc:
        print(f"sluice: {exc}", file=sys.stderr)
        return 2
    except KafkaError as exc:
        print(f"sluice: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


def package_version() -> str:
    """The installed ``sluice`` package's version (``unknown`` when run from a bare tree)."""
    try:
        return importlib.metadata.version("sluice")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


DESCRIPTION = (
    "Sluice: a Kafka-protocol broker and a Kafka Connect-style worker. "
    "Run 'sluice COMMAND --help' for a command's options."
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sluice", description=DESCRIPTION)
    parser.add_argument(
        "--version",
        action="version",
        version=f"sluice {package_version()}",
        help="print the version of Sluice and exit",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning"],
        help="the lowest level of log message printed on standard error (default: info)",
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    broker = commands.add_parser("broker", help="run a Kafka-protocol broker")
    broker.add_argument("config", nargs="?", type=Path, help="broker.properties")
    broker.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a broker property (repeatable)",
    )
    broker.set_defaults(run=run_broker_command)

    standalone = commands.add_parser(
        "standalone", help="run the worker (and an embedded broker), REST API and watcher"
    )
    standalone.add_argument("config", nargs="?", type=Path, help="worker.properties")
    standalone.add_argument("connectors", nargs="*", type=Path, help="connector .properties")
    standalone.set_defaults(run=_run_standalone)
    distributed = commands.add_parser(
        "distributed", help="run one worker of a distributed Connect cluster (group.id)"
    )
    distributed.add_argument("config", type=Path, help="worker.properties")
    distributed.set_defaults(run=_run_distributed)
    test = commands.add_parser(
        "test",
        help="run a pipeline's converters and transforms on sample records, offline",
        epilog="exit codes: 0 every record processed or tolerated; 3 a record would fail "
        "the task (errors.tolerance=none, or an error no tolerance covers); 1 the output "
        "differs from --expect; 2 a bad pipeline file or input",
    )
    test.add_argument("pipeline", type=Path, help="connector .properties")
    test.add_argument(
        "--input", type=Path, help="records as JSON lines (default: standard input)"
    )
    test.add_argument(
        "--expect", type=Path, help="expected records as JSON lines (exit 1 on a difference)"
    )
    test.add_argument("--worker-config", type=Path, help="worker.properties (converters, plugins)")
    test.set_defaults(run=_run_test)
    log_commands.add_commands(commands)
    cluster_commands.add_commands(commands)
    security_commands.add_commands(commands)
    storage_commands.add_commands(commands)
    rest_client_commands.add_commands(commands)
    _describe_commands(parser)
    return parser


def _describe_commands(parser: argparse.ArgumentParser) -> None:
    """Give each sub-command's own ``--help`` the line its parent lists it with."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if sub.description is None:
                    sub.description = helps.get(name)
                _describe_commands(sub)


def _run_standalone(args: argparse.Namespace) -> int:
    from connect_worker.cli.standalone import run_standalone  # FastAPI and friends: only here

    return run_standalone(args.config, args.connectors)


def _run_distributed(args: argparse.Namespace) -> int:
    from connect_worker.cli.distributed import run_distributed  # FastAPI and friends: only here

    return run_distributed(args.config)


def _run_test(args: argparse.Namespace) -> int:
    from connect_worker.cli.dry_run import run_dry_run

    return run_dry_run(
        args.pipeline, args.input, sys.stdout, args.worker_config, args.expect
    )

