"""What ``GET /metadata`` publishes: the world's name, version, one-line description and README.

The README is the card a hub shows. In a checkout it is the ``README.md``
beside the ``pyproject.toml`` of the project that declares the world; in an
installed world, which has no project directory, it is the long description
the distribution was built with (the same file, carried in the wheel's
metadata).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import importlib_metadata

import seahaven

__all__ = ["description", "readme", "world_card"]

# How far above the world's module to look for its project's pyproject.toml.
_MAX_PROJECT_DEPTH = 6


def description(world: seahaven.World) -> str:
    """``World(description=...)``, or a fallback naming the world when it is blank."""
    text = world.description
    if text is None or not text.strip():
        return f"Seahaven world {world.name}"
    return text


def readme(world: seahaven.World) -> str | None:
    """The world's README: the project's file in a checkout, else the distribution's."""
    module = sys.modules.get(world.module)
    module_file = getattr(module, "__file__", None)
    if module_file:
        folder = Path(module_file).resolve().parent
        for candidate in (folder, *folder.parents)[:_MAX_PROJECT_DEPTH]:
            if candidate.name in ("site-packages", "dist-packages"):
                break
            if (candidate / "pyproject.toml").is_file():
                path = candidate / "README.md"
                return path.read_text(encoding="utf-8") if path.is_file() else None
    top_level = world.module.partition(".")[0]
    for name in importlib_metadata.packages_distributions().get(top_level, []):
        try:
            text = importlib_metadata.distribution(name).metadata.json.get("description")
        except importlib_metadata.PackageNotFoundError:
            continue
        if isinstance(text, str) and text.strip():
            return text
    return None


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
