"""``sluice top``: a live terminal view of a worker's connectors and tasks.

Each frame is one ``GET /connectors?expand=status&expand=info`` (states,
types, traces) and one ``GET /metrics`` (rates, lag, errors; prometheus_client's
own parser), drawn with ``rich``. One row per task:

=========  ===================================================================
IN/s       source: ``source-record-poll-rate``; sink: ``sink-record-read-rate``
OUT/s      source: ``source-record-write-rate``; sink: ``sink-record-send-rate``
LAG        sink: ``sink-record-lag-max`` (records behind the log end);
           PostgreSQL CDC: Debezium's ``MilliSecondsBehindSource``
ERRORS     ``total-record-errors`` (records given up on)
=========  ===================================================================

The rates are the worker's own windowed rates (Kafka's: the last 30-60 s by
default), so they match a dashboard. Under the table, each failed task or
connector with the line of its trace that names the error (a Python
traceback's last). A connector with no task (failed before starting
any) has one row with task ``-``. Without ``/metrics`` (``metrics.enabled=false``)
the numbers are ``-``; so are those of tasks a distributed cluster runs on
other workers (each worker serves its own tasks' metrics).

``--once`` prints a single frame to standard output (no colours when it is
not a terminal) and exits, for scripts and tests (``--json``: the rows as
JSON, one frame); otherwise the view is redrawn every ``--interval`` seconds until
Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

from prometheus_client.parser import text_string_to_metric_families
from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from connect_worker.cli.rest_client_commands import CommandError

Fetch = Callable[[str], Any]  # GET a path of the worker: JSON decoded, or the text

SOURCE = "kafka_connect_source_task_metrics_"
SINK = "kafka_connect_sink_task_metrics_"
ERRORS = "kafka_connect_task_error_metrics_total_record_errors"
CDC_BEHIND_MS = "debezium_metrics_millisecondsbehindsource"
#: A frame printed to something that is not a terminal is this wide (rich's default is 80).
PLAIN_WIDTH = 160
TRACE_LINE_MAX = 120


@dataclass
class TaskRow:
    """One line of the view."""

    connector: str
    task: str
    type: str
    state: str
    worker: str
    in_rate: float | None = None
    out_rate: float | None = None
    lag: str = "-"
    errors: float | None = None
    trace: str = ""


@dataclass
class Frame:
    """What one refresh shows."""

    url: str
    rows: list[TaskRow] = field(default_factory=list)
    metrics_served: bool = True

    def state_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for row in self.rows:
            if row.task != "-":
                counts[row.state] = counts.get(row.state, 0) + 1
        return counts


def add_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    common: argparse.ArgumentParser,
    wrap: Callable[[Callable[[Any, argparse.Namespace], int | None]], Callable[..., int]],
) -> None:
    """Register ``sluice top`` (``common``: the REST commands' shared options)."""
    top = commands.add_parser(
        "top", parents=[common], help="a live view of connectors and tasks: states, rates, lag"
    )
    top.add_argument(
        "--interval", type=float, default=2.0, help="seconds between refreshes (default 2)"
    )
    top.add_argument("--once", action="store_true", help="print one frame to stdout and exit")
    top.set_defaults(run=wrap(run_top))


def run_top(client: Any, args: argparse.Namespace, out: TextIO | None = None) -> int:
    """The command: ``client.call`` is :class:`~.rest_client_commands.RestClient`'s."""
    if args.interval <= 0:
        raise SystemExit("sluice: --interval must be more than 0 seconds")

    def fetch(path: str) -> Any:
        return client.call("GET", path)[1]

    if args.json:  # a JSON document per frame would not be a view: one frame, as --once
        frame = read_frame(fetch, client.url)
        print(json.dumps([asdict(row) for row in frame.rows], indent=2), file=out)
        return 0
    if args.once:
        console = Console(file=out) if out is not None else Console()
        if not console.is_terminal:
            console.width = PLAIN_WIDTH
        console.print(render(read_frame(fetch, client.url)))
        return 0
    console = Console()
    try:
        with Live(render(read_frame(fetch, client.url)), console=console,
                  auto_refresh=False, screen=False) as live:
            while True:
                time.sleep(args.interval)
                live.update(render(read_frame(fetch, client.url)), refresh=True)
    except KeyboardInterrupt:
        return 0


# -- reading ------------------------------------------------------------------------------


def read_frame(fetch: Fetch, url: str) -> Frame:
    """One frame from the worker: statuses, then metrics (``-`` if not served)."""
    connectors = fetch("/connectors?expand=status&expand=info") or {}
    frame = Frame(url)
    try:
        metrics = parse_metrics(fetch("/metrics"))
    except CommandError as exc:
        if not str(exc).startswith("404"):
            raise
        metrics, frame.metrics_served = {}, False  # metrics.enabled=false: states only
    for name in sorted(connectors):
        status = connectors[name].get("status") or {}
        kind = status.get("type") or (connectors[name].get("info") or {}).get("type", "?")
        tasks = status.get("tasks") or []
        if not tasks:
            connector = status.get("connector") or {}
            frame.rows.append(TaskRow(
                name, "-", kind, connector.get("state", "?"), connector.get("worker_id", ""),
                trace=_error_line(connector.get("trace")),
            ))
        for task in sorted(tasks, key=lambda t: t.get("id", 0)):
            frame.rows.append(_task_row(name, kind, task, metrics))
    return frame


def _task_row(name: str, kind: str, task: dict[str, Any], metrics: Metrics) -> TaskRow:
    task_id = str(task.get("id", "?"))
    row = TaskRow(name, task_id, kind, task.get("state", "?"), task.get("worker_id", ""),
                  trace=_error_line(task.get("trace")))
    labels = (("connector", name), ("task", task_id))

    def value(metric: str) -> float | None:
        return metrics.get((metric, labels))

    if kind == "sink":
        row.in_rate = value(SINK + "sink_record_read_rate")
        row.out_rate = value(SINK + "sink_record_send_rate")
        lag = value(SINK + "sink_record_lag_max")
        row.lag = "-" if lag is None else f"{lag:.0f} rec"
    else:
        row.in_rate = value(SOURCE + "source_record_poll_rate")
        row.out_rate = value(SOURCE + "source_record_write_rate")
        behind = value(CDC_BEHIND_MS)
        row.lag = "-" if behind is None else f"{behind:.0f} ms"
    row.errors = value(ERRORS)
    return row


Metrics = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse_metrics(text: Any) -> Metrics:
    """Samples keyed by name and (connector, task) labels; other labels are dropped, and
    series that differ only in them keep the first value."""
    if not isinstance(text, str):
        raise CommandError("GET /metrics did not answer the Prometheus text format")
    samples: Metrics = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if "connector" not in sample.labels or "task" not in sample.labels:
                continue
            key = (sample.name, (("connector", sample.labels["connector"]),
                                 ("task", sample.labels["task"])))
            samples.setdefault(key, sample.value)
    return samples


def _error_line(trace: str | None) -> str:
    """The line of a trace that says what went wrong: a Python traceback's last line."""
    lines = [line.strip() for line in (trace or "").splitlines() if line.strip()]
    text = lines[-1] if lines else ""
    return text if len(text) <= TRACE_LINE_MAX else text[: TRACE_LINE_MAX - 1] + "…"


# -- drawing ------------------------------------------------------------------------------

STATE_STYLES = {"RUNNING": "green", "FAILED": "bold red", "PAUSED": "yellow",
                "STOPPED": "dim", "UNASSIGNED": "yellow", "RESTARTING": "cyan"}


def render(frame: Frame) -> Group:
    """The frame as a header line and a table (rich renderables)."""
    counts = frame.state_counts()
    summary = ", ".join(f"{n} {state.lower()}" for state, n in sorted(counts.items()))
    connectors = len({row.connector for row in frame.rows})
    head = Text(
        f"sluice top  {frame.url}  {time.strftime('%H:%M:%S')}  "
        f"{connectors} connectors, {sum(counts.values())} tasks"
        + (f" ({summary})" if summary else "")
        + ("" if frame.metrics_served else "  [no /metrics: metrics.enabled=false?]")
    )
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column, justify in (("CONNECTOR", "left"), ("TASK", "right"), ("TYPE", "left"),
                            ("STATE", "left"), ("IN/s", "right"), ("OUT/s", "right"),
                            ("LAG", "right"), ("ERRORS", "right"), ("WORKER", "left")):
        table.add_column(column, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for row in frame.rows:
        table.add_row(
            row.connector, row.task, row.type,
            Text(row.state, style=STATE_STYLES.get(row.state, "")),
            _number(row.in_rate), _number(row.out_rate), row.lag, _number(row.errors, 0),
            row.worker,
        )
    if not frame.rows:
        table.add_row("(no connectors)")
    failures = [
        Text(f"  {row.connector}/{row.task}: {row.trace}", style="red")
        for row in frame.rows if row.trace and row.state == "FAILED"
    ]
    if failures:
        return Group(head, table, Text("failed:"), *failures)
    return Group(head, table)


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"

