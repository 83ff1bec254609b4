"""Reading a world's Python for the code rules: parsed modules, with names resolved by import.

Each call's dotted name is looked up in the imports of the module it sits in, so
``datetime.now()`` after ``from datetime import datetime`` and
``dt.now()`` after ``from datetime import datetime as dt`` both read as
``datetime.datetime.now``. Imports are collected from the whole module,
wherever they sit; that is coarser than Python's scoping and is what a lint
can afford.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from seahaven.check.package import WorldPackage

__all__ = ["SourceModule", "parse_package"]


@dataclass(frozen=True, slots=True)
class SourceModule:
    """One module of the world's code."""

    path: Path
    # The dotted module name, such as ``notes.tools.items``.
    name: str
    is_package: bool
    tree: ast.Module
    # The first directory under the world's package the file sits in (``tools``), if any.
    area: str | None
    # Local name -> the dotted name it was imported as.
    aliases: dict[str, str]

    def resolve(self, node: ast.expr) -> str | None:
        """The dotted name an expression such as ``dt.now`` stands for, if an import binds it."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def calls(self) -> list[tuple[ast.Call, str | None]]:
        """Every call in the module, with the dotted name its callee resolves to."""
        return [
            (node, self.resolve(node.func))
            for node in ast.walk(self.tree)
            if isinstance(node, ast.Call)
        ]


def parse_package(package: WorldPackage) -> list[SourceModule]:
    """Parse every Python file of the world's code; one that does not parse is skipped.

    A file with a syntax error fails the import, which SH501 reports with its line.
    """
    modules = []
    for path in package.python_files():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError, OSError, ValueError):
            continue
        name = package.module_name(path)
        is_package = path.name == "__init__.py"
        modules.append(
            SourceModule(
                path=path,
                name=name,
                is_package=is_package,
                tree=tree,
                area=package.subdirectory(path),
                aliases=_aliases(tree, name, is_package),
            )
        )
    return modules


def _aliases(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is not None:
                    aliases[alias.asname] = alias.name
                else:
                    # ``import a.b`` binds ``a``.
                    head = alias.name.split(".", 1)[0]
                    aliases[head] = head
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(node, module, is_package)
            if source is None:
                continue
            for alias in node.names:
                if alias.name == "*":
                    continue
                aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
    return aliases


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str | None:
    """The module a ``from ... import`` reads from, with a relative one made absolute."""
    if node.level == 0:
        return node.module
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".") if package else []
    climb = node.level - 1
    if climb > len(parts):
        return None
    base = parts[: len(parts) - climb]
    if node.module:
        base.append(node.module)
    return ".".join(base) or None
