"""The layering, read from the code's imports (``ast``, so nothing is imported).

::

    connect_worker.cli           the sluice command; the only worker code that starts a broker
      rest, watch                thin callers of the herder
        herder                   the control plane: configs, target states, statuses
          runtime                runs connectors and tasks; reports through a listener
            storage, converters, plugins, states (leaf), ...
    connectors/<family>, transforms   plugins: the plugin API (and their own folder) only
    spark_sinks                  the plugin API and log_engine.client
    log_engine                   reached by the worker and plugins through log_engine.client
    bench, harness               never import tests (harness: the servers both start)

Every import counts, also one inside a function or under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FAMILIES = ("file", "jdbc", "mqtt", "s3", "postgres_cdc")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> Iterator[str]:
    """Dotted names ``path`` imports; ``from a.b import c`` gives ``a.b.c``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path).rpartition(".")[0]
    if path.name == "__init__.py":
        package = _module_name(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _modules(prefix: str, *, outside: tuple[str, ...] = ()) -> list[tuple[str, Path]]:
    root = REPO.joinpath(*prefix.split("."))
    paths = sorted(root.rglob("*.py")) if root.is_dir() else [root.with_suffix(".py")]
    found = [(_module_name(p), p) for p in paths if p.exists()]
    return [(m, p) for m, p in found if not any(_under(m, o) for o in outside)]


def _offenders(importers: list[tuple[str, Path]], bad) -> list[str]:
    assert importers, "the rule names no module: was a package renamed?"
    return [
        f"{module} imports {name}"
        for module, path in importers
        for name in _imports(path)
        if bad(name)
    ]


ABOVE_HERDER = ("connect_worker.rest", "connect_worker.watch", "connect_worker.cli")
ABOVE_RUNTIME = ("connect_worker.herder", *ABOVE_HERDER)
ABOVE_STORES = ("connect_worker.runtime", *ABOVE_RUNTIME)
# (importing package, packages it never imports, why)
LAYERS = [
    ("connect_worker.runtime", ABOVE_RUNTIME, "the herder sits above the runtime"),
    ("connect_worker.storage", ABOVE_STORES, "the stores are below runtime and herder"),
    ("connect_worker.converters", ABOVE_STORES, "converters are plugins of the runtime"),
    ("connect_worker.herder", ABOVE_HERDER, "REST and the watcher call the herder"),
    (
        "connect_worker.distributed",
        ("connect_worker.herder", *ABOVE_HERDER),
        "group membership is below the distributed herder that drives it",
    ),
    ("connect_worker.rest", ("connect_worker.cli",), "the CLI is on top"),
    ("connect_worker.watch", ("connect_worker.cli",), "the CLI is on top"),
    ("connect_worker.states", ("connect_worker",), "the states are a leaf"),
]


@pytest.mark.parametrize(("package", "forbidden", "why"), LAYERS, ids=[r[0] for r in LAYERS])
def test_worker_layers(package: str, forbidden: tuple[str, ...], why: str) -> None:
    offenders = _offenders(
        _modules(package), lambda name: any(_under(name, f) for f in forbidden)
    )
    assert not offenders, f"{why}: {offenders}"


@pytest.mark.parametrize("package", ["connect_worker", "spark_sinks"])
def test_the_log_only_through_its_client(package: str) -> None:
    """Outside ``connect_worker.cli``, the broker is reached as any Kafka cluster is."""
    offenders = _offenders(
        _modules(package, outside=("connect_worker.cli",)),
        lambda name: _under(name, "log_engine") and not _under(name, "log_engine.client"),
    )
    assert not offenders, offenders


def _plugin_may_import(package: str):
    own = ("connectors.api",) if package == "connectors.api" else ("connectors.api", package)
    if package == "transforms":
        own = ("connectors.api", "transforms")

    def bad(name: str) -> bool:
        top = name.split(".")[0]
        if top in ("connect_worker", "log_engine", "spark_sinks"):
            return True
        return top in ("connectors", "transforms") and not any(_under(name, o) for o in own)

    return bad


PLUGINS = ["connectors.api", *(f"connectors.{f}" for f in FAMILIES), "transforms"]


@pytest.mark.parametrize("package", PLUGINS)
def test_plugins_import_only_their_api(package: str) -> None:
    """A connector family sees the plugin API and its own folder; transforms the same."""
    offenders = _offenders(_modules(package), _plugin_may_import(package))
    assert not offenders, offenders


def test_every_connector_module_is_in_a_family() -> None:
    """``connectors/`` holds the API and one folder per family, nothing else."""
    allowed = ("connectors.api", *(f"connectors.{f}" for f in FAMILIES))
    strays = [m for m, _ in _modules("connectors") if m != "connectors"
              and not any(_under(m, a) for a in allowed)]
    assert not strays, strays


@pytest.mark.parametrize("package", ["bench", "harness"])
def test_benchmarks_import_no_test_module(package: str) -> None:
    """What benchmarks and tests share lives in ``harness/``, not in ``tests/``."""
    offenders = _offenders(_modules(package), lambda name: _under(name, "tests"))
    assert not offenders, offenders
