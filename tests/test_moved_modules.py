"""Module paths that moved keep working for one release, warning with the new path."""

from __future__ import annotations

import subprocess
import sys

import pytest

from seahaven.moved import MOVED, SPLIT


def run(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter, so that no module is imported yet."""
    return subprocess.run(
        [sys.executable, "-W", "always::DeprecationWarning", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_importing_an_old_path_warns_and_gives_the_new_module(old: str, new: str) -> None:
    ran = run(f"import {old} as o, {new} as n, sys; print(o is n, sys.modules[{old!r}] is n)")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["True", "True"]
    assert ran.stderr.count("DeprecationWarning") == 1
    assert f"{old} is now {new}" in ran.stderr
    # The warning points at the line that imported the old path, not at the framework.
    assert ran.stderr.startswith("<string>:1: DeprecationWarning")


def test_the_old_names_read_off_the_package_warn_once_and_are_the_new_modules() -> None:
    ran = run(
        "import seahaven\n"
        "first = seahaven.helpers\n"
        "again = seahaven.helpers\n"
        "print(first is again is seahaven.sql_tools, seahaven.instances is seahaven.concurrency)\n"
        "from seahaven.instances import set_concurrency\n"
        "print(set_concurrency is seahaven.concurrency.set_concurrency)\n"
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["True", "True", "True"]
    assert ran.stderr.count("seahaven.helpers is now seahaven.sql_tools") == 1
    assert ran.stderr.count("seahaven.instances is now seahaven.concurrency") == 1


def test_importing_seahaven_itself_warns_about_nothing() -> None:
    ran = run("import seahaven, seahaven.sql_tools, seahaven.concurrency")
    assert ran.returncode == 0
    assert ran.stderr == ""


def test_an_unknown_attribute_of_the_package_is_still_an_attribute_error() -> None:
    import seahaven

    with pytest.raises(AttributeError, match="no attribute 'helperz'"):
        _ = seahaven.helperz  # type: ignore[attr-defined]


def test_no_shipped_code_imports_an_old_path() -> None:
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    sources = [
        *root.joinpath("seahaven").rglob("*.py"),
        *root.glob("plugins/*/src/**/*.py"),
        *root.glob("worlds/*/src/**/*.py"),
        *root.glob("examples/*/src/**/*.py"),
    ]
    old_paths = {*MOVED, *SPLIT}
    shims = {root / "seahaven" / (old.rsplit(".", 1)[1] + ".py") for old in old_paths}
    found = []
    for path in sources:
        if path in shims:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            found += [
                f"{path.relative_to(root)}:{node.lineno} {name}"
                for name in names
                if name in old_paths
            ]
    assert found == []


# What seahaven.fixture_store exported before it was split.
FIXTURE_STORE_NAMES = [
    "COMPANION_SUFFIXES",
    "SIDECAR",
    "Fixture",
    "FixtureNode",
    "FixtureWriter",
    "PreparedFixture",
    "Sidecar",
    "SidecarNode",
    "copy_state_file",
    "file_schema_hash",
    "fixture_directory",
    "fixture_ids",
    "load",
    "load_all",
    "other_worlds_fixtures",
    "prepare",
    "refuse_journal",
    "refuse_links",
    "remove_stale_pending",
    "schema_problems",
    "shape_problems",
    "shared_directory_note",
    "sync_to_disk",
    "verify",
    "verify_file",
    "world_fixtures",
]


@pytest.mark.parametrize(("old", "new"), sorted(SPLIT.items()))
def test_importing_a_split_path_warns_and_gives_the_names_of_its_new_modules(
    old: str, new: tuple[str, ...]
) -> None:
    ran = run(
        "import importlib, sys\n"
        f"old = importlib.import_module({old!r})\n"
        f"parts = [importlib.import_module(name) for name in {list(new)!r}]\n"
        "homes = {name: part for part in parts for name in part.__all__}\n"
        "print(sorted(old.__all__) == sorted(homes))\n"
        "print(all(getattr(old, name) is getattr(homes[name], name) for name in old.__all__))\n"
        "print(' '.join(old.__all__))\n"
    )
    assert ran.returncode == 0, ran.stderr
    same_names, same_objects, names = ran.stdout.splitlines()
    assert (same_names, same_objects) == ("True", "True")
    if old == "seahaven.fixture_store":
        assert set(FIXTURE_STORE_NAMES) <= set(names.split())
    assert ran.stderr.count("DeprecationWarning") == 1
    assert f"{old} is split into {', '.join(new)}" in ran.stderr


def test_names_imported_from_the_split_fixture_store_are_the_new_objects() -> None:
    ran = run(
        "from seahaven.fixture_store import FixtureWriter, Sidecar, prepare, verify\n"
        "from seahaven.fixtures import preparation, sidecar, verification, writing\n"
        "print(FixtureWriter is writing.FixtureWriter, Sidecar is sidecar.Sidecar,\n"
        "      prepare is preparation.prepare, verify is verification.verify)\n"
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["True"] * 4
    assert ran.stderr.startswith("<string>:1: DeprecationWarning")


def test_the_old_fixture_modules_read_off_the_package_warn_and_give_the_new_ones() -> None:
    ran = run(
        "import seahaven\n"
        "import seahaven.fixtures.freezing as freezing, seahaven.fixtures.location as location\n"
        "from seahaven.fixtures import sidecar\n"
        "print(seahaven.freezing is freezing, seahaven.fixtures_dir is location)\n"
        "print(seahaven.fixture_store.Sidecar is sidecar.Sidecar)\n"
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["True", "True", "True"]
    assert ran.stderr.count("seahaven.freezing is now seahaven.fixtures.freezing") == 1
    assert ran.stderr.count("seahaven.fixtures_dir is now seahaven.fixtures.location") == 1
    assert ran.stderr.count("seahaven.fixture_store is split into") == 1
