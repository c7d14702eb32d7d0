"""``sluice connectors|plugins ...`` (clients of a worker's REST API) and ``sluice validate``.

- ``sluice connectors list | status NAME | create FILE.properties | delete NAME |
  pause NAME | resume NAME | stop NAME | restart NAME [--include-tasks] [--only-failed]``
- ``sluice plugins list [--all]``
- ``sluice top [--interval S] [--once]`` (:mod:`connect_worker.cli.top`)

each with ``--url`` (default ``http://127.0.0.1:8083``, or ``$SLUICE_URL``);
``--user``/``--password`` (or ``$SLUICE_USER``/``$SLUICE_PASSWORD``; asked on the
terminal when only the user is given) for a worker behind basic authentication;
``--cacert`` (or ``$SLUICE_CACERT``) names the CA file to trust for ``https://``; and

- ``sluice validate connector.properties``: offline, no worker needed. Parses
  the file, validates it against the connector's config model, then runs the
  connector's ``check()`` against the real system; prints every problem and
  exits 1 if there is any (a dry run Kafka Connect lacks).
"""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import os
import ssl
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from connect_worker.cli.snapshot_progress import snapshot_lines
from connect_worker.connector_config import connector_name_problem
from connect_worker.properties import load_properties

DEFAULT_URL = "http://127.0.0.1:8083"
_TIMEOUT_S = 30.0


class CommandError(Exception):
    """A command that could not do its job; printed as ``sluice: <message>``, exit 1."""


class RestClient:
    """A few lines over httpx that turn Kafka Connect's error body into CommandError.

    ``auth``: (user, password) for basic authentication; ``cacert``: a PEM file of
    the CAs to trust for ``https://`` (default: the system's).
    """

    def __init__(
        self, url: str, *, auth: tuple[str, str] | None = None, cacert: Path | None = None
    ) -> None:
        self.url = url.rstrip("/")
        try:
            verify: Any = ssl.create_default_context(cafile=str(cacert)) if cacert else True
        except (OSError, ssl.SSLError) as exc:
            raise CommandError(f"--cacert {cacert}: {exc}") from None
        self._http = httpx.Client(base_url=self.url, timeout=_TIMEOUT_S, auth=auth, verify=verify)

    def call(
        self, method: str, path: str, *, params: Any = None, body: Any = None
    ) -> tuple[int, Any]:
        """Send a request; returns (status, decoded JSON body or None)."""
        try:
            response = self._http.request(method, path, params=params, json=body)
        except httpx.TransportError as exc:
            raise CommandError(f"cannot reach the worker at {self.url}: {exc}") from None
        try:
            decoded = response.json() if response.content else None
        except ValueError:
            decoded = response.text
        if response.status_code >= 400:
            message = decoded.get("message") if isinstance(decoded, dict) else decoded
            if response.status_code == 401:
                message = f"{message or 'Unauthorized'} (give --user/--password or "
                message += "$SLUICE_USER/$SLUICE_PASSWORD)"
            raise CommandError(f"{response.status_code}: {message or response.reason_phrase}")
        return response.status_code, decoded

    def close(self) -> None:
        self._http.close()


def connector_path(name: str, *rest: str) -> str:
    return "/".join(["/connectors", quote(name, safe=""), *rest])


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``connectors``, ``plugins`` and ``validate`` on the ``sluice`` parser."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url",
        default=os.environ.get("SLUICE_URL", DEFAULT_URL),
        help=f"the worker's REST URL (default {DEFAULT_URL}, or $SLUICE_URL)",
    )
    common.add_argument("--json", action="store_true", help="print the API's JSON as is")
    add_rest_access_options(common)
    _add_connectors(commands, common)
    from connect_worker.cli import top  # it imports this module (CommandError)

    top.add_command(commands, common, _client)
    plugins = commands.add_parser("plugins", help="list a worker's plugins")
    plugin_actions = plugins.add_subparsers(required=True, metavar="ACTION")
    listing = plugin_actions.add_parser("list", parents=[common], help="installed plugins")
    listing.add_argument(
        "--all", action="store_true", help="converters, transforms and predicates too"
    )
    listing.set_defaults(run=_client(_plugins_list))
    validate = commands.add_parser(
        "validate", help="check a pipeline file offline and test its connectivity"
    )
    validate.add_argument("file", type=Path, help="connector .properties")
    validate.add_argument("--worker-config", type=Path, help="worker.properties (for plugin.path)")
    validate.set_defaults(run=_validate)


