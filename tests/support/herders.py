"""In-process Connect workers (StandaloneHerder) on a test broker, made and stopped for a test.

Integration tests of connectors run the real runtime in the test process: a
:class:`HerderFactory` starts herders whose offsets and configs live in a
test's folder, with short flush and restart intervals, and stops them all at
the end. Areas pass their own defaults (converters, a registry with test
plugins) instead of repeating the fixture.
"""

from __future__ import annotations

from pathlib import Path

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.storage.status import StatusStore
from connect_worker.worker_config import WorkerConfig

#: Worker settings every test herder starts from (then the area's, then the test's).
TEST_WORKER_DEFAULTS = {
    "offset.flush.interval.ms": "200",
    "task.restart.backoff.initial.ms": "50",
    "task.restart.backoff.max.ms": "400",
}


class HerderFactory:
    """``factory(status=None, **worker_props)`` starts a herder; :meth:`stop_all` ends them."""

    def __init__(
        self,
        bootstrap: str,
        folder: Path,
        registry: PluginRegistry | None = None,
        **defaults: str,
    ) -> None:
        self.bootstrap = bootstrap
        self.folder = folder
        self.registry = registry or PluginRegistry.load(entry_points=False)
        self.defaults = defaults
        self.started: list[StandaloneHerder] = []

    def __call__(self, status: StatusStore | None = None, **overrides: str) -> StandaloneHerder:
        props = {
            "offset.storage.file.filename": str(self.folder / "connect.offsets"),
            "connector.configs.file": str(self.folder / "connectors.json"),
            **TEST_WORKER_DEFAULTS,
            **self.defaults,
            **overrides,
        }
        herder = StandaloneHerder(
            WorkerConfig.from_properties(props),
            self.registry,
            bootstrap=self.bootstrap,
            status=status,
        )
        herder.start()
        self.started.append(herder)
        return herder

    def stop_all(self) -> None:
        for herder in self.started:
            herder.stop()
