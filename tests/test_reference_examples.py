"""Conformance: every runnable example in the reference documentation runs against this project.

The examples are read from the reference pages at test time and never copied
into the project. Each ```python block runs in a fresh interpreter, in a
temporary directory of its own. A block is skipped only when it needs something
this checkout cannot give it yet, and the reason says what: the ``projecttracker``
reference world, or a piece of Seahaven that is not built (``seahaven.openenv``,
``seahaven.http``). Both are detected from what the block
uses, so a block starts running by itself the day its piece exists.

``SEAHAVEN_REFERENCE_DIR`` points the test at another copy of the pages.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
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

# The only pieces a block may be skipped for lacking: modules the project builds later.
PENDING_MODULES = ("seahaven.openenv", "seahaven.http")
REFERENCE_WORLD = "projecttracker"
# The pytest plugin's fixtures: a test asking for them needs a world with fixtures on disk,
# and the reference pages' tests are written against the reference world's.
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


def _examples() -> list[Example]:
    if not REFERENCE.is_dir():
        return []
    return [
        Example(page.stem, number, source)
        for page in sorted(REFERENCE.glob("*.md"))
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


# --- what a block uses ---------------------------------------------------------------------------


def _dotted(node: ast.expr) -> str | None:
    """``seahaven.helpers.run_sql`` for the attribute chain that spells it, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _imports_module(tree: ast.Module, root: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            alias.name.split(".")[0] == root for alias in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == root:
            return True
    return False


def _pending_uses(tree: ast.Module) -> dict[str, set[str]]:
    """Each pending module the block uses, with the names it takes from it."""
    used: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in PENDING_MODULES:
                    used.setdefault(alias.name, set())
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module in PENDING_MODULES:
                used.setdefault(node.module, set()).update(alias.name for alias in node.names)
            elif node.module == "seahaven":
                for alias in node.names:
                    if f"seahaven.{alias.name}" in PENDING_MODULES:
                        used.setdefault(f"seahaven.{alias.name}", set())
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            if dotted is None:
                continue
            for module in PENDING_MODULES:
                if dotted == module:
                    used.setdefault(module, set())
                elif dotted.startswith(module + "."):
                    used.setdefault(module, set()).add(dotted[len(module) + 1 :].split(".")[0])
    return used


def _missing(module: str, names: set[str]) -> str | None:
    """What of ``module`` and ``names`` this checkout lacks, or None when all of it is there."""
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    if spec is None:
        return f"{module} ({', '.join(sorted(names))})" if names else module
    loaded = importlib.import_module(module)
    absent = sorted(name for name in names if not hasattr(loaded, name))
    return f"{module} ({', '.join(absent)})" if absent else None


def _test_functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    ]


def _requested_fixtures(tests: list[ast.FunctionDef]) -> set[str]:
    return {argument.arg for test in tests for argument in test.args.args}


def _skip_reason(example: Example, tree: ast.Module) -> str | None:
    """Why this block cannot run in this checkout yet, or None when it can."""
    reference_world_installed = importlib.util.find_spec(REFERENCE_WORLD) is not None
    if _imports_module(tree, REFERENCE_WORLD) and not reference_world_installed:
        return f"needs the {REFERENCE_WORLD} reference world (it imports {REFERENCE_WORLD})"
    wanted = _requested_fixtures(_test_functions(tree)) & PLUGIN_FIXTURES
    if wanted and not reference_world_installed:
        return (
            f"needs the {REFERENCE_WORLD} reference world: its tests ask for the plugin's "
            f"{', '.join(sorted(wanted))} fixture, made from {REFERENCE_WORLD}'s fixtures"
        )
    absent = [
        missing
        for module, names in sorted(_pending_uses(tree).items())
        if (missing := _missing(module, names)) is not None
    ]
    if absent:
        return f"needs {', '.join(absent)}, which is not built yet"
    return None


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
    reason = _skip_reason(example, tree)
    if reason is not None:
        pytest.skip(reason)

    result = _run(example, tree, tmp_path)

    assert result.returncode == 0, (
        f"{example.id} failed (exit {result.returncode})\n"
        f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
    )


# --- the harness itself --------------------------------------------------------------------------


@pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"no reference pages at {REFERENCE}")
def test_every_python_fence_of_every_page_is_collected() -> None:
    for page in sorted(REFERENCE.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        opened = len(re.findall(r"^```python[ \t]*$", text, re.MULTILINE))
        collected = [example for example in EXAMPLES if example.page == page.stem]
        assert len(collected) == opened, f"{page.name}: {opened} fences, {len(collected)} read"


def test_a_block_is_skipped_only_for_the_reference_world_or_a_pending_module() -> None:
    def reason(source: str) -> str | None:
        return _skip_reason(Example("probe", 0, source), ast.parse(source))

    assert reason("import seahaven\nseahaven.World\n") is None
    assert reason("import seahaven\nseahaven.sandbox.run_statement\n") is None
    assert reason("from seahaven.fixtures import load\n") is None
    if importlib.util.find_spec(REFERENCE_WORLD) is None:
        assert "projecttracker" in str(reason("import projecttracker\n"))
        assert "instance fixture" in str(reason("def test_it(instance):\n    pass\n"))
    assert reason("def test_it(tmp_path):\n    pass\n") is None
    for module in PENDING_MODULES:
        name = module.split(".")[1]
        sources = [
            f"import seahaven\nseahaven.{name}.no_such_name_yet\n",
            f"from seahaven.{name} import no_such_name_yet\n",
        ]
        for source in sources:
            assert f"needs {module} (no_such_name_yet)" in str(reason(source))