def _add_connectors(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
) -> None:
    connectors = commands.add_parser("connectors", help="manage connectors through the REST API")
    actions = connectors.add_subparsers(required=True, metavar="ACTION")
    actions.add_parser("list", parents=[common], help="connectors and their states").set_defaults(
        run=_client(_list)
    )
    for action, help_text, run in (
        ("status", "a connector's and its tasks' states", _status),
        ("delete", "delete a connector", _delete),
        ("pause", "pause a connector", _pause),
        ("resume", "resume a paused or stopped connector", _resume),
        ("stop", "stop a connector (frees its tasks)", _stop),
    ):
        parser = actions.add_parser(action, parents=[common], help=help_text)
        parser.add_argument("name", help="the connector's name")
        parser.set_defaults(run=_client(run))
    create = actions.add_parser("create", parents=[common], help="create from a .properties file")
    create.add_argument(
        "file", type=Path, help="connector .properties (name: its 'name' key, else the file's)"
    )
    create.set_defaults(run=_client(_create))
    restart = actions.add_parser("restart", parents=[common], help="restart a connector")
    restart.add_argument("name", help="the connector's name")
    restart.add_argument("--include-tasks", action="store_true", help="restart its tasks too")
    restart.add_argument("--only-failed", action="store_true", help="only what has FAILED")
    restart.set_defaults(run=_client(_restart))


def add_rest_access_options(parser: argparse.ArgumentParser) -> None:
    """``--user``, ``--password``, ``--cacert``: how to reach a secured worker."""
    parser.add_argument(
        "--user",
        default=os.environ.get("SLUICE_USER"),
        help="user for the worker's basic authentication (or $SLUICE_USER)",
    )
    parser.add_argument(
        "--password",
        default=os.environ.get("SLUICE_PASSWORD"),
        help="its password (or $SLUICE_PASSWORD, which other users cannot see in ps; "
        "asked on the terminal when neither is given)",
    )
    parser.add_argument(
        "--cacert",
        type=Path,
        default=os.environ.get("SLUICE_CACERT") or None,
        help="PEM file of the CAs to trust for an https:// worker (or $SLUICE_CACERT)",
    )


def rest_client(args: argparse.Namespace) -> RestClient:
    """The client for ``--url`` with the access options of :func:`add_rest_access_options`."""
    auth = None
    if args.user:
        password = args.password
        if password is None:
            if not sys.stdin.isatty():
                raise CommandError("--user needs --password or $SLUICE_PASSWORD")
            password = getpass.getpass(f"password for {args.user}: ")
        auth = (args.user, password)
    return RestClient(args.url, auth=auth, cacert=args.cacert)


Action = Callable[[RestClient, argparse.Namespace], int | None]


def _client(action: Action) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
            logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request
        try:
            client = rest_client(args)
        except CommandError as exc:
            print(f"sluice: {exc}", file=sys.stderr)
            return 1
        try:
            return int(action(client, args) or 0)
        except CommandError as exc:
            print(f"sluice: {exc}", file=sys.stderr)
            return 1
        finally:
            client.close()

    return run


def _print_json(body: Any) -> None:
    print(json.dumps(body, indent=2))


def _table(rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )


def _list(client: RestClient, args: argparse.Namespace) -> None:
    _, body = client.call("GET", "/connectors", params={"expand": "status"})
    if args.json:
        _print_json(body)
        return
    rows = [["NAME", "TYPE", "STATE", "TASKS"]]
    for name in sorted(body):
        status = body[name].get("status", {})
        tasks = ",".join(f"{t['id']}:{t['state']}" for t in status.get("tasks", []))
        state = status.get("connector", {}).get("state", "?")
        rows.append([name, status.get("type", "?"), state, tasks or "-"])
    if len(rows) == 1:
        print("no connectors")
        return
    _table(rows)


def _status(client: RestClient, args: argparse.Namespace) -> None:
    _, body = client.call("GET", connector_path(args.name, "status"))
    if args.json:
        _print_json(body)
        return
    _print_status(body)


def _print_status(body: dict[str, Any]) -> None:
    connector = body.get("connector", {})
    print(
        f"connector {body.get('name')} ({body.get('type')}): {connector.get('state')}"
        f" on {connector.get('worker_id')}"
    )
    _print_details(body.get("details"))
    _print_trace(connector.get("trace"))
    for task in body.get("tasks", []):
        print(f"  task {task.get('id')}: {task.get('state')} on {task.get('worker_id')}")
        _print_details(task.get("details"))
        _print_trace(task.get("trace"))


def _print_details(details: dict[str, Any] | None) -> None:
    """The progress a connector or task reports, as ``key=value`` pairs on one line;
    a CDC snapshot's as a table of its own (:mod:`.snapshot_progress`)."""
    snapshot = snapshot_lines(details)
    if details and snapshot:
        details = {k: v for k, v in details.items() if k != "snapshot"}
    if details:
        pairs = (
            f"{key}={value if isinstance(value, str) else json.dumps(value)}"
            for key, value in details.items()
        )
        print(f"      {' '.join(pairs)}")
    for line in snapshot:
        print(f"      {line}")


def _print_trace(trace: str | None) -> None:
    for line in (trace or "").splitlines():
        print(f"      {line}")


