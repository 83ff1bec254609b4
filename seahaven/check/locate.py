"""Finding the world to check, the code it is made of, and the project paths are printed against.

Discovery is ``seahaven.discovery.find_world``, the same as every command.
When it fails, the failure becomes SH501 rather than a traceback: at the file
and line of the world's code that raised, when the world's code raised, and
naming the fix either way. A world whose import failed only because its
schema does not execute is left to SH104, which says so with the statement's
line.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from seahaven.check.model import Finding
from seahaven.check.package import WorldPackage
from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.registry.discovery import (
    declared_worlds,
    find_world,
    nearest_pyproject,
    project_package,
)

if TYPE_CHECKING:
    from seahaven.registry.worlds import Registry

__all__ = ["Located", "locate", "package_of"]

DISCOVERY_FIX = "give the package a world, or point at the one it has"
# The framework's own directory: this file is seahaven/check/locate.py.
_SEAHAVEN_DIR = Path(__file__).resolve().parent.parent
# The framework modules that wrap a failed import in a WorldBug of their own.
_WRAPPERS = frozenset(
    {
        _SEAHAVEN_DIR / "registry" / "discovery.py",
        _SEAHAVEN_DIR / "registry" / "worlds.py",
        _SEAHAVEN_DIR / "registry" / "targets.py",
    }
)


@dataclass(frozen=True, slots=True)
class Located:
    """What discovery found: the world (or why not), its code, and the project."""

    project: Path
    package: WorldPackage | None
    world: World | None
    # SH501, when the world could not be had.
    failure: Finding | None = None
    # SQLite's message, when importing failed because the schema does not execute.
    schema_failure: str | None = None


def locate(explicit: str | None, start: Path, registry: Registry | None = None) -> Located:
    """Find the world as every command does; turn any failure into SH501 (or leave it to SH104)."""
    start = start.resolve()
    try:
        found = find_world(explicit, start=start, registry=registry)
    except (Exception, SystemExit) as error:
        # A world module calling sys.exit() at import is a failure to report, not to obey.
        return _failed(explicit, start, error)
    package = package_of(found.module)
    project = found.project
    if project is None:
        near = nearest_pyproject(package.location if package is not None else start)
        project = near.parent if near is not None else start
    return Located(project=project.resolve(), package=package, world=found.world)


def package_of(module_name: str) -> WorldPackage | None:
    """The package around an imported module: itself if it is one, else its parent."""
    module = sys.modules.get(module_name)
    if module is None:
        return None
    if not hasattr(module, "__path__"):
        parent = module_name.rpartition(".")[0]
        if not parent:
            file = getattr(module, "__file__", None)
            if file is None:
                return None
            return WorldPackage(module_name, None, Path(file).resolve())
        module_name, module = parent, sys.modules[parent]
    locations = list(getattr(module, "__path__", []))
    if not locations:
        return None
    return WorldPackage(module_name, Path(locations[0]).resolve())


def _failed(explicit: str | None, start: Path, error: BaseException) -> Located:
    near = nearest_pyproject(start)
    project = near.parent.resolve() if near is not None else start
    module = _intended_module(explicit, near)
    package = _package_on_disk(module) if module is not None else None
    raised = _unwrap(error)
    schema_error = _schema_error(raised)
    if schema_error is not None:
        return Located(project, package, None, schema_failure=str(schema_error))
    # A refusal of discovery's own (no attribute, not a World) names no line of the world's.
    own_refusal = raised is error and _raised_in(error) in _WRAPPERS
    place = None if own_refusal else _world_frame(raised, package, project)
    if place is None:
        # Discovery's own refusal: its message already ends in the fix.
        where = package.location if package is not None else (near or start)
        message, _, fix = str(error).partition("; ")
        finding = _discovery_finding((where, None), message, fix or DISCOVERY_FIX)
    else:
        path, line = place
        name = type(raised).__name__
        top = module.partition(".")[0] if module is not None else "the package"
        finding = _discovery_finding(
            place,
            f"importing the world raised {name}: {raised}",
            f"fix the {name} at {path}:{line}; python -c 'import {top}' prints the whole traceback",
        )
    return Located(project, package, None, failure=finding)


def _discovery_finding(place: tuple[Path, int | None], message: str, fix: str) -> Finding:
    return Finding("SH501", "error", place[0], place[1], message, fix)


def _intended_module(explicit: str | None, pyproject: Path | None) -> str | None:
    """The module discovery meant to import, worked out again without importing it."""
    if explicit is not None:
        if ":" in explicit:
            return explicit.partition(":")[0] or None
        try:
            from seahaven.registry.worlds import registry

            spec = registry().get(explicit)
        except Exception:
            return None
        return spec.module if spec is not None else None
    if pyproject is None:
        return None
    try:
        declared = declared_worlds(pyproject)
        if len(declared) == 1:
            return next(iter(declared.values())).partition(":")[0]
        return project_package(pyproject)
    except WorldBug:
        return None


def _package_on_disk(module: str) -> WorldPackage | None:
    """The package around ``module``, found on disk without running any of it."""
    top, *rest = module.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if not spec.submodule_search_locations:
        return WorldPackage(top, None, Path(spec.origin).resolve()) if spec.origin else None
    directory = Path(next(iter(spec.submodule_search_locations))).resolve()
    name = top
    # Climb down to the package the module sits in, as package_of does once imported.
    for part in rest:
        if not (directory / part / "__init__.py").is_file():
            break
        directory, name = directory / part, f"{name}.{part}"
    return WorldPackage(name, directory)


def _unwrap(error: BaseException) -> BaseException:
    """The exception the world's code raised, under the WorldBug discovery wrapped it in."""
    while (
        isinstance(error, WorldBug)
        and error.__suppress_context__
        and error.__context__ is not None
        and _raised_in(error) in _WRAPPERS
    ):
        error = error.__context__
    return error


def _raised_in(error: BaseException) -> Path | None:
    frames = traceback.extract_tb(error.__traceback__)
    return Path(frames[-1].filename).resolve() if frames else None


def _schema_error(error: BaseException) -> apsw.Error | None:
    """SQLite's refusal, when the world failed to build because its schema does not execute."""
    cause = error.__cause__
    from_schema = _raised_in(error) == _SEAHAVEN_DIR / "stores" / "schema.py"
    if isinstance(error, WorldBug) and isinstance(cause, apsw.Error) and from_schema:
        return cause
    return None


def _world_frame(
    error: BaseException, package: WorldPackage | None, project: Path
) -> tuple[Path, int | None] | None:
    """The deepest place in the world's own code that the exception passed through."""
    if isinstance(error, SyntaxError) and error.filename:
        return Path(error.filename).resolve(), error.lineno
    best: tuple[Path, int | None] | None = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename.startswith("<"):
            continue
        path = Path(frame.filename).resolve()
        if _is_world_code(path, package, project):
            best = (path, frame.lineno)
    return best


def _is_world_code(path: Path, package: WorldPackage | None, project: Path) -> bool:
    if package is not None:
        if package.directory is not None:
            return path.is_relative_to(package.directory)
        return path == package.module_file
    if path.is_relative_to(_SEAHAVEN_DIR):
        return False
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        if path.is_relative_to(Path(prefix).resolve()):
            return False
    return path.is_relative_to(project)
