"""The pytest plugin: the ``world`` and ``instance`` fixtures, the marker, one option, one helper.

Installing ``seahaven`` activates it through the ``pytest11`` entry point.
``instance`` makes a fresh instance per test from the ``@pytest.mark.seahaven``
marker closest to the test, and destroys it on teardown. ``prepared_on_repeat``
tells a world's tests which statements SQLite prepares again at every execution.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from seahaven.declaration.world import World
from seahaven.errors import SeahavenError
from seahaven.instance.instance import Instance

__all__ = ["instance", "prepared_on_repeat", "world"]

_MARKER = "seahaven"
_PREVIOUS_STORAGE = pytest.StashKey[str | None]()
_MARKER_KEYWORDS = (
    "fixture",
    "seed",
    "now",
    "clock_mode",
    "state_format",
    "control_tools",
    "startup",
    "setup_sql",
    "storage",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--seahaven-world`` (the CLI's ``--world``) and ``--seahaven-storage``."""
    group = parser.getgroup("seahaven")
    group.addoption(
        "--seahaven-world",
        dest="seahaven_world",
        default=None,
        metavar="WORLD",
        help="the world the `world` and `instance` fixtures use: module:attr or a registered "
        "name (default: the project's package, attribute `world`)",
    )
    group.addoption(
        "--seahaven-storage",
        dest="seahaven_storage",
        default=None,
        choices=("memory", "disk"),
        help="where every instance the run makes keeps its stores unless it names a storage: "
        "sets SEAHAVEN_STORAGE for the run (default: SEAHAVEN_STORAGE, else disk for a plain "
        "world.instance() and the instance fixture, memory for a trial's, eval's or episode's)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker; point the run at ``--seahaven-storage``, when given."""
    config.addinivalue_line(
        "markers",
        "seahaven(fixture, *, seed=None, now=None, clock_mode=None, state_format=None, "
        "control_tools=False, startup=None, setup_sql=None, storage=None): the instance the "
        "`instance` fixture makes. fixture=None is a blank instance.",
    )
    storage = config.getoption("seahaven_storage", None)
    if storage is not None:
        # The process default, read wherever an instance names no storage (a plain
        # world.instance(...), and every runner's); put
        # back as it was when the run ends, for a run inside another (pytester's).
        config.stash[_PREVIOUS_STORAGE] = os.environ.get("SEAHAVEN_STORAGE")
        os.environ["SEAHAVEN_STORAGE"] = storage


def pytest_unconfigure(config: pytest.Config) -> None:
    """Put ``SEAHAVEN_STORAGE`` back as it was before ``--seahaven-storage`` set it."""
    if _PREVIOUS_STORAGE not in config.stash:
        return
    previous = config.stash[_PREVIOUS_STORAGE]
    if previous is None:
        os.environ.pop("SEAHAVEN_STORAGE", None)
    else:
        os.environ["SEAHAVEN_STORAGE"] = previous


if hasattr(pytest, "Dir"):  # pytest 8 and later collect directories through this hook

    def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        """Collect a project root that holds an ``__init__.py`` as a plain directory.

        ``seahaven hub`` writes the root ``__init__.py`` OpenEnv's layout asks
        for. pytest would collect such a root as a package and import it under
        the directory's name, which is usually the world's package name too, so
        the ``world`` fixture would get the root instead of ``src/<package>``.
        A directory with a ``pyproject.toml`` and a ``src/`` folder beside its
        ``__init__.py`` is a project, never a package to import.
        """
        if (
            (path / "__init__.py").is_file()
            and (path / "pyproject.toml").is_file()
            and (path / "src").is_dir()
        ):
            directory: pytest.Collector = pytest.Dir.from_parent(parent, path=path)
            return directory
        return None


@pytest.fixture(scope="session")
def world(request: pytest.FixtureRequest) -> World:
    """The world under test, found once per session."""
    from seahaven.registry.discovery import find_world

    explicit = request.config.getoption("seahaven_world")
    try:
        return find_world(explicit, start=Path(str(request.config.rootpath))).world
    except SeahavenError as error:
        pytest.fail(f"seahaven: {error}", pytrace=False)


def _marker_arguments(request: pytest.FixtureRequest) -> dict[str, Any]:
    node: Any = request.node
    chosen = None
    while node is not None:
        own = [marker for marker in getattr(node, "own_markers", []) if marker.name == _MARKER]
        if len(own) > 1:
            pytest.fail(
                f"seahaven: {node.nodeid or node.name} carries {len(own)} @pytest.mark.seahaven "
                "markers in one place; nothing chooses between them, so keep one",
                pytrace=False,
            )
        if own and chosen is None:
            chosen = own[0]
        node = node.parent
    if chosen is None:
        pytest.fail(
            "seahaven: the `instance` fixture needs to know what to make; mark the test (or its "
            'module, with pytestmark) @pytest.mark.seahaven(fixture="empty") for a fixture on '
            "disk, or @pytest.mark.seahaven(fixture=None) for a blank instance",
            pytrace=False,
        )
    if len(chosen.args) > 1:
        pytest.fail(
            "seahaven: the marker takes the fixture as its one positional argument", pytrace=False
        )
    arguments = dict(chosen.kwargs)
    if chosen.args:
        if "fixture" in arguments:
            pytest.fail("seahaven: the marker names its fixture twice", pytrace=False)
        arguments["fixture"] = chosen.args[0]
    unknown = sorted(set(arguments) - set(_MARKER_KEYWORDS))
    if unknown:
        pytest.fail(
            f"seahaven: the marker does not take {', '.join(unknown)}; it takes "
            f"{', '.join(_MARKER_KEYWORDS)} (startup keywords go inside startup={{...}})",
            pytrace=False,
        )
    if "fixture" not in arguments:
        pytest.fail(
            "seahaven: this marker names no fixture. A marker on a test replaces the module's "
            "instead of adding to it, so every marker names its own fixture, even one written "
            'only to add seed=: @pytest.mark.seahaven(fixture="empty", seed=7), or fixture=None '
            "for a blank instance",
            pytrace=False,
        )
    return arguments


@pytest.fixture
def instance(request: pytest.FixtureRequest, world: World) -> Iterator[Instance]:
    """A fresh instance per test, made as the closest marker says, destroyed on teardown."""
    arguments = _marker_arguments(request)
    fixture = arguments.pop("fixture")
    try:
        made = world.instance(fixture, **arguments)
    except SeahavenError as error:
        # The message names the fix; a traceback through the framework adds nothing to it.
        pytest.fail(f"seahaven: {error}", pytrace=False)
    try:
        yield made
    finally:
        made.destroy()


def prepared_on_repeat(
    instance: Instance, calls: Sequence[tuple[str, Mapping[str, Any]]]
) -> list[tuple[Any, ...]]:
    """What SQLite asked the authorizer while ``calls`` ran a second time on ``instance``.

    A statement is prepared once an episode and kept; one SQLite prepares anew at
    every execution (with SQLite 3.54, one comparing a column with a bare ``?``
    beside an ``ORDER BY``: bind it as ``CAST(? AS TEXT)``) shows up here, as the
    authorizer calls its preparation made, since SQLite asks the authorizer only
    while preparing. ``[]`` means the second round prepared nothing. Give read-only
    tools: a write's second round takes other paths. The root store is watched.
    """
    conn = instance.db.conn
    asked: list[tuple[Any, ...]] = []

    def counting(*action: Any) -> int:
        asked.append(action)
        return 0  # SQLITE_OK

    previous = conn.authorizer
    # Setting an authorizer expires every statement: the first round prepares them all.
    conn.authorizer = counting
    try:
        for name, arguments in calls:
            instance.call(name, **arguments)
        if not asked:
            raise SeahavenError("the first round prepared no statement: nothing was watched")
        asked.clear()
        for name, arguments in calls:
            instance.call(name, **arguments)
    finally:
        conn.authorizer = previous
    return asked
