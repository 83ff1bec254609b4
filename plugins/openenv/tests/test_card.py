"""Where the card's README comes from: a checkout's own file, or an installed wheel's metadata."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from seahaven_openenv.web import card

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


def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, pyproject: str) -> Path:
    """A project in a checkout declaring the world ``name`` in ``src/<name>world``."""
    project = tmp_path / name
    (project / "src" / f"{name}world").mkdir(parents=True)
    (project / "pyproject.toml").write_text(pyproject)
    (project / "src" / f"{name}world" / "__init__.py").write_text(WORLD_MODULE.format(name=name))
    monkeypatch.syspath_prepend(str(project / "src"))
    return project


def test_a_checkout_publishes_the_readme_its_pyproject_names(tmp_path: Path, monkeypatch) -> None:
    project = checkout(
        tmp_path, monkeypatch, "quay", '[project]\nname = "quay"\nreadme = "docs/about.rst"\n'
    )
    (project / "docs").mkdir()
    (project / "docs" / "about.rst").write_text("Quay\n====\n")
    (project / "README.md").write_text("# not this one\n")
    assert card.readme(load("quayworld")) == "Quay\n====\n"  # type: ignore[arg-type]


def test_a_checkout_publishes_a_readme_given_as_text(tmp_path: Path, monkeypatch) -> None:
    checkout(
        tmp_path,
        monkeypatch,
        "mole",
        '[project]\nname = "mole"\nreadme = {text = "The mole.", content-type = "text/plain"}\n',
    )
    assert card.readme(load("moleworld")) == "The mole."  # type: ignore[arg-type]


def test_a_checkout_with_a_readme_of_another_name_publishes_it(tmp_path: Path, monkeypatch) -> None:
    project = checkout(tmp_path, monkeypatch, "buoy", '[project]\nname = "buoy"\n')
    (project / "README.rst").write_text("Buoy\n")
    assert card.readme(load("buoyworld")) == "Buoy\n"  # type: ignore[arg-type]


def test_a_world_in_a_plain_folder_publishes_the_readme_beside_it(
    tmp_path: Path, monkeypatch
) -> None:
    # No project around it: the folder the world's module and its fixtures live in.
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "skiffapp.py").write_text(WORLD_MODULE.format(name="skiff"))
    (folder / "README.md").write_text("# Skiff\n")
    monkeypatch.syspath_prepend(str(folder))
    assert card.readme(load("skiffapp")) == "# Skiff\n"  # type: ignore[arg-type]


def test_a_huge_readme_is_cut_saying_so(tmp_path: Path, monkeypatch) -> None:
    project = checkout(tmp_path, monkeypatch, "dune", '[project]\nname = "dune"\n')
    (project / "README.md").write_text("sand " * 1_000_000)
    text = card.readme(load("duneworld"))  # type: ignore[arg-type]
    assert text is not None and text.startswith("sand sand")
    assert card.MAX_README_CHARACTERS < len(text) < card.MAX_README_CHARACTERS + 200
    assert text.rstrip().endswith("characters.)")


def test_a_readme_that_is_not_utf8_is_published_with_replacements(
    tmp_path: Path, monkeypatch
) -> None:
    project = checkout(tmp_path, monkeypatch, "reef", '[project]\nname = "reef"\n')
    (project / "README.md").write_bytes(b"# Reef \xff\n")
    assert card.readme(load("reefworld")) == "# Reef \ufffd\n"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("module", "folder"),
    [
        ("company_world", "company"),
        ("payments_world", "payments"),
        ("chat_world", "chat"),
        ("projecttracker", "projecttracker"),
    ],
)
def test_every_shipped_world_publishes_its_readme(module: str, folder: str) -> None:
    world = importlib.import_module(module).world
    readme = Path(__file__).resolve().parents[3] / "worlds" / folder / "README.md"
    assert card.world_card(world)["readme_content"] == readme.read_text(encoding="utf-8")