def _create(client: RestClient, args: argparse.Namespace) -> None:
    config = load_properties(args.file)
    name = config.get("name", "").strip() or args.file.name.removesuffix(".properties")
    config["name"] = name
    problem = connector_name_problem(name)
    if problem is not None:
        raise SystemExit(f"{args.file}: {problem}")
    _, body = client.call("POST", "/connectors", body={"name": name, "config": config})
    if args.json:
        _print_json(body)
    else:
        print(f"created connector {name}")


def _delete(client: RestClient, args: argparse.Namespace) -> None:
    client.call("DELETE", connector_path(args.name))
    print(f"deleted connector {args.name}")


def _pause(client: RestClient, args: argparse.Namespace) -> None:
    client.call("PUT", connector_path(args.name, "pause"))
    print(f"pausing connector {args.name}")


def _resume(client: RestClient, args: argparse.Namespace) -> None:
    client.call("PUT", connector_path(args.name, "resume"))
    print(f"resuming connector {args.name}")


def _stop(client: RestClient, args: argparse.Namespace) -> None:
    client.call("PUT", connector_path(args.name, "stop"))
    print(f"stopped connector {args.name}")


def _restart(client: RestClient, args: argparse.Namespace) -> None:
    params = {
        "includeTasks": str(args.include_tasks).lower(),
        "onlyFailed": str(args.only_failed).lower(),
    }
    status, body = client.call("POST", connector_path(args.name, "restart"), params=params)
    if args.json and body is not None:
        _print_json(body)
    elif status == 202 and body:
        _print_status(body)
    else:
        print(f"restarted connector {args.name}")


def _plugins_list(client: RestClient, args: argparse.Namespace) -> None:
    params = {"connectorsOnly": "false" if args.all else "true"}
    _, body = client.call("GET", "/connector-plugins", params=params)
    if args.json:
        _print_json(body)
        return
    rows = [["CLASS", "TYPE", "VERSION"]]
    rows += [[p["class"], p["type"], p.get("version") or ""] for p in body]
    _table(rows)


def _validate(args: argparse.Namespace) -> int:
    path: Path = args.file
    problems, summary, unused = validate_pipeline(path, args.worker_config)
    note = (
        f"  note: keys nothing reads, ignored (as Kafka Connect ignores unknown keys): "
        f"{', '.join(unused)}"
    )
    if problems:
        print(f"{path}: {len(problems)} problem(s)")
        for problem in problems:
            print(f"  - {problem}")
        if unused:
            print(note)
        return 1
    print(f"{path}: OK: {summary}")
    if unused:
        print(note)
    return 0


def validate_pipeline(
    path: Path, worker_config: Path | None = None
) -> tuple[list[str], str, list[str]]:
    """Every problem of one pipeline file: syntax, config, then the connector's ``check()``;
    the summary when there is none; and the keys nothing reads (not problems, see
    :mod:`connect_worker.unused_keys`), when the connector class is known.

    ``${provider:path:key}`` references are resolved as the worker resolves them
    (``config.providers`` of ``worker_config``; default env, file, directory).
    """
    from connect_worker.config_providers import providers_from_worker_config, resolve_references
    from connect_worker.plugins import PluginRegistry
    from connect_worker.unused_keys import unused_keys
    from connect_worker.validation import validate_connector_config
    from connect_worker.watch import read_pipeline_file
    from connect_worker.worker_config import WorkerConfig

    pipeline = read_pipeline_file(path)
    if pipeline.problems:
        return list(pipeline.problems), "", []
    try:
        worker = WorkerConfig.from_properties(
            load_properties(worker_config) if worker_config else {}
        )
        registry = PluginRegistry.load(plugin_path=worker.plugin_path)
        providers = providers_from_worker_config(worker.props, registry)
    except ValueError as exc:  # ConfigError: the worker config is wrong
        return [f"{worker_config}: {exc}"], "", []
    try:
        result = validate_connector_config(registry, pipeline.config, providers)
        unused = (
            unused_keys(result.connector_class, pipeline.config)
            if result.connector_class is not None else []
        )
        problems = [f"{key}: {text}" for key, texts in result.errors.items() for text in texts]
        if problems:
            return [*problems, "check() was not run: fix the config first"], "", unused
        resolved = resolve_references(pipeline.config, providers)
        problems = _check(registry.connector_class(resolved["connector.class"]), resolved)
    finally:
        for provider in providers.values():
            provider.close()
    summary = (
        f"connector {pipeline.name!r} ({pipeline.config['connector.class']}) is valid "
        "and its check() passed"
    )
    return problems, summary, unused


def _check(connector_class: type[Any], config: dict[str, str]) -> list[str]:
    """The connector's own connectivity test against the real system."""
    from connect_worker.validation import connectivity_problems

    return [
        f"check: {problem}" if key == "connector.class" else f"check: {key}: {problem}"
        for key, problem in connectivity_problems(connector_class, config)
    ]
