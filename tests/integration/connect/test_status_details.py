"""A plugin's ``details()`` reach ``GET /connectors/{c}/status`` (connector and tasks)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.plugins import PluginRegistry
from connect_worker.rest.models import connector_status_json
from connectors.api import SourceConnector, SourceRecord, SourceTask, hookimpl
from harness.wait import wait_for

MakeHerder = Callable[..., StandaloneHerder]


class ProgressSourceTask(SourceTask):
    """Reports how many polls it answered; raises from details() when told to."""

    def start(self, props: Mapping[str, str]) -> None:
        self.polls = 0
        self.broken = props.get("broken.details") == "true"

    def poll(self) -> list[SourceRecord]:
        self.polls += 1
        return []

    def stop(self) -> None:
        pass

    def details(self) -> dict[str, Any]:
        if self.broken:
            raise RuntimeError("no progress today")
        return {"polls": self.polls, "phase": "streaming", "since": object()}


class ProgressSource(SourceConnector):
    aliases = ("ProgressSource",)
    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return ProgressSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{} for _ in range(max_tasks)]

    def details(self) -> dict[str, Any]:
        return {"tables": 2}


@hookimpl
def sluice_connectors() -> list[type]:
    return [ProgressSource]


def test_details_of_connector_and_tasks_are_in_the_status(
    make_herder: MakeHerder, registry: PluginRegistry, topic_name: str
) -> None:
    assert registry.register(sys.modules[__name__], name="details-test-plugins")
    herder = make_herder()
    name = f"{topic_name}-progress"
    herder.put_connector_config(
        name, {"connector.class": "ProgressSource", "tasks.max": "2"}, allow_replace=False
    )
    wait_for(
        lambda: all(t.details.get("polls", 0) > 0 for t in herder.connector_status(name).tasks),
        "both tasks reporting progress",
    )
    body = connector_status_json(herder.connector_status(name))
    assert body["details"] == {"tables": 2}
    assert [t["details"]["phase"] for t in body["tasks"]] == ["streaming", "streaming"]
    assert isinstance(body["tasks"][0]["details"]["since"], str)  # not JSON: shown as str


def test_a_details_bug_shows_as_an_error_not_a_broken_status(
    make_herder: MakeHerder, registry: PluginRegistry, topic_name: str
) -> None:
    registry.register(sys.modules[__name__], name="details-test-plugins")
    herder = make_herder()
    name = f"{topic_name}-broken"
    herder.put_connector_config(
        name,
        {"connector.class": "ProgressSource", "broken.details": "true"},
        allow_replace=False,
    )
    wait_for(lambda: herder.connector_status(name).tasks[0].details, "task details")
    details = herder.connector_status(name).tasks[0].details
    assert details == {"error": "details() raised RuntimeError: no progress today"}
