"""The public shapes of ``seahaven check``: a ``Finding``, a ``Rule`` and what a rule is given.

A rule is a code, a severity, a default fix and a function from a
``CheckContext`` to findings. The built-in rules and a plugin's are the same
kind of object, registered through the same ``seahaven_lint_rules`` hook.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from seahaven.check.package import WorldPackage
from seahaven.check.schema_db import SchemaDatabase
from seahaven.check.source import SourceModule, parse_package
from seahaven.errors import WorldBug

if TYPE_CHECKING:
    from seahaven.declaration.composition import Composition
    from seahaven.declaration.world import World

__all__ = ["CheckContext", "Finding", "Rule", "Severity", "WorldPackage"]

Severity = Literal["error", "warning"]
"""An ``error`` fails the run (exit 1); a ``warning`` is printed and nothing more."""

_SEVERITIES: tuple[Severity, ...] = ("error", "warning")
_CODE = re.compile(r"[A-Z][A-Z0-9]*[0-9]")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: its code, severity, where it is, what it is, and the edit that removes it.

    ``path`` is absolute while rules run; ``seahaven.check.run`` hands findings
    back with it relative to the project, as they are printed.
    """

    code: str
    severity: Severity
    path: Path
    line: int | None
    message: str
    fix: str

    @property
    def location(self) -> str:
        """``path`` or ``path:line``, with forward slashes."""
        where = self.path.as_posix()
        return f"{where}:{self.line}" if self.line is not None else where

    def sort_key(self) -> tuple[str, str, int]:
        """The printed order: code, then path, then line (no line sorts first)."""
        return (self.code, self.path.as_posix(), self.line or 0)

    def to_dict(self) -> dict[str, Any]:
        """The finding as plain data, for a harness that wants more than the printed line."""
        return {
            "code": self.code,
            "severity": self.severity,
            "path": self.path.as_posix(),
            "line": self.line,
            "message": self.message,
            "fix": self.fix,
        }


@dataclass(frozen=True, slots=True)
class Rule:
    """One lint: a stable code, a severity, a default fix, and the function that finds problems.

    ``check`` receives the ``CheckContext`` and yields findings, normally made
    with ``rule.finding(...)`` so the code, severity and fix stay the rule's.
    A rule whose input is missing (no importable world, no sealed tree) yields
    nothing; the context says which inputs exist.
    """

    code: str
    severity: Severity
    title: str
    fix: str
    check: Callable[[CheckContext], Iterable[Finding]] = field(compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.code, str) or not _CODE.fullmatch(self.code):
            raise WorldBug(
                f"lint rule code {self.code!r} is not a code; spell it like SH101 or ACME001: "
                "capital letters, then digits"
            )
        if self.severity not in _SEVERITIES:
            raise WorldBug(
                f"lint rule {self.code}: severity {self.severity!r} is neither 'error' nor "
                "'warning'; pick one"
            )
        if not isinstance(self.fix, str) or not self.fix.strip():
            raise WorldBug(f"lint rule {self.code}: give it a fix, the edit its findings ask for")
        if not callable(self.check):
            raise WorldBug(f"lint rule {self.code}: check must be a function of the context")

    def finding(
        self, path: Path, line: int | None, message: str, *, fix: str | None = None
    ) -> Finding:
        """A finding of this rule; ``fix`` overrides the default fix for this one finding."""
        return Finding(
            code=self.code,
            severity=self.severity,
            path=path,
            line=line,
            message=message,
            fix=self.fix if fix is None else fix,
        )


@dataclass(eq=False)
class CheckContext:
    """Everything a rule may read. Inputs that could not be had are ``None``.

    ``world`` is ``None`` when the world did not import; ``composition`` is
    ``None`` when it did not seal (``seal_error`` then says why). ``package``
    is ``None`` only when not even the world's code could be located.
    """

    project: Path
    package: WorldPackage | None
    world: World | None
    composition: Composition | None = None
    seal_error: WorldBug | None = None
    # SQLite's message, when importing the world failed because its schema does not execute.
    schema_failure: str | None = None

    @cached_property
    def sources(self) -> list[SourceModule]:
        """Every module of the world's code, parsed; a file that does not parse is left out."""
        return [] if self.package is None else parse_package(self.package)

    @cached_property
    def schema(self) -> SchemaDatabase | None:
        """The world's schema applied to a blank in-memory database, or ``None`` without one."""
        world_schema = self.world.schema if self.world is not None else None
        return SchemaDatabase.build(self.package, world_schema, self.schema_failure)

    def relative(self, path: Path) -> Path:
        """``path`` relative to the project, or unchanged when it lies outside it.

        A link is named as itself, not as its target, so it is tried as written first.
        """
        for candidate in (Path(os.path.normpath(path.absolute())), path.resolve()):
            for project in (self.project, self.project.resolve()):
                if candidate.is_relative_to(project):
                    return candidate.relative_to(project)
        return path
