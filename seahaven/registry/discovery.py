"""Finding a world: ``module:attr``, a registered name, or the project convention.

The convention is the one every tool shares: the nearest ``pyproject.toml``
from a starting directory; the world it publishes under the ``seahaven.worlds``
entry-point group when it publishes exactly one; failing that, the ``world``
attribute of the package named by normalising ``[project] name``.
A registered name is looked up in ``seahaven.registry``, which also holds
``import_world`` (re-exported here). Every way of failing is a ``WorldBug``
naming the fix, including a module that raises on import.

``module:attr`` imports as every ``module:attr`` does (``seahaven.targets``): from
the working directory, and from the nearest project's root and ``src/`` when
there is one. Seahaven's own checkout is never taken for a world's project.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.registry.targets import add_import_roots, add_source_roots, nearest_pyproject
from seahaven.registry.worlds import Registry, import_world
from seahaven.registry.worlds import registry as process_registry

__all__ = [
    "FRAMEWORK_PACKAGE",
    "FoundWorld",
    "add_import_roots",
    "add_source_roots",
    "find_world",
    "import_world",
    "nearest_pyproject",
    "project_package",
]

# The framework's own import name: a project of that name is Seahaven, not a world.
FRAMEWORK_PACKAGE = "seahaven"
_NAME_ONE = (
    "name a world with --world NAME (seahaven worlds list shows the installed ones) or "
    "--world module:attr"
)


@dataclass(frozen=True, slots=True)
class FoundWorld:
    """A world, and how it was found."""

    world: World
    module: str
    attribute: str
    # The project directory (holding pyproject.toml), when there is one.
    project: Path | None


WORLDS_GROUP = "seahaven.worlds"


def _read_pyproject(pyproject: Path) -> dict[str, object]:
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise WorldBug(f"{pyproject} cannot be read: {error}") from None


def declared_worlds(pyproject: Path) -> dict[str, str]:
    """The ``seahaven.worlds`` entry points a project declares, name to ``module:attr``."""
    project = _read_pyproject(pyproject).get("project", {})
    entry_points = project.get("entry-points", {}) if isinstance(project, dict) else {}
    group = entry_points.get(WORLDS_GROUP, {}) if isinstance(entry_points, dict) else {}
    return {str(k): str(v) for k, v in group.items()} if isinstance(group, dict) else {}


def project_package(pyproject: Path) -> str:
    """The import name ``[project] name`` normalises to."""
    project = _read_pyproject(pyproject).get("project", {})
    name = project.get("name") if isinstance(project, dict) else None
    if not isinstance(name, str) or not name:
        raise WorldBug(f"{pyproject} has no [project] name to find the world's package by")
    package = re.sub(r"[-_.]+", "_", name).lower()
    if package == FRAMEWORK_PACKAGE:
        raise WorldBug(f"{pyproject} is Seahaven's own project, not a world's; {_NAME_ONE}")
    return package


def find_world(
    explicit: str | None = None, *, start: Path | None = None, registry: Registry | None = None
) -> FoundWorld:
    """Find a world: ``module:attr`` when given, a registered name, else the convention.

    ``registry`` is the one to look names up in; the process's by default.
    """
    start = Path.cwd() if start is None else start
    pyproject = nearest_pyproject(start)
    project = pyproject.parent if pyproject is not None else None
    if explicit is not None and ":" in explicit:
        add_import_roots(project)
        world, module, attribute = import_world(explicit)
        return FoundWorld(world, module, attribute, project)
    if explicit is not None:
        if registry is None:
            registry = process_registry()
        world = registry.load(explicit)
        spec = registry.get(explicit)
        assert spec is not None
        return FoundWorld(world, spec.module, spec.attribute, None)
    if pyproject is None:
        raise WorldBug(
            f"no pyproject.toml at or above {start}; run from a world's project, or {_NAME_ONE}"
        )
    add_source_roots(project)
    declared = declared_worlds(pyproject)
    if len(declared) == 1:
        world, module, attribute = import_world(next(iter(declared.values())))
        return FoundWorld(world, module, attribute, project)
    if len(declared) > 1:
        raise WorldBug(
            f"{pyproject} publishes {len(declared)} worlds ({', '.join(sorted(declared))}); "
            "name one with --world"
        )
    package = project_package(pyproject)
    world, module, attribute = import_world(f"{package}:world")
    return FoundWorld(world, module, attribute, project)
