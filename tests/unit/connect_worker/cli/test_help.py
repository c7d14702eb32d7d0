"""``sluice --help`` and ``--version``: every command and option explained, in plain text."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from connect_worker.cli.main import _parser

ROOT = Path(__file__).resolve().parents[4]

#: reST that must not reach a terminal: ``literals``, roles (:class:`X`), `links`_, `x`.
REST_MARKUP = re.compile(r"``|:[a-z]+:`|`_|`[^`\s][^`]*`")


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("sluice",)
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = dict(_commands(_parser()))


def test_the_walk_reaches_every_level() -> None:
    assert {"sluice", "sluice topics create", "sluice groups reset-offsets",
            "sluice connectors restart", "sluice validate"} <= set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_and_sub_command_has_help(command: str) -> None:
    parser = COMMANDS[command]
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            missing += [f"{command} {c.dest}" for c in action._choices_actions if not c.help]
        elif not action.help or action.help == argparse.SUPPRESS:
            missing.append(f"{command} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, f"no help text: {missing}"
    assert parser.description, f"{command} --help has no description"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_has_no_rest_markup(command: str) -> None:
    text = COMMANDS[command].format_help()
    assert not REST_MARKUP.search(text), f"{command} --help:\n{text}"


def test_version_prints_the_package_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "connect_worker.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"sluice {importlib.metadata.version('sluice')}"
