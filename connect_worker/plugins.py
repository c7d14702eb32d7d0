"""The plugin registry: every connector, converter, transform, predicate and
config provider a worker knows, found through pluggy hooks.

Sources of plugins, registered in this order (the first to claim a name keeps it):

1. the bundled modules (:data:`BUNDLED`), registered directly so that a stale
   editable install still has them; they are also declared as entry points in
   group ``sluice`` in ``pyproject.toml``, which are then skipped as duplicates;
2. third-party entry points in group ``sluice`` (a module or object with
   ``@hookimpl`` functions);
3. ``plugin.path`` folders: each folder goes on ``sys.path`` and every ``*.py``
   module and package in it is imported and registered if it has hookimpls (a
   package without any in its ``__init__`` is represented by its ``plugin``
   submodule, if it has one).

A plugin that fails to import, to register or to answer its hooks is logged
and skipped (and listed in :attr:`PluginRegistry.errors`); it never stops the
worker. Each worker builds its own registry (its own ``PluginManager``), so
tests build isolated ones.

Names resolve by exact dotted Python path (``connectors.file.source.FileStreamSourceConnector``),
by any of the class's ``aliases`` (``FileStreamSource``,
``org.apache.kafka.connect.file.FileStreamSourceConnector``), case-sensitively,
and finally by importing a dotted path that was not registered. A dotted path
into a module that has moved (:data:`MOVED_MODULES`) is read at its new place,
so a ``connector.class`` written before a move keeps working.
"""

from __future__ import annotations

import builtins
import difflib
import functools
import importlib
import importlib.metadata
import importlib.util
import logging
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pluggy

from connectors.api import (
    Converter,
    HeaderConverter,
    SinkConnector,
    SluiceHookSpecs,
    SourceConnector,
)
from connectors.api.config_provider import ConfigProvider
from connectors.api.connector import Connector
from connectors.api.hookspecs import PROJECT
from transforms.api import Predicate, Transformation

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "sluice"
#: Modules of the bundled plugins, registered through the same hooks as third parties.
BUNDLED = (
    "connectors.file.plugin",
    "connectors.jdbc.plugin",
    "connectors.postgres_cdc.plugin",
    "connectors.mqtt.plugin",
    "connectors.s3.plugin",
    "spark_sinks.plugin",
    "connect_worker.converters",
    "connect_worker.config_providers",
    "transforms.plugin",
)
#: Old module -> its new place. Each connector family now lives in one folder
#: (``connectors/<family>/source.py`` ...); pipelines may still name the old paths.
MOVED_MODULES: dict[str, str] = {
    "connectors.source.file": "connectors.file.source",
    "connectors.sink.file": "connectors.file.sink",
    "connectors.source.jdbc": "connectors.jdbc.source",
    "connectors.sink.jdbc": "connectors.jdbc.sink",
    "connectors.source.mqtt": "connectors.mqtt.source",
    "connectors.sink.mqtt": "connectors.mqtt.sink",
    "connectors.source.s3": "connectors.s3.source",
    "connectors.sink.s3": "connectors.s3.sink",
    "connectors.source.postgres_cdc.connector": "connectors.postgres_cdc.source",
}
#: Plugin kinds, named as Kafka's ``GET /connector-plugins`` names them.
KINDS = (
    "source",
    "sink",
    "converter",
    "header_converter",
    "transformation",
    "predicate",
    "config_provider",
)
# hook name -> [(base class, kind)]; a class is registered under every base it has.
_HOOK_KINDS: dict[str, list[tuple[type, str]]] = {
    "sluice_connectors": [(SourceConnector, "source"), (SinkConnector, "sink")],
    "sluice_converters": [(Converter, "converter"), (HeaderConverter, "header_converter")],
    "sluice_transforms": [(Transformation, "transformation")],
    "sluice_predicates": [(Predicate, "predicate")],
    "sluice_config_providers": [(ConfigProvider, "config_provider")],
}
_KIND_BASES: dict[str, tuple[type, ...]] = {
    "connector": (Connector,),
    "source": (SourceConnector,),
    "sink": (SinkConnector,),
    "converter": (Converter,),
    "header_converter": (HeaderConverter,),
    "transformation": (Transformation,),
    "predicate": (Predicate,),
    "config_provider": (ConfigProvider,),
}
_KIND_WORDS = {
    "connector": "connector",
    "source": "source connector",
    "sink": "sink connector",
    "converter": "converter",
    "header_converter": "header converter",
    "transformation": "transformation",
    "predicate": "predicate",
    "config_provider": "config provider",
}

