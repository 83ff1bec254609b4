"""Module paths that moved keep working for one release, warning with the new path."""

from __future__ import annotations

import subprocess
import sys

import pytest

from seahaven.moved import MOVED


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
    shims = {root / "seahaven" / (old.rsplit(".", 1)[1] + ".py") for old in MOVED}
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
                f"{path.relative_to(root)}:{node.lineno} {name}" for name in names if name in MOVED
            ]
    assert found == []
