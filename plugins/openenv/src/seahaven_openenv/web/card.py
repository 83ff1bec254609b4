"""What ``GET /metadata`` publishes: the world's name, version, one-line description and README.

The README is the card a hub shows. In a checkout it is the README the
project that declares the world names in its ``pyproject.toml`` (or the
``README.md`` beside it); in an installed world, which has no project
directory, it is the long description the distribution was built with (the
same file, carried in the wheel's metadata); for a world in a plain folder,
the README beside its fixtures or its module. It is bounded in size.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

import importlib_metadata

import seahaven

__all__ = ["MAX_README_CHARACTERS", "description", "readme", "world_card"]

# How far above the world's module to look for its project's pyproject.toml.
_MAX_PROJECT_DEPTH = 6
# The README's names looked for in a folder, first found first.
_README_NAMES = ("README.md", "README.rst", "README.txt", "README")
#: The most characters of a README the card carries: a hub shows a page, and every
#: ``/metadata`` request is answered with it.
MAX_README_CHARACTERS = 256 * 1024


def description(world: seahaven.World) -> str:
    """``World(description=...)``, or a fallback naming the world when it is blank."""
    text = world.description
    if text is None or not text.strip():
        return f"Seahaven world {world.name}"
    return text


def readme(world: seahaven.World) -> str | None:
    """The world's README, at most ``MAX_README_CHARACTERS``; ``None`` only when it has none.

    Looked for, first found first: the README its project names (``readme`` in
    ``pyproject.toml``'s ``[project]``, a file or a text) or a ``README.md``,
    ``README.rst``, ``README.txt`` or ``README`` beside that ``pyproject.toml``;
    the long description of the distribution that installed the world's package;
    and a README beside the world's fixtures folder or beside the module that
    declares it (a world in a folder with no project around it).
    """
    module_file = getattr(sys.modules.get(world.module), "__file__", None)
    folder = Path(module_file).resolve().parent if module_file else None
    project = _project_of(folder) if folder is not None else None
    text = _project_readme(project) if project is not None else None
    if text is None:
        text = _distribution_readme(world.module)
    if text is None:
        places = [world.fixtures_dir.parent] if project is None else []
        if project is None and folder is not None:
            places.append(folder)
        text = next(filter(None, (_readme_in(place) for place in places)), None)
    return _bounded(text) if text is not None and text.strip() else None


def _project_of(folder: Path) -> Path | None:
    """The folder holding the ``pyproject.toml`` of the checkout ``folder`` is in, if any."""
    for candidate in (folder, *folder.parents)[:_MAX_PROJECT_DEPTH]:
        if candidate.name in ("site-packages", "dist-packages"):
            return None
        if (candidate / "pyproject.toml").is_file():
            return candidate
    return None


def _project_readme(project: Path) -> str | None:
    """The README a project names in its ``pyproject.toml``, or the one beside it."""
    try:
        table = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        table = {}
    project_table = table.get("project")
    named = project_table.get("readme") if isinstance(project_table, dict) else None
    if isinstance(named, dict):
        if isinstance(named.get("text"), str):
            return str(named["text"])
        named = named.get("file")
    if isinstance(named, str):
        text = _read(project / named)
        if text is not None:
            return text
    return _readme_in(project)


def _readme_in(folder: Path) -> str | None:
    for name in _README_NAMES:
        text = _read(folder / name)
        if text is not None:
            return text
    return None


def _read(path: Path) -> str | None:
    """A README's text, the first ``MAX_README_CHARACTERS`` (and one) of it; ``None`` if none.

    Undecodable bytes are replaced rather than failing the card.
    """
    try:
        if not path.is_file():
            return None
        with path.open(encoding="utf-8", errors="replace") as file:
            return file.read(MAX_README_CHARACTERS + 1)
    except OSError:
        return None


def _distribution_readme(module: str) -> str | None:
    top_level = module.partition(".")[0]
    for name in importlib_metadata.packages_distributions().get(top_level, []):
        try:
            # importlib-metadata 8 types .metadata as possibly None; 9 and later do not.
            found = importlib_metadata.distribution(name).metadata
            if found is None:
                continue
            text = found.json.get("description")
        except importlib_metadata.PackageNotFoundError:
            continue
        if isinstance(text, str) and text.strip():
            return text
    return None


def _bounded(text: str) -> str:
    if len(text) <= MAX_README_CHARACTERS:
        return text
    return (
        text[:MAX_README_CHARACTERS]
        + f"\n\n(The README goes on; the card carries its first {MAX_README_CHARACTERS} "
        "characters.)\n"
    )


def world_card(world: seahaven.World) -> dict[str, Any]:
    """OpenEnv's ``EnvironmentMetadata`` for ``world``."""
    return {
        "name": world.name,
        "description": description(world),
        "readme_content": readme(world),
        "version": world.version,
        "author": None,
        "documentation_url": None,
    }
