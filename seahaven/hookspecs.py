"""Every hook a Seahaven plugin can implement, each documented where it is declared.

A plugin is a module or object with functions marked ``@seahaven.hookimpl``,
published under the ``seahaven.plugins`` entry-point group. The framework's own
implementations are registered the same way (see ``seahaven.plugins``). Hooks
are added only when something real uses them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import typer

__all__ = ["hookimpl", "hookspec"]

hookspec = pluggy.HookspecMarker("seahaven")
hookimpl = pluggy.HookimplMarker("seahaven")


@hookspec
def seahaven_worlds() -> Iterable[tuple[str, str]]:
    """Worlds this plugin provides, as ``(name, "module:attr")`` pairs.

    For a world that cannot publish its own ``seahaven.worlds`` entry point, such
    as one generated at run time. The registry lists these beside the
    entry-point worlds, and a name claimed twice is an error naming both.
    """
    return ()


@hookspec
def seahaven_cli(app: typer.Typer) -> None:
    """Add commands to the ``seahaven`` command line: call ``app.command()`` or ``add_typer``."""


@hookspec
def seahaven_lint_rules() -> Iterable[Any]:
    """Extra ``seahaven check`` rules, each a ``seahaven.check.Rule``.

    Lets an organisation hold its worlds to rules of its own without forking
    the framework. Every finding a rule yields is printed and counted like a
    built-in one.
    """
    return ()
