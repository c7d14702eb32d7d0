"""``sluice distributed worker.properties``: one worker of a distributed Connect cluster.

Start order (stopped in reverse on SIGINT/SIGTERM): the REST socket (503
until the herder is attached), the plugin registry, the
:class:`~connect_worker.herder.distributed.DistributedHerder` (stores, then
the group), the REST API, the watcher on ``pipelines.dir`` (its changes go to
the config topic through the leader, so the same file on several workers is
one connector). There is no embedded broker: ``bootstrap.servers`` is required.
"""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import signal
import sys
import threading
from pathlib import Path

from connect_worker import console
from connect_worker.cli.rest_server import RestServer, StartupError, rest_urls, start_rest
from connect_worker.cli.standalone import _quietly, freeze_startup_objects, kafka_cluster_id
from connect_worker.herder.distributed import DistributedHerder
from connect_worker.herder.distributed_config import DistributedConfig
from connect_worker.log_context import use_json_lines
from connect_worker.log_probe import LogProbe
from connect_worker.plugins import PluginRegistry
from connect_worker.properties import PropertiesError, load_properties
from connect_worker.rest.app import attach
from connect_worker.watch import PipelineWatcher

log = logging.getLogger(__name__)


def run_distributed(config_path: Path) -> int:
    """The body of ``sluice distributed``; returns the exit code."""
    stop = threading.Event()
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # stacks to stderr on demand
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        props = load_properties(config_path)
        config = DistributedConfig.from_properties(props)
    except (PropertiesError, ValueError) as exc:
        print(f"sluice: worker config: {exc}", file=sys.stderr)
        return 2
    if config.log_format == "json":
        use_json_lines()
    with contextlib.ExitStack() as running:
        try:
            rest = _start_all(running, config)
        except StartupError as exc:
            log.error("%s", exc)
            return 1
        freeze_startup_objects()
        log.info("sluice distributed worker %s is running; Ctrl-C stops it", config.worker_id)
        while not stop.wait(0.5):
            if not rest.alive():
                log.error("the REST server died; shutting down")
                return 1
        log.info("stopping")
    log.info("stopped cleanly")
    return 0


def _start_all(running: contextlib.ExitStack, config: DistributedConfig) -> RestServer:
    app, rest = start_rest(running, config)
    assert config.bootstrap_servers is not None, "checked by DistributedConfig"
    bootstrap = config.bootstrap_servers
    registry = PluginRegistry.load(plugin_path=config.plugin_path)
    herder = DistributedHerder(config, registry, bootstrap=bootstrap)
    running.callback(_quietly, herder.stop, "herder")
    try:
        herder.start()
    except Exception as exc:
        raise StartupError(f"the worker could not start: {exc}") from exc
    watcher = PipelineWatcher(config.pipelines_dir, herder)
    probe = LogProbe(bootstrap, config.admin_client_props())
    running.callback(_quietly, probe.close, "health probe")
    attach(
        app,
        herder,
        registry,
        kafka_cluster_id=kafka_cluster_id(bootstrap, config.admin_client_props()),
        pipeline_files=watcher.pipeline_file,
        log_check=probe.problem,
    )
    sources = console.connect(
        app,
        bootstrap=bootstrap,
        client_props=config.admin_client_props(),
        pipelines_dir=Path(config.pipelines_dir),
        worker_props=config.props,
    )
    running.callback(_quietly, sources.close, "console")
    running.callback(_quietly, rest.stop, "rest")  # stops again before the herder (idempotent)
    log.info("REST API on %s, advertised as %s", rest_urls(config), config.advertised_url)
    watcher.start()
    running.callback(_quietly, watcher.stop, "watcher")
    return rest
