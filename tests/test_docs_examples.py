"""Every runnable example in the project's own docs runs, exactly as printed.

A ```python block in ``docs/**/*.md`` is a promise to the reader that pasting it
into a file and running it works. Each block runs here in a fresh interpreter,
in an empty directory of its own, and fails the test with its output when it
exits non-zero. A fragment that is not meant to run is fenced ```py instead.

The world pages may import an installed world (``payments_world``, ``chat_world``,
``company_world``, ``projecttracker``, ``airline_world``, ``retail_world``, ``telecom_world``); a
block whose world is not installed is skipped, and the reason names the package. Nothing else is
a reason to skip.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
WORLD_PACKAGES = frozenset(
    {
        "payments_world",
        "chat_world",
        "company_world",
        "projecttracker",
        "airline_world",
        "retail_world",
        "telecom_world",
    }
)
TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Block:
    """One ```python block: the page it is on (relative to docs/, no suffix) and its position."""

    page: str
    number: int
    source: str

    @property
    def id(self) -> str:
        """``<page>[<n>]``, counting the page's python blocks from 0."""
        return f"{self.page}[{self.number}]"


def collect() -> list[Block]:
    """Every python block of every page under ``docs/``, in page then document order."""
    blocks = []
    for page in sorted(DOCS.rglob("*.md")):
        name = page.relative_to(DOCS).with_suffix("").as_posix()
        text = page.read_text(encoding="utf-8")
        blocks.extend(
            Block(name, number, source) for number, source in enumerate(FENCE.findall(text))
        )
    return blocks


def imported_roots(source: str) -> set[str]:
    """The top-level package of every absolute import in ``source``."""
    roots: set[str] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return roots  # the interpreter reports it, with the line, when the block runs
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def missing_worlds(source: str) -> list[str]:
    """The world packages ``source`` imports that this environment does not have."""
    wanted = imported_roots(source) & WORLD_PACKAGES
    return sorted(name for name in wanted if importlib.util.find_spec(name) is None)


BLOCKS = collect()


def test_the_docs_have_runnable_examples() -> None:
    assert BLOCKS, f"no ```python blocks found under {DOCS}"


@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_example_runs(block: Block, tmp_path: Path) -> None:
    missing = missing_worlds(block.source)
    if missing:
        pytest.skip(f"{block.id} imports {', '.join(missing)}, which is not installed")
    # The script sits beside the working directory, not in it, so the block starts
    # in a directory that is empty.
    script = tmp_path / "example.py"
    script.write_text(block.source, encoding="utf-8")
    workdir = tmp_path / "work"
    workdir.mkdir()
    finished = subprocess.run(
        [sys.executable, str(script)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    if finished.returncode != 0:
        pytest.fail(
            f"{block.id} exited {finished.returncode}\n"
            f"--- stdout\n{finished.stdout}--- stderr\n{finished.stderr}",
            pytrace=False,
        )
