"""Conformance: every runnable example of every page of the API contract runs against this project.

The examples are read from the reference pages (``reference/*.md`` included) at test time and
never copied into the project. Each ```python block runs in a fresh interpreter, in a temporary
directory of its own; a block that defines ``test_`` functions runs under pytest, and one whose
tests ask for the plugin's ``world`` or ``instance`` fixture runs against the reference world,
``projecttracker``, which ships as ``worlds/projecttracker``.

Nothing is skipped: every piece an example needs is built, so an example that fails here is a
difference from the contract. Should one ever be unable to run as written on purpose, the
reason belongs in ``docs/decisions.md`` and beside its id here, marked as an expected failure.

``SEAHAVEN_REFERENCE_DIR`` points the test at another copy of the pages.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REFERENCE_ENV = "SEAHAVEN_REFERENCE_DIR"
DEFAULT_REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "seahaven-0.6"
REFERENCE = Path(os.environ.get(REFERENCE_ENV) or DEFAULT_REFERENCE)

REFERENCE_WORLD = "projecttracker"
# The pytest plugin's fixtures: the reference pages' tests that ask for them are written
# against the reference world and its fixtures.
PLUGIN_FIXTURES = frozenset({"instance", "world"})
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
TIMEOUT_SECONDS = 120


@dataclass(frozen=True)
class Example:
    """One ```python block of one reference page."""

    page: str
    number: int
    source: str

    @property
    def id(self) -> str:
        """``<page>[<n>]``, counting the page's python blocks from 0."""
        return f"{self.page}[{self.number}]"


def _pages() -> list[Path]:
    return sorted(REFERENCE.rglob("*.md")) if REFERENCE.is_dir() else []


def _examples() -> list[Example]:
    return [
        Example(page.relative_to(REFERENCE).with_suffix("").as_posix(), number, source)
        for page in _pages()
        for number, source in enumerate(FENCE.findall(page.read_text(encoding="utf-8")))
    ]


EXAMPLES = _examples()


def _params() -> list[object]:
    if not EXAMPLES:
        return [
            pytest.param(
                None,
                id="no-reference",
                marks=pytest.mark.skip(reason=f"no reference pages at {REFERENCE}"),
            )
        ]
    return [pytest.param(example, id=example.id) for example in EXAMPLES]


def _test_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    ]


def _requested_fixtures(tests: list[ast.FunctionDef]) -> set[str]:
    return {argument.arg for test in tests for argument in test.args.args}


# --- running a block -----------------------------------------------------------------------------


def _environment() -> dict[str, str]:
    environment = dict(os.environ)
    # The block runs as a user would run it: no options of this session leak in.
    environment.pop("PYTEST_ADDOPTS", None)
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    return environment


def _run(example: Example, tree: ast.Module, directory: Path) -> subprocess.CompletedProcess[str]:
    tests = _test_functions(tree)
    if tests:
        script = directory / "test_example.py"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", script.name]
        if _requested_fixtures(tests) & PLUGIN_FIXTURES:
            command += ["--seahaven-world", f"{REFERENCE_WORLD}:world"]
    else:
        script = directory / "example.py"
        command = [sys.executable, script.name]
    script.write_text(example.source, encoding="utf-8")
    return subprocess.run(
        command,
        cwd=directory,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
    )


@pytest.mark.parametrize("example", _params())
def test_reference_example(example: Example, tmp_path: Path) -> None:
    tree = ast.parse(example.source, filename=example.id)

    result = _run(example, tree, tmp_path)

    output = f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
    assert result.returncode == 0, f"{example.id} failed (exit {result.returncode})\n{output}"
    if _test_functions(tree):
        # Every test of the block ran and passed: none was skipped on the way.
        summary = result.stdout.strip().splitlines()[-1]
        assert re.fullmatch(rf"{len(_test_functions(tree))} passed in .*", summary), output


# --- the harness itself --------------------------------------------------------------------------


@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"no reference pages at {REFERENCE}")
def test_every_python_fence_of_every_page_is_collected() -> None:
    pages = _pages()
    # The contract's own reference section (api, cli, lints) is read as well as the guides.
    assert any(page.parent != REFERENCE for page in pages)
    for page in pages:
        text = page.read_text(encoding="utf-8")
        opened = len(re.findall(r"^```python[ \t]*$", text, re.MULTILINE))
        name = page.relative_to(REFERENCE).with_suffix("").as_posix()
        collected = [example for example in EXAMPLES if example.page == name]
        assert len(collected) == opened, f"{page.name}: {opened} fences, {len(collected)} read"


@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"no reference pages at {REFERENCE}")
def test_the_plugins_tests_run_against_the_reference_world(tmp_path: Path) -> None:
    # A test that asks for the plugin's fixtures is pointed at projecttracker, so a failure of
    # such an example is the example's, never a world the plugin could not find.
    probe = Example("probe", 0, "def test_it(world):\n    assert world.name == 'projecttracker'\n")
    result = _run(probe, ast.parse(probe.source), tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
