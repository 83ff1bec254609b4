"""Every hook a Seahaven plugin can implement, each documented where it is declared.

A plugin is a module or object with functions marked ``@seahaven.hookimpl``,
published under the ``seahaven.plugins`` entry-point group::

    [project.entry-points."seahaven.plugins"]
    acme = "acme_seahaven.plugin"

The framework's own implementations are registered the same way (see
``seahaven.plugins.DEFAULT_PLUGINS``). Hooks are added only when something
real uses them: ``seahaven_worlds`` feeds the registry, ``seahaven_cli`` builds
the command line, and ``seahaven_lint_rules`` feeds ``seahaven check``.
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
    entry-point worlds, and a name claimed twice (by two plugins, or by a plugin
    and an entry point) is an error naming both. Return names only: the module
    is imported when the world is first loaded, so keep this hook cheap. Each
    plugin's implementation is called on its own, so one that raises is
    reported without hiding the worlds of any other.
    """
    return ()


@hookspec
def seahaven_cli(app: typer.Typer) -> None:
    """Add commands to the ``seahaven`` command line: call ``app.command()`` or ``add_typer``.

    Called once each time the app is built, before it parses any argument. The
    framework's own commands (``worlds``, ``fixture``, ``docs``, ``check``) are
    added through this hook too, so a plugin's command sits beside them. A
    command should run its body inside ``seahaven.cli.support.failures()`` so an
    error is one line on stderr and exit status 1, like every other command;
    ``seahaven.cli.support`` is the one import path for the helpers every
    command shares (``session``, ``failures``, ``fail``, ``Progress``, ...).
    """


@hookspec
def seahaven_lint_rules() -> Iterable[Any]:
    """Extra ``seahaven check`` rules, each a ``seahaven.check.Rule``.

    Lets an organisation hold its worlds to rules of its own without forking
    the framework. Every finding a rule yields is printed and counted like a
    built-in one.
    """
    return ()
