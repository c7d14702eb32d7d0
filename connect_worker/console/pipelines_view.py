"""The pipeline files folder as the console shows it: each file with its problems.

Each ``*.properties`` file of ``pipelines.dir`` (the files the watcher reads,
:func:`~connect_worker.watch.is_pipeline_file`) is read as the watcher reads it
and validated offline as ``sluice validate`` does (syntax, then the
connector's config model, ``${provider:...}`` references resolved with the
worker's config providers). The connector's ``check()`` against the real
system is not run: the console polls this every few seconds, and a
connectivity test per file per poll would hammer databases and brokers.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from connect_worker.config_providers import providers_from_worker_config
from connect_worker.plugins import PluginRegistry
from connect_worker.validation import validate_connector_config
from connect_worker.watch import is_pipeline_file, read_pipeline_file

#: A folder with more files than this is cut (the answer says so).
MAX_FILES = 500


def pipeline_files(
    directory: Path, registry: PluginRegistry, worker_props: Mapping[str, str]
) -> dict[str, Any]:
    """``{"directory", "files": [{"file", "connector", "connector_class", "problems", ...}]}``."""
    paths = []
    if directory.is_dir():
        paths = sorted(p for p in directory.iterdir() if is_pipeline_file(p))
    providers = providers_from_worker_config(worker_props, registry)
    try:
        files = [_file_json(path, registry, providers) for path in paths[:MAX_FILES]]
    finally:
        for provider in providers.values():
            provider.close()
    return {
        "directory": str(directory),
        "exists": directory.is_dir(),
        "files": files,
        "truncated": len(paths) > MAX_FILES,
    }


def _file_json(
    path: Path, registry: PluginRegistry, providers: Mapping[str, Any]
) -> dict[str, Any]:
    pipeline = read_pipeline_file(path)
    problems = list(pipeline.problems)
    if not problems:
        result = validate_connector_config(registry, pipeline.config, providers)
        problems = result.problems()
    try:
        stat = path.stat()
        size, modified_ms = stat.st_size, int(stat.st_mtime * 1000)
    except OSError:
        size, modified_ms = None, None
    return {
        "file": path.name,
        "path": str(path),
        "connector": pipeline.name,
        "connector_class": pipeline.config.get("connector.class"),
        "size_bytes": size,
        "modified_ms": modified_ms,
        "problems": problems,
    }
