"""Drop-a-file pipelines: the ``pipelines.dir`` folder watcher (watchdog).

Each ``*.properties`` file in the folder is one connector. Its name is the
file name without ``.properties`` unless the file sets ``name``.

- At start every pipeline file present is loaded (before :meth:`start` returns).
- A created or changed file creates or updates its connector
  (``put_connector_config(..., allow_replace=True)``; the herder restarts its
  tasks). A file whose parsed config did not change is left alone.
- A deleted file (or one renamed away) deletes its connector.
- A file that cannot become a connector (too big, not a properties file, no
  ``connector.class``, a config the herder refuses) becomes a FAILED
  placeholder (``put_failed_connector``) whose trace names the file and lists
  every problem; fixing the file replaces it. Other pipelines are untouched.
  So does a symbolic link whose target leaves the folder (its target is never
  read), and a file whose ``name`` is not a valid connector name
  (:func:`~connect_worker.connector_config.connector_name_problem`); a file
  whose own name is not a valid connector name is only logged.
- :meth:`PipelineWatcher.pipeline_file` says which file defines a connector;
  the REST API refuses to change or delete such a connector (409: edit the file).

Only direct children named ``*.properties`` count; hidden files and editors'
temporaries (``.#x``, ``x~``, ``*.swp``, ``*.tmp``) never match. Events only
mark a file dirty: a file is read once it has been quiet for the debounce
interval (so half-written files are not read), and what is done depends on
the file's state then, not on the event's kind. That makes editors' save
dances (write a temporary file then rename it into place, or rename the old
file away then write a new one) come out right.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from connect_worker.connector_config import connector_name_problem
from connect_worker.herder.api import BadRequestError, Herder, HerderError, NotFoundError
from connect_worker.properties import PropertiesError, parse_properties

log = logging.getLogger(__name__)

SUFFIX = ".properties"
MAX_FILE_BYTES = 1 << 20
DEBOUNCE_S = 0.3
MAX_DELAY_S = 5.0  # a file written to without a pause is read at least this often
_EVENT_KINDS = frozenset({"created", "modified", "moved", "deleted", "closed"})


def is_pipeline_file(path: Path) -> bool:
    """``*.properties``, not hidden (editors' ``.#x`` and ``.x.swp`` are hidden)."""
    name = path.name
    return name.endswith(SUFFIX) and len(name) > len(SUFFIX) and not name.startswith(".")


@dataclass(frozen=True, slots=True)
class PipelineFile:
    """What one pipeline file says: its connector's name and config, or its problems."""

    path: Path
    name: str
    config: dict[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()


def read_pipeline_file(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> PipelineFile:
    """Read and parse one file; problems are collected, never raised."""
    default_name = _default_name(path)
    escape = _link_escape(path)
    if escape is not None:
        return PipelineFile(path, default_name, problems=(escape,))
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return PipelineFile(
                path,
                default_name,
                problems=(
                    f"{path}: the file is {size} bytes; pipeline files are limited to "
                    f"{max_bytes} bytes",
                ),
            )
        data = path.read_bytes()
    except OSError as exc:
        return PipelineFile(path, default_name, problems=(f"{path}: cannot read: {exc}",))
    try:
        config = parse_properties(data, source=str(path))
    except PropertiesError as exc:
        return PipelineFile(path, default_name, problems=(str(exc),))
    name = config.get("name", "").strip() or default_name
    config["name"] = name
    problem = connector_name_problem(name)
    if problem is not None:  # the placeholder goes under the file's name (if that one is valid)
        return PipelineFile(path, default_name, config, (f"{path}: {problem}",))
    if not config.get("connector.class", "").strip():
        problem = (
            f"{path}: connector.class is missing: set it to a connector's alias "
            "(e.g. FileStreamSource) or class name"
        )
        return PipelineFile(path, name, config, (problem,))
    return PipelineFile(path, name, config)


def apply_pipeline_file(herder: Herder, pipeline: PipelineFile) -> bool:
    """Create or update the file's connector, or record it FAILED; True if it was accepted."""
    if not pipeline.problems:
        try:
            # source="file": the folder is the config's source of truth (not persisted).
            _, created = herder.put_connector_config(
                pipeline.name, pipeline.config, allow_replace=True, source="file"
            )
        except BadRequestError as exc:
            problems = [f"{pipeline.path}: invalid connector config:"]
            problems += [line.strip() for line in str(exc).splitlines() if line.strip()]
            _fail(herder, pipeline.name, pipeline.config, problems)
            return False
        log.info(
            "pipeline %s: connector %r %s",
            pipeline.path.name,
            pipeline.name,
            "created" if created else "updated",
        )
        return True
    _fail(herder, pipeline.name, pipeline.config, list(pipeline.problems))
    return False


def _fail(herder: Herder, name: str, config: dict[str, str], problems: list[str]) -> None:
    log.warning("pipeline %r FAILED: %s", name, " ".join(problems))
    herder.put_failed_connector(name, config, problems)


class _Events(FileSystemEventHandler):
    """Marks pipeline files dirty; the watcher's thread does the rest."""

    def __init__(self, watcher: PipelineWatcher) -> None:
        self._watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type not in _EVENT_KINDS:
            return
        self._watcher.mark(os.fsdecode(event.src_path))
        if event.event_type == "moved":
            self._watcher.mark(os.fsdecode(event.dest_path))


class PipelineWatcher:
    """Keeps the herder's connectors in step with the ``*.properties`` files of a folder."""

    def __init__(
        self,
        directory: str | Path,
        herder: Herder,
        *,
        debounce_s: float = DEBOUNCE_S,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self.directory = Path(directory).absolute()
        self.herder = herder
        self.debounce_s = debounce_s
        self.max_file_bytes = max_file_bytes
        self._owners: dict[Path, str] = {}  # file -> the connector it made
        self._defined: dict[str, PipelineFile] = {}  # connector -> the file that defines it
        self._defined_lock = threading.Lock()  # _defined is read by REST threads
        self._applied: dict[Path, tuple[str, object]] = {}  # file -> what was applied
        self._dirty: dict[Path, tuple[float, float]] = {}  # file -> (first, last) event time
        self._cond = threading.Condition()
        self._stopping = False
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Watch the folder, load every pipeline file in it, then follow changes."""
        self.directory.mkdir(parents=True, exist_ok=True)
        observer = Observer()
        observer.schedule(_Events(self), str(self.directory), recursive=False)
        observer.daemon = True
        observer.start()
        self._observer = observer
        for path in sorted(self.directory.iterdir()):
            if is_pipeline_file(path):
                self._sync_safely(path)
        self._thread = threading.Thread(target=self._run, name="pipeline-watcher", daemon=True)
        self._thread.start()
        log.info("watching %s for pipeline files (%d loaded)", self.directory, len(self._owners))

    def stop(self) -> None:
        """Stop watching; connectors keep running (the herder owns them)."""
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(5)
            self._observer = None
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def pipeline_file(self, name: str) -> PipelineFile | None:
        """The file defining connector ``name`` (as last applied), or None (thread-safe)."""
        with self._defined_lock:
            return self._defined.get(name)

    def _define(self, pipeline: PipelineFile) -> None:
        with self._defined_lock:
            self._defined = {
                name: known for name, known in self._defined.items() if known.path != pipeline.path
            }
            self._defined[pipeline.name] = pipeline

    def _undefine(self, path: Path) -> None:
        with self._defined_lock:
            self._defined = {n: known for n, known in self._defined.items() if known.path != path}

    def mark(self, raw_path: str) -> None:
        """Note that ``raw_path`` changed (called from watchdog's thread)."""
        path = Path(raw_path)
        if path.parent != self.directory or not is_pipeline_file(path):
            return
        now = time.monotonic()
        with self._cond:
            first, _ = self._dirty.get(path, (now, now))
            self._dirty[path] = (first, now)
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                due = self._wait_for_due()
                if due is None:
                    return
            for path in due:
                self._sync_safely(path)

    def _sync_safely(self, path: Path) -> None:
        try:
            self._sync(path)
        except Exception:  # never let one file stop the watcher or the other pipelines
            log.exception("pipeline %s: could not be applied", path.name)

    def _wait_for_due(self) -> list[Path] | None:
        """Block until some file has been quiet long enough (None once stopping)."""
        while not self._stopping:
            now = time.monotonic()
            due = [
                path
                for path, (first, last) in self._dirty.items()
                if now - last >= self.debounce_s or now - first >= MAX_DELAY_S
            ]
            if due:
                for path in due:
                    del self._dirty[path]
                return sorted(due)
            waits = [
                min(last + self.debounce_s, first + MAX_DELAY_S) - now
                for first, last in self._dirty.values()
            ]
            self._cond.wait(max(0.01, min(waits)) if waits else None)
        return None

    def _sync(self, path: Path) -> None:
        """Make the herder match what ``path`` holds now (or its absence)."""
        if path.is_file():
            self._load(path)
        else:
            self._forget(path)

    def _load(self, path: Path) -> None:
        pipeline = read_pipeline_file(path, max_bytes=self.max_file_bytes)
        unusable = connector_name_problem(pipeline.name)
        if unusable is not None:  # not even a placeholder can have this name
            log.error("pipeline %s ignored: %s", path, " ".join(pipeline.problems or (unusable,)))
            return
        other = next((p for p, n in self._owners.items() if n == pipeline.name and p != path), None)
        if other is not None and other.exists():
            problem = f"{path}: name {pipeline.name!r} is already used by {other}"
            if _default_name(path) == pipeline.name:  # no name of its own to fail under
                log.error("%s", problem)
                return
            pipeline = PipelineFile(path, _default_name(path), pipeline.config, (problem,))
        fingerprint = (pipeline.name, pipeline.problems or sorted(pipeline.config.items()))
        if self._applied.get(path) == fingerprint and pipeline.name in self.herder.connectors():
            return
        previous = self._owners.get(path)
        if previous is not None and previous != pipeline.name:
            self._delete(previous, path)
        try:
            apply_pipeline_file(self.herder, pipeline)
        except HerderError as exc:  # e.g. the herder is shutting down: retry on next change
            log.error("pipeline %s: %s", path.name, exc)
            self._applied.pop(path, None)
            return
        self._owners[path] = pipeline.name
        self._applied[path] = fingerprint
        self._define(pipeline)

    def _forget(self, path: Path) -> None:
        name = self._owners.pop(path, None)
        self._applied.pop(path, None)
        self._undefine(path)
        if name is not None and name not in self._owners.values():
            self._delete(name, path)

    def _delete(self, name: str, path: Path) -> None:
        try:
            self.herder.delete_connector(name)
        except NotFoundError:
            return
        log.info("pipeline %s removed: connector %r deleted", path.name, name)


def _link_escape(path: Path) -> str | None:
    """The problem of a symbolic link whose target leaves the folder, else None.

    A link to another file of the folder is fine; one to ``/etc/passwd`` must
    not turn that file into a connector config anyone can read over REST.
    """
    if not path.is_symlink():
        return None
    folder = path.parent.resolve()
    target = path.resolve()
    if target.is_relative_to(folder):
        return None
    return (
        f"{path}: is a symbolic link to {target}, outside the pipelines folder {folder}; "
        "pipeline files must be in the folder (links may only point inside it)"
    )


def _default_name(path: Path) -> str:
    return path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else path.stem
