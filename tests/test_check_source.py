"""Resolving a call's dotted name through the module's own imports, as the code rules do."""

from __future__ import annotations

import textwrap
from pathlib import Path

from seahaven.check.model import WorldPackage
from seahaven.check.source import SourceModule, parse_package


def parse(tmp_path: Path, files: dict[str, str]) -> dict[str, SourceModule]:
    root = tmp_path / "pkg"
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return {module.name: module for module in parse_package(WorldPackage("pkg", root))}


def resolved_calls(module: SourceModule) -> list[str | None]:
    return [name for _, name in sorted(module.calls(), key=lambda pair: pair[0].lineno)]


def test_one_call_resolves_the_same_however_it_was_imported(tmp_path: Path) -> None:
    modules = parse(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "import datetime\ndatetime.datetime.now()\n",
            "b.py": "from datetime import datetime\ndatetime.now()\n",
            "c.py": "from datetime import datetime as dt\ndt.now()\n",
            "d.py": "import datetime as d\nd.datetime.now()\n",
        },
    )
    for name in ("pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        assert resolved_calls(modules[name]) == ["datetime.datetime.now"]


def test_names_no_import_binds_do_not_resolve(tmp_path: Path) -> None:
    modules = parse(
        tmp_path,
        {
            "__init__.py": "",
            "tool.py": """
                def handler(ctx):
                    ctx.clock.now()
                    ctx.ids.random.choice([1, 2])
                    (lambda: 1)()
            """,
        },
    )
    assert resolved_calls(modules["pkg.tool"]) == [None, None, None]


def test_relative_imports_resolve_against_the_package(tmp_path: Path) -> None:
    modules = parse(
        tmp_path,
        {
            "__init__.py": "from . import helpers\nhelpers.run()\n",
            "helpers.py": "",
            "tools/__init__.py": "from .items import make\nmake()\n",
            "tools/items.py": (
                "from ..helpers import run\nfrom .. import helpers as h\nrun()\nh.run()\n"
            ),
        },
    )
    assert resolved_calls(modules["pkg"]) == ["pkg.helpers.run"]
    assert resolved_calls(modules["pkg.tools"]) == ["pkg.tools.items.make"]
    assert resolved_calls(modules["pkg.tools.items"]) == ["pkg.helpers.run", "pkg.helpers.run"]
    assert modules["pkg.tools.items"].area == "tools"
    assert modules["pkg.helpers"].area is None


def test_a_file_that_does_not_parse_is_left_out(tmp_path: Path) -> None:
    modules = parse(
        tmp_path,
        {"__init__.py": "", "broken.py": "def (:\n", "fine.py": "x = 1\n"},
    )
    assert sorted(modules) == ["pkg", "pkg.fine"]
