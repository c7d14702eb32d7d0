"""A sink task hears of pause and resume (``on_pause``/``on_resume``), in its own thread."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.states import TargetState
from connectors.api import SinkConnector, SinkRecord, SinkTask, hookimpl
from harness.wait import wait_for

MakeHerder = Callable[..., StandaloneHerder]
EVENTS: dict[str, list[tuple[str, bool]]] = {}  # connector -> (hook, called in the task thread)


class HookedSinkTask(SinkTask):
    def start(self, props: Mapping[str, str]) -> None:
        self.name = props["name"]
        self.thread = threading.current_thread()
        EVENTS.setdefault(self.name, [])

    def put(self, records: Sequence[SinkRecord]) -> None:
        pass

    def on_pause(self) -> None:
        EVENTS[self.name].append(("pause", threading.current_thread() is self.thread))

    def on_resume(self) -> None:
        EVENTS[self.name].append(("resume", threading.current_thread() is self.thread))

    def stop(self) -> None:
        pass


class HookedSink(SinkConnector):
    aliases = ("HookedSink",)

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return HookedSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]


@hookimpl
def sluice_connectors() -> list[type]:
    return [HookedSink]


def test_pause_and_resume_reach_the_task_once_each_in_its_thread(
    make_herder: MakeHerder, registry: PluginRegistry, topic_name: str
) -> None:
    assert registry.register(sys.modules[__name__], name="pause-hook-plugins")
    herder = make_herder()
    name = f"{topic_name}-hooked"
    herder.put_connector_config(
        name, {"connector.class": "HookedSink", "topics": topic_name}, allow_replace=False
    )
    wait_for(lambda: name in EVENTS, "the task started")
    herder.set_target_state(name, TargetState.PAUSED)
    wait_for(lambda: EVENTS[name] == [("pause", True)], "on_pause in the task thread")
    herder.set_target_state(name, TargetState.PAUSED)  # pausing again tells nothing new
    herder.set_target_state(name, TargetState.RUNNING)
    wait_for(lambda: len(EVENTS[name]) == 2, "on_resume")
    assert EVENTS[name] == [("pause", True), ("resume", True)]
