"""Every hook a Seahaven plugin can implement, each documented where it is declared.

A plugin is a module or object with functions marked ``@seahaven.hookimpl``,
published under the ``seahaven.plugins`` entry-point group::

    [project.entry-points."seahaven.plugins"]
    acme = "acme_seahaven.plugin"

The framework's own implementations are registered the same way (see
``seahaven.plugins.DEFAULT_PLUGINS``). Hooks are added only when something
real uses them: ``seahaven_worlds`` feeds the registry, ``seahaven_cli`` builds
the command line, ``seahaven_lint_rules`` feeds ``seahaven check``, and
``seahaven_episode_file_runner`` runs a file of episodes elsewhere (``--ray``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import typer

    from seahaven.episodes.model import EpisodeResult

__all__ = ["EpisodeFileRunner", "hookimpl", "hookspec"]

EpisodeFileRunner = Callable[..., Iterator["EpisodeResult"]]
"""``runner(episodes, *, workers, instances_per_worker, max_attempts, episode_timeout)``.

It yields one ``EpisodeResult`` for each ``Episode`` it is given, as each
finishes, and is closed (``.close()`` on the generator) when the run is
interrupted; ``workers`` may be ``None`` (the runner's own default) and
``episode_timeout`` ``None`` (no limit).
"""

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


@hookspec(firstresult=True)
def seahaven_episode_file_runner(address: str) -> EpisodeFileRunner | None:
    """The runner ``seahaven episodes run --ray ADDRESS`` hands its episodes to, or ``None``.

    ``address`` is what ``--ray`` was given (``local``, ``auto``, a cluster
    address). The first plugin that returns a runner (an ``EpisodeFileRunner``)
    runs the file; the command has already checked the file, the world and its
    fixtures, and it writes each result as the runner yields it. A plugin that
    cannot run there (its own dependency missing) returns ``None``, and with no
    runner the command fails naming the extra to install. Called once a run.
    """
    return None
