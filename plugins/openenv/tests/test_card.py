"""Where the card's README comes from: a checkout's own file, or an installed wheel's metadata."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from seahaven_openenv import card

WORLD_MODULE = """
import seahaven

world = seahaven.World(name="{name}", version="1.0.0", schema="", state_format="seahaven.state/1")
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory on sys.path laid out like site-packages."""
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


def load(name: str) -> object:
    importlib.invalidate_caches()
    sys.modules.pop(name, None)
    return importlib.import_module(name).world  # type: ignore[attr-defined]


def test_an_installed_world_publishes_its_distributions_long_description(site: Path) -> None:
    package = site / "lanternworld"
    package.mkdir()
    (package / "__init__.py").write_text(WORLD_MODULE.format(name="lantern"))
    info = site / "lanternworld-1.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: lanternworld\nVersion: 1.0.0\n\n# Lantern\n\nThe card.\n"
    )
    (info / "top_level.txt").write_text("lanternworld\n")
    world = load("lanternworld")
    assert card.readme(world) == "# Lantern\n\nThe card.\n"  # type: ignore[arg-type]


def test_a_checkout_publishes_the_readme_beside_pyproject(tmp_path: Path, monkeypatch) -> None:
    project = tmp_path / "project"
    (project / "src" / "wickworld").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "wickworld"\n')
    (project / "README.md").write_text("# Wick\n")
    (project / "src" / "wickworld" / "__init__.py").write_text(WORLD_MODULE.format(name="wick"))
    monkeypatch.syspath_prepend(str(project / "src"))
    assert card.readme(load("wickworld")) == "# Wick\n"  # type: ignore[arg-type]


def test_no_readme_anywhere_publishes_none(site: Path) -> None:
    package = site / "bareworld"
    package.mkdir()
    (package / "__init__.py").write_text(WORLD_MODULE.format(name="bare"))
    assert card.readme(load("bareworld")) is None  # type: ignore[arg-type]
