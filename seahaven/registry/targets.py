"""``module:attr`` targets: importing the object a command-line option or a spec names.

Worlds (``--world``), packs, policies, graders and fixture generators are all
named this way, and all are imported by ``import_target``, so one rule says
where their modules come from: what is installed, and beside it the working
directory and the nearest project (the folder holding the nearest
``pyproject.toml``, and its ``src/``), as ``python -m`` would import them. Each
caller says what it expects there and how to fix a wrong one, and the failures
read alike everywhere.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from seahaven.errors import WorldBug

__all__ = [
    "add_import_roots",
    "add_source_roots",
    "import_target",
    "nearest_pyproject",
    "split_target",
]


def split_target(target: str) -> tuple[str, str] | None:
    """``module:attr`` as ``(module, attr)``, or ``None`` when either side is empty or missing."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        return None
    return module_name, attribute


def nearest_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def add_source_roots(project: Path | None) -> None:
    """Let a checked-out project import without being installed: its root and ``src/``."""
    if project is None:
        return
    for folder in (project / "src", project):
        text = str(folder)
        if folder.is_dir() and text not in sys.path:
            sys.path.insert(0, text)


def add_import_roots(project: Path | None = None) -> None:
    """What ``module:attr`` imports from: the working directory, then the project's roots.

    ``project`` is the project to add (the nearest one to the working directory
    when not given), so a module beside the shell imports whether or not a
    ``pyproject.toml`` is near, as it does under ``python -m``.
    """
    here = Path.cwd()
    if project is None:
        pyproject = nearest_pyproject(here)
        project = pyproject.parent if pyproject is not None else None
    add_source_roots(project)
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))


def import_target(
    target: str,
    *,
    label: str | None = None,
    what: str = "an object",
    example: str = "package.module:name",
    module_word: str = "",
    import_fix: str | None = None,
    attribute_fix: str | None = None,
) -> object:
    """Import ``module:attr`` (the attribute may be dotted) and return the object there.

    The module is found among the installed ones, the working directory and the
    nearest project (``add_import_roots``). ``label`` starts every message
    (``--policy 'x:y'``), ``what`` and ``example`` say what the target should
    name, ``module_word`` names the module in the messages (``"the generator
    module "``), and the two fixes end the message for a module that does not
    import and for an attribute that is not there. A module that raises while
    importing is reported with its exception.
    """
    prefix = f"{label}: " if label else ""
    split = split_target(target)
    if split is None:
        raise WorldBug(
            f"{prefix}{target!r} does not name {what}; write module:attr, such as {example}"
        )
    module_name, attribute = split
    if module_name not in sys.modules:
        add_import_roots()
    try:
        found: object = importlib.import_module(module_name)
    except ImportError as error:
        fix = f"; {import_fix}" if import_fix else ""
        raise WorldBug(
            f"{prefix}cannot import {module_word}{module_name!r} ({error}){fix}"
        ) from None
    except Exception as error:
        # A module that raises while importing is its author's to fix; say where.
        raise WorldBug(
            f"{prefix}importing {module_word}{module_name!r} raised {type(error).__name__}: "
            f"{error}; fix the module so it imports"
        ) from None
    for part in attribute.split("."):
        if not hasattr(found, part):
            fix = f"; {attribute_fix}" if attribute_fix else ""
            raise WorldBug(f"{prefix}module {module_name!r} has no attribute {attribute!r}{fix}")
        found = getattr(found, part)
    return found