class UnknownPluginError(ValueError):
    """No plugin of the wanted kind answers to a name; the message suggests close ones."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
        if not close:  # "FileSource" vs "FileStreamSource": compare short names too
            lowered = {k.rsplit(".", 1)[-1].lower(): k for k in known}
            close = [
                lowered[m]
                for m in difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
            ]
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        super().__init__(f"unknown {_KIND_WORDS.get(kind, kind)} class {name!r}{hint}")


@dataclass(frozen=True, slots=True)
class PluginDescriptor:
    """One registered plugin class, as ``GET /connector-plugins`` lists it."""

    class_name: str  # dotted Python path
    type: str  # one of KINDS
    version: str
    aliases: tuple[str, ...]
    cls: builtins.type

    @property
    def kafka_class(self) -> str:
        """The class name a Kafka Connect user writes: the first qualified alias
        (``org.apache.kafka.connect.file.FileStreamSourceConnector``), else the Python path."""
        return next((a for a in self.aliases if "." in a and a != self.class_name), self.class_name)

    def to_json(self) -> dict[str, Any]:
        """Kafka Connect's ``{"class", "type", "version"}`` item, ``class`` being
        :attr:`kafka_class`; Sluice adds ``python_class`` (the dotted Python path)
        and ``aliases`` (the other names the plugin answers to)."""
        return {
            "class": self.kafka_class,
            "type": self.type,
            "version": self.version,
            "python_class": self.class_name,
            "aliases": [a for a in self.aliases if a != self.kafka_class],
        }


def class_path(cls: type) -> str:
    """The dotted Python path of a class (its canonical plugin name)."""
    return f"{cls.__module__}.{cls.__qualname__}"


class PluginRegistry:
    """The plugins one worker knows, by kind and name (see the module docstring)."""

    def __init__(self) -> None:
        self.manager = pluggy.PluginManager(PROJECT)
        self.manager.add_hookspecs(SluiceHookSpecs)
        self.errors: list[tuple[str, str]] = []  # (plugin source, problem)
        self._by_kind: dict[str, list[PluginDescriptor]] = {kind: [] for kind in KINDS}
        self._names: dict[str, dict[str, PluginDescriptor]] = {kind: {} for kind in KINDS}
        self._imported: dict[tuple[str, str], PluginDescriptor] = {}

    @classmethod
    def load(
        cls, plugin_path: Sequence[Path | str] = (), *, entry_points: bool = True
    ) -> PluginRegistry:
        """Build a registry from the bundled plugins, entry points and ``plugin.path``."""
        registry = cls()
        for module_name in BUNDLED:
            registry._register_source(
                module_name, functools.partial(importlib.import_module, module_name)
            )
        if entry_points:
            for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
                registry._register_source(f"entry point {ep.name} = {ep.value}", ep.load)
        for folder in plugin_path:
            registry.scan_folder(Path(folder))
        return registry

    # ----------------------------------------------------------------- loading

    def register(self, plugin: object, name: str | None = None) -> bool:
        """Register one object with hookimpls and index its classes; False if refused."""
        label = name or str(getattr(plugin, "__name__", repr(plugin)))
        if self.manager.is_registered(plugin):
            return False
        try:
            self.manager.register(plugin, name=name)
            self.manager.check_pending()
        except Exception as exc:  # a bad hookimpl: refuse this plugin only
            self._failed(label, f"{type(exc).__name__}: {exc}")
            if self.manager.is_registered(plugin):
                self.manager.unregister(plugin)
            return False
        for hook_name, kinds in _HOOK_KINDS.items():
            self._collect(label, plugin, hook_name, kinds)
        return True

    def scan_folder(self, folder: Path) -> None:
        """Import every module and package in ``folder`` and register those with hookimpls."""
        if not folder.is_dir():
            self._failed(str(folder), "plugin.path entry is not a directory")
            return
        entry = str(folder.resolve())
        if entry not in sys.path:
            sys.path.insert(0, entry)
        importlib.invalidate_caches()
        for child in sorted(folder.iterdir()):
            if child.name.startswith((".", "_")):
                continue
            if child.is_file() and child.suffix == ".py":
                module_name = child.stem
            elif child.is_dir() and (child / "__init__.py").is_file():
                module_name = child.name
            else:
                continue
            self._register_source(
                f"{child}", functools.partial(_hooks_module, module_name), only_if_hooks=True
            )

    def _register_source(
        self, label: str, load: Callable[[], Any], *, only_if_hooks: bool = False
    ) -> None:
        try:
            plugin = load()
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._failed(label, f"cannot import: {type(exc).__name__}: {exc}")
            return
        if only_if_hooks and not _has_hookimpls(plugin):
            log.debug("plugin.path: %s has no sluice hookimpls; ignored", label)
            return
        self.register(plugin, name=label)

    def _collect(
        self, label: str, plugin: object, hook_name: str, kinds: list[tuple[type, str]]
    ) -> None:
        for impl in getattr(self.manager.hook, hook_name).get_hookimpls():
            if impl.plugin is not plugin:
                continue
            try:
                classes = list(impl.function() or ())
            except Exception as exc:
                self._failed(label, f"{hook_name}() raised {type(exc).__name__}: {exc}")
                continue
            for cls in classes:
                matched = [
                    kind for base, kind in kinds if isinstance(cls, type) and issubclass(cls, base)
                ]
                if not matched:
                    self._failed(label, f"{hook_name}() returned {cls!r}, not a plugin class")
                for kind in matched:
                    self._index(_descriptor(cls, kind), label)

    def _index(self, descriptor: PluginDescriptor, label: str) -> None:
        names = self._names[descriptor.type]
        if names.get(descriptor.class_name) is descriptor or any(
            d.cls is descriptor.cls for d in self._by_kind[descriptor.type]
        ):
            return
        self._by_kind[descriptor.type].append(descriptor)
        for name in (descriptor.class_name, *descriptor.aliases):
            holder = names.get(name)
            if holder is None:
                names[name] = descriptor
            elif holder.cls is not descriptor.cls:
                log.warning(
                    "%s: %s name %r is already taken by %s; keeping that one",
                    label, descriptor.type, name, holder.class_name,
                )

    def _failed(self, label: str, problem: str) -> None:
        log.error("plugin %s skipped: %s", label, problem)
        self.errors.append((label, problem))

    # -------------------------------------------------------------- resolution

    def plugins(self, kind: str | None = None) -> list[PluginDescriptor]:
        """Registered plugins of ``kind`` (a KINDS value, ``"connector"`` or None: all)."""
        if kind is None:
            kinds: Sequence[str] = KINDS
        elif kind == "connector":
            kinds = ("source", "sink")
        elif kind in KINDS:
            kinds = (kind,)
        else:
            raise ValueError(f"unknown plugin kind {kind!r}; expected one of {', '.join(KINDS)}")
        found = [d for k in kinds for d in self._by_kind[k]]
        return sorted(found, key=lambda d: (KINDS.index(d.type), d.class_name))

    def descriptor(self, name: str, kind: str = "connector") -> PluginDescriptor:
        """The descriptor of the plugin ``name`` of ``kind`` (``"connector"``: source or sink).

        ``kind=None`` is not accepted on purpose: the same alias may name a
        converter and a header converter.
        """
        kinds = ("source", "sink") if kind == "connector" else (kind,)
        name = moved_name(name)
        for k in kinds:
            found = self._names[k].get(name)
            if found is not None:
                return found
        for k in kinds:
            imported = self._import(name, k)
            if imported is not None:
                return imported
        known = [n for k in kinds for n in self._names[k]]
        raise UnknownPluginError(kind, name, known)

    def connector_class(self, name: str) -> type[Connector]:
        return cast("type[Connector]", self.descriptor(name, "connector").cls)

    def converter_class(self, name: str) -> type[Converter]:
        return cast("type[Converter]", self.descriptor(name, "converter").cls)

    def header_converter_class(self, name: str) -> type[HeaderConverter]:
        return cast("type[HeaderConverter]", self.descriptor(name, "header_converter").cls)

    def transform_class(self, name: str) -> type[Transformation]:
        return cast("type[Transformation]", self.descriptor(name, "transformation").cls)

    def predicate_class(self, name: str) -> type[Predicate]:
        return cast("type[Predicate]", self.descriptor(name, "predicate").cls)

    def config_provider_class(self, name: str) -> type[ConfigProvider]:
        return cast("type[ConfigProvider]", self.descriptor(name, "config_provider").cls)

    def _import(self, name: str, kind: str) -> PluginDescriptor | None:
        """A dotted path not registered: import it and accept it if of the right base."""
        if (name, kind) in self._imported:
            return self._imported[(name, kind)]
        module_name, _, attr = name.rpartition(".")
        if not module_name or not all(part.isidentifier() for part in name.split(".")):
            return None
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except Exception:
            return None
        if not (isinstance(cls, type) and issubclass(cls, _KIND_BASES[kind])):
            return None
        descriptor = _descriptor(cls, kind)
        self._imported[(name, kind)] = descriptor
        return descriptor


def moved_name(name: str) -> str:
    """``name`` with a moved module's old dotted path (:data:`MOVED_MODULES`) replaced."""
    module_name, _, attr = name.rpartition(".")
    new_module = MOVED_MODULES.get(module_name)
    return f"{new_module}.{attr}" if new_module else name


def _descriptor(cls: type, kind: str) -> PluginDescriptor:
    return PluginDescriptor(
        class_name=class_path(cls),
        type=kind,
        version=str(getattr(cls, "version", "0.1.0")),
        aliases=tuple(getattr(cls, "aliases", ())),
        cls=cls,
    )


def _hooks_module(name: str) -> ModuleType:
    """Module ``name``, or for a package without hookimpls its ``plugin`` submodule."""
    module = importlib.import_module(name)
    if (
        hasattr(module, "__path__")
        and not _has_hookimpls(module)
        and importlib.util.find_spec(f"{name}.plugin") is not None
    ):
        return importlib.import_module(f"{name}.plugin")
    return module


def _has_hookimpls(plugin: object) -> bool:
    marker = f"{PROJECT}_impl"
    if isinstance(plugin, ModuleType):
        names: Iterable[str] = vars(plugin)
    else:
        names = dir(plugin)
    return any(hasattr(getattr(plugin, n, None), marker) for n in names if n.startswith(PROJECT))
