"""Shared fixtures: one broker and one PostgreSQL per session, fresh ones on demand,
and ``sluice standalone`` workers of a test's own."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from harness.postgres import PostgresServer
from harness.standalone_process import StandaloneProcess
from harness.tansu import TansuProcess, TansuUnavailable
from tests.support.herders import HerderFactory


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nemesis", "fault-injection runs (tests/fault)")
    group.addoption(
        "--nemesis-seed", type=int, default=None, help="the nemesis' seed (default: fixed)"
    )
    group.addoption(
        "--nemesis-duration-s",
        type=float,
        default=600.0,
        help="how long the nemesis-marked run injects faults (default 600)",
    )
    group.addoption(
        "--nemesis-faults",
        default=None,
        help="comma-separated faults the nemesis-marked run picks from (default: all of "
        "kill_leader,kill_controller,pause_leader,restart,kill_two)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Long ``nemesis`` runs only when asked for: ``pytest -m nemesis``."""
    if "nemesis" in (config.option.markexpr or ""):
        return
    kept = [item for item in items if item.get_closest_marker("nemesis") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A broker shared by the session's tests; tests use topics of their own."""
    process = BrokerProcess(tmp_path_factory.mktemp("session") / "data").start()
    yield process
    assert process.stop() == 0, process.log_text()


@pytest.fixture(scope="session")
def tansu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TansuProcess]:
    """Tansu, a Kafka-compatible broker that is not ours (in memory), for the session.

    A missing binary that cannot be fetched fails the test with how to get it.
    """
    missing = ""
    try:
        process = TansuProcess(tmp_path_factory.mktemp("tansu")).start()
    except TansuUnavailable as exc:
        missing = str(exc)
    if missing:
        pytest.fail(missing, pytrace=False)
    yield process
    process.stop()


@pytest.fixture
def fresh_broker(tmp_path: Path) -> Iterator[Callable[..., BrokerProcess]]:
    """Start a broker of the test's own (for restarts, crashes and odd settings)."""
    started: list[BrokerProcess] = []

    def start(**overrides: str) -> BrokerProcess:
        process = BrokerProcess(tmp_path / f"data{len(started)}", **overrides).start()
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A topic name unique to the test."""
    return "t-" + request.node.name.replace("[", "-").replace("]", "").replace("_", "-")[:60]


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL 15 server (``wal_level=logical``) shared by the session's tests.

    Its folder is outside pytest's (mode 0700) temporary root, because the
    server runs as the ``postgres`` user when the tests run as root.
    """
    root = Path(tempfile.mkdtemp(prefix="sluice-pg-"))
    root.chmod(0o755)  # mkdtemp makes it 0700; the postgres user must reach inside
    server = PostgresServer(root / "cluster").start()
    yield server
    server.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_database(postgres: PostgresServer) -> Iterator[str]:
    """A fresh database of the test's own on the session's server (dropped afterwards)."""
    with postgres.database() as name:
        yield name


@pytest.fixture
def fresh_worker(tmp_path: Path) -> Iterator[Callable[..., StandaloneProcess]]:
    """``sluice standalone`` workers of the test's own, for restarts and crashes.

    ``make(**settings)`` returns one not started yet; settings are worker
    properties (``offset.flush.interval.ms``, ...).
    """
    made: list[StandaloneProcess] = []

    def make(**settings: str) -> StandaloneProcess:
        process = StandaloneProcess(tmp_path / f"worker{len(made)}", **settings)
        made.append(process)
        return process

    yield make
    for process in made:
        process.close()


@pytest.fixture
def make_herder(broker: BrokerProcess, tmp_path: Path) -> Iterator[HerderFactory]:
    """In-process workers (bundled plugins) on the session broker, stopped at the end.

    ``make_herder(**worker_props)``; a test folder may override this fixture
    with its own defaults (``HerderFactory(..., **defaults)``).
    """
    factory = HerderFactory(broker.bootstrap, tmp_path)
    yield factory
    factory.stop_all()
