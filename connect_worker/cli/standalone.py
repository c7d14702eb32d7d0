"""``sluice standalone``: the whole single-process default, wired together.

Start order (stopped in reverse on SIGINT/SIGTERM or when a part fails):

1. the REST socket is bound first, so a busy port fails fast, and served at
   once: ``GET /health`` answers 503 ``starting`` (every other endpoint 503)
   until step 5;
2. with no ``bootstrap.servers``, an embedded single-node broker starts on its
   own asyncio loop thread in this process (``embedded.broker.*`` settings;
   the worker still talks to it over loopback with the normal client);
3. the plugin registry and the :class:`StandaloneHerder` (whose stop flushes
   offsets);
4. connector files named on the command line, loaded as pipeline files are;
5. the REST API gets the started herder (``GET /health`` now checks that the
   Kafka cluster answers: :class:`~connect_worker.log_probe.LogProbe`);
6. the watcher on ``pipelines.dir``.

Once everything is up, the objects made so far (modules, the REST app, the
broker, configs: ~90k) are moved out of the garbage collector's reach with
:func:`gc.freeze`. They live as long as the process, and without this every
full collection walks them all again: in the file pipeline benchmark that was
a fifth of the GIL's time (1.1 s of 5.9 s for 200k records; after: 0.2 s).
The youngest generation is also collected less often (every
:data:`GC_GEN0_THRESHOLD` allocations instead of 700): records die young
and in bulk, and the default threshold ran a collection every few batches,
15-20% of the worker's CPU in the same benchmark (6.6-8.1 µs CPU per record
before, 5.8-6.0 after).

So shutdown runs watcher, REST, herder, broker: nothing is left writing to a
broker that is gone.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from connect_worker import console
from connect_worker.cli.broker import EmbeddedBroker
from connect_worker.cli.rest_server import RestServer, StartupError, rest_urls, start_rest
from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.log_context import use_json_lines
from connect_worker.log_probe import LogProbe
from connect_worker.plugins import PluginRegistry
from connect_worker.properties import PropertiesError, load_properties
from connect_worker.rest.app import attach
from connect_worker.watch import (
    PipelineFile,
    PipelineWatcher,
    apply_pipeline_file,
    read_pipeline_file,
)
from connect_worker.worker_config import WorkerConfig
from log_engine.client import SyncAdmin

log = logging.getLogger(__name__)

def _quietly(stop: Callable[[], None], what: str) -> None:
    """Run one shutdown step; a failure is logged and the next steps still run."""
    try:
        stop()
    except Exception:
        log.exception("stopping the %s failed", what)


def kafka_cluster_id(bootstrap: str, client_props: Mapping[str, str] | None = None) -> str | None:
    """The cluster id of an external cluster, if it answers quickly (``client_props``:
    the admin client's security keys)."""
    props = {**(client_props or {}), "bootstrap.servers": bootstrap}
    props.setdefault("default.api.timeout.ms", "5000")
    try:
        with SyncAdmin(props) as admin:
            return admin.describe_cluster().cluster_id
    except Exception as exc:
        log.warning("could not read the Kafka cluster id from %s: %s", bootstrap, exc)
        return None


def run_standalone(config_path: Path | None, connector_files: Sequence[Path]) -> int:
    """The body of ``sluice standalone``; returns the exit code."""
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        worker_props = load_properties(config_path) if config_path else {}
        config = WorkerConfig.from_properties(worker_props)
    except (PropertiesError, ValueError) as exc:
        print(f"sluice: worker config: {exc}", file=sys.stderr)
        return 2
    if config.log_format == "json":
        use_json_lines()
    with contextlib.ExitStack() as running:
        try:
            rest = _start_all(running, worker_props, config, connector_files)
        except StartupError as exc:
            log.error("%s", exc)
            return 1
        freeze_startup_objects()
        log.info("sluice standalone is running; Ctrl-C stops it")
        while not stop.wait(0.5):
            if not rest.alive():
                log.error("the REST server died; shutting down")
                return 1
        log.info("stopping")
    log.info("stopped cleanly")
    return 0


#: Allocations between young-generation collections (CPython's default: 700).
GC_GEN0_THRESHOLD = 20_000


def freeze_startup_objects() -> None:
    """Keep full collections from walking the long-lived startup objects (module doc)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_GEN0_THRESHOLD, 20, 20)
    log.debug("%d startup objects excluded from garbage collection", gc.get_freeze_count())


def _start_all(
    running: contextlib.ExitStack,
    worker_props: dict[str, str],
    config: WorkerConfig,
    connector_files: Sequence[Path],
) -> RestServer:
    """Start every part in order; ``running`` stops them in reverse."""
    app, rest = start_rest(running, config)
    bootstrap, cluster_id = _start_broker(running, worker_props, config)
    registry = PluginRegistry.load(plugin_path=config.plugin_path)
    herder = StandaloneHerder(config, registry, bootstrap=bootstrap)
    try:
        herder.start()
    except Exception as exc:
        raise StartupError(f"the worker could not start: {exc}") from exc
    running.callback(_quietly, herder.stop, "herder")
    named_files: dict[str, PipelineFile] = {}  # command-line files: applied again at each start
    for path in connector_files:
        pipeline = read_pipeline_file(Path(path))
        apply_pipeline_file(herder, pipeline)
        named_files[pipeline.name] = pipeline
    watcher = PipelineWatcher(config.pipelines_dir, herder)

    def pipeline_file(name: str) -> PipelineFile | None:
        """The file defining connector ``name``; REST refuses to change it (409)."""
        return named_files.get(name) or watcher.pipeline_file(name)

    probe = LogProbe(bootstrap, config.admin_client_props())
    running.callback(_quietly, probe.close, "health probe")
    attach(
        app,
        herder,
        registry,
        kafka_cluster_id=cluster_id,
        pipeline_files=pipeline_file,
        log_check=probe.problem,
    )
    sources = console.connect(
        app,
        bootstrap=bootstrap,
        client_props=config.admin_client_props(),
        pipelines_dir=Path(config.pipelines_dir),
        worker_props=worker_props,
    )
    running.callback(_quietly, sources.close, "console")
    running.callback(_quietly, rest.stop, "rest")  # stops again before the herder (idempotent)
    log.info("REST API on %s (OpenAPI at /docs)", rest_urls(config))
    watcher.start()
    running.callback(_quietly, watcher.stop, "watcher")
    return rest


def _start_broker(
    running: contextlib.ExitStack, worker_props: dict[str, str], config: WorkerConfig
) -> tuple[str, str | None]:
    """The bootstrap address and cluster id: an external cluster's, or the embedded one's."""
    if config.bootstrap_servers:
        servers = config.bootstrap_servers
        bootstrap = servers if isinstance(servers, str) else ",".join(servers)
        return bootstrap, kafka_cluster_id(bootstrap, config.admin_client_props())
    broker = EmbeddedBroker.from_worker_properties(worker_props, config)
    try:
        bootstrap = broker.start()
    except Exception as exc:
        broker.stop()
        raise StartupError(f"the embedded broker could not start: {exc}") from exc
    running.callback(_quietly, broker.stop, "broker")
    log.info("embedded broker on %s (data in %s)", bootstrap, config.embedded_broker_log_dirs)
    return bootstrap, broker.cluster_id
