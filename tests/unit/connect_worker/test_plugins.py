"""The plugin registry: bundled plugins, aliases, dotted paths, errors, plugin.path."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_worker.converters import JsonConverter, SimpleHeaderConverter, StringConverter
from connect_worker.plugins import KINDS, PluginRegistry, UnknownPluginError
from connectors.file.sink import FileStreamSinkConnector
from connectors.file.source import FileStreamSourceConnector


@pytest.mark.parametrize(
    "name",
    [
        "FileStreamSource",
        "FileStreamSourceConnector",
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "connectors.file.source.FileStreamSourceConnector",
        "connectors.source.file.FileStreamSourceConnector",  # the path before issue 16's move
    ],
)
def test_connector_names_resolve(registry: PluginRegistry, name: str) -> None:
    assert registry.connector_class(name) is FileStreamSourceConnector


def test_sink_and_converters_resolve(registry: PluginRegistry) -> None:
    assert registry.connector_class("FileStreamSink") is FileStreamSinkConnector
    assert registry.converter_class("org.apache.kafka.connect.json.JsonConverter") is JsonConverter
    assert registry.converter_class("StringConverter") is StringConverter
    assert (
        registry.header_converter_class("org.apache.kafka.connect.storage.SimpleHeaderConverter")
        is SimpleHeaderConverter
    )
    assert registry.config_provider_class("env").__name__ == "EnvVarConfigProvider"
    assert registry.config_provider_class(
        "org.apache.kafka.common.config.provider.FileConfigProvider"
    ).__name__ == "FileConfigProvider"


def test_names_are_case_sensitive(registry: PluginRegistry) -> None:
    with pytest.raises(UnknownPluginError):
        registry.connector_class("filestreamsource")


def test_unknown_name_suggests_close_matches(registry: PluginRegistry) -> None:
    with pytest.raises(UnknownPluginError) as info:
        registry.connector_class("FileStreamSorce")
    message = str(info.value)
    assert "connector" in message and "'FileStreamSorce'" in message
    assert "FileStreamSource" in message
    assert isinstance(info.value, ValueError)
    with pytest.raises(UnknownPluginError, match="converter class 'Nope'"):
        registry.converter_class("Nope")


def test_dotted_path_of_wrong_kind_is_unknown(registry: PluginRegistry) -> None:
    with pytest.raises(UnknownPluginError):
        registry.connector_class("connect_worker.converters.json.JsonConverter")
    with pytest.raises(UnknownPluginError):
        registry.connector_class("no.such.module.Thing")


def test_unregistered_importable_dotted_path_is_accepted(registry: PluginRegistry) -> None:
    # The header twin is registered; the module path of a class not registered works too.
    cls = registry.converter_class("connect_worker.converters.bytes.ByteArrayConverter")
    assert cls.__name__ == "ByteArrayConverter"


def test_plugins_listing_and_json(registry: PluginRegistry) -> None:
    kinds = {d.type for d in registry.plugins()}
    assert {"source", "sink", "converter", "header_converter", "config_provider"} <= kinds
    assert kinds <= set(KINDS)
    sources = registry.plugins("source")
    assert FileStreamSourceConnector in [d.cls for d in sources]
    file_source = next(d for d in sources if d.cls is FileStreamSourceConnector)
    assert file_source.to_json() == {
        "class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "type": "source",
        "version": "0.1.0",
        "python_class": "connectors.file.source.FileStreamSourceConnector",
        "aliases": ["FileStreamSource", "FileStreamSourceConnector"],
    }
    assert {d.type for d in registry.plugins("connector")} == {"source", "sink"}
    with pytest.raises(ValueError, match="unknown plugin kind"):
        registry.plugins("gadget")


def test_registries_are_isolated() -> None:
    first = PluginRegistry.load(entry_points=False)
    second = PluginRegistry.load(entry_points=False)
    assert first.manager is not second.manager
    assert not first.errors and not second.errors


def test_entry_points_do_not_duplicate_bundled_plugins() -> None:
    registry = PluginRegistry.load()
    sources = [d.cls for d in registry.plugins("source")]
    assert sources.count(FileStreamSourceConnector) == 1


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "plugins"
    folder.mkdir()
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        if name.startswith("tmpplug"):
            del sys.modules[name]
    while str(folder.resolve()) in sys.path:
        sys.path.remove(str(folder.resolve()))


PLUGIN_MODULE = '''
from connectors.api import SourceConnector, SourceTask, hookimpl

class EchoSource(SourceConnector):
    aliases = ("EchoSource",)
    version = "2.3"
    def start(self, props): pass
    @classmethod
    def task_class(cls): return SourceTask
    def task_configs(self, max_tasks): return [{}]

@hookimpl
def sluice_connectors():
    return [EchoSource]
'''


def test_plugin_path_folder_scan(plugin_dir: Path) -> None:
    (plugin_dir / "tmpplug_echo.py").write_text(PLUGIN_MODULE)
    package = plugin_dir / "tmpplug_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(PLUGIN_MODULE.replace("Echo", "Pkg"))
    (plugin_dir / "tmpplug_plain.py").write_text("VALUE = 1\n")  # no hooks: ignored
    (plugin_dir / "tmpplug_broken.py").write_text("import no_such_module_here\n")
    (plugin_dir / "notes.txt").write_text("not python")

    registry = PluginRegistry.load([plugin_dir], entry_points=False)

    echo = registry.connector_class("EchoSource")
    assert echo.__module__ == "tmpplug_echo"
    assert registry.descriptor("EchoSource").version == "2.3"
    assert registry.connector_class("PkgSource").__module__ == "tmpplug_pkg"
    assert registry.connector_class("tmpplug_echo.EchoSource") is echo
    broken = [problem for label, problem in registry.errors if "tmpplug_broken" in label]
    assert broken and "no_such_module_here" in broken[0]
    assert registry.connector_class("FileStreamSource") is FileStreamSourceConnector


def test_hookimpl_without_spec_is_refused(plugin_dir: Path) -> None:
    (plugin_dir / "tmpplug_typo.py").write_text(
        "from connectors.api import hookimpl\n\n@hookimpl\ndef sluice_conectors():\n    return []\n"
    )
    registry = PluginRegistry.load([plugin_dir], entry_points=False)
    assert any("tmpplug_typo" in label for label, _ in registry.errors)
    assert registry.connector_class("FileStreamSink") is FileStreamSinkConnector


def test_hook_that_raises_or_returns_junk_is_skipped(plugin_dir: Path) -> None:
    (plugin_dir / "tmpplug_raises.py").write_text(
        "from connectors.api import hookimpl\n\n"
        "@hookimpl\ndef sluice_connectors():\n    raise RuntimeError('boom')\n\n"
        "@hookimpl\ndef sluice_converters():\n    return [int]\n"
    )
    registry = PluginRegistry.load([plugin_dir], entry_points=False)
    problems = " ".join(problem for _, problem in registry.errors)
    assert "boom" in problems and "not a plugin class" in problems
    assert registry.converter_class("JsonConverter") is JsonConverter


def test_missing_plugin_path_folder_is_reported(tmp_path: Path) -> None:
    registry = PluginRegistry.load([tmp_path / "nope"], entry_points=False)
    assert registry.errors and "not a directory" in registry.errors[0][1]
