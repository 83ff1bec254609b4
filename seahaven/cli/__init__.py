"""The ``seahaven`` command line: the app, and ``main``.

The app itself holds only ``--version``: every command, the framework's own
included, is added by a plugin through the ``seahaven_cli`` hook. The
framework's are this package's modules, one per command group (``worlds``,
``fixture``, ``docs``, ``episodes``; ``check`` is ``seahaven.check.plugin``),
listed in ``seahaven.plugins.DEFAULT_PLUGINS``. What every command shares,
the session and failure reporting, is ``seahaven.cli.support``, which is
also the import path for a plugin's own commands.

``main(argv)`` is the whole command. A failure is one line on stderr and exit
status 1, a usage error exits 2, and no traceback is ever printed.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from seahaven.cli.support import EXIT_READER_GONE, CliSession, fail, one_line, stop_writing
from seahaven.registry.discovery import find_world
from seahaven.registry.extras import EXTRAS, Extra
from seahaven.registry.plugins import PluginManager, plugin_manager
from seahaven.version import VERSION

__all__ = ["build_app", "find_world", "main"]

PROG_NAME = "seahaven"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"seahaven {VERSION}")
        raise typer.Exit()


def build_app(manager: PluginManager | None = None) -> typer.Typer:
    """The command line, with every command the plugins of ``manager`` add.

    ``manager`` defaults to the process's plugin manager; tests pass a fresh one.
    """
    manager = plugin_manager() if manager is None else manager
    cli_session = CliSession(manager)
    app = typer.Typer(
        name=PROG_NAME,
        cls=_ListedInOrder,
        help="Synthetic worlds for agent evals: find, inspect and build fixtures of worlds.",
        no_args_is_help=True,
        add_completion=False,
        # Plain output: the same text on a terminal, in a pipe and in a test.
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        # Every command and group below inherits -h beside --help from this context.
        context_settings={"obj": cli_session, "help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        version: Annotated[
            bool,
            typer.Option(
                "--version",
                help="Print the installed seahaven's version and exit.",
                callback=_print_version,
                is_eager=True,
            ),
        ] = False,
    ) -> None:
        """Synthetic worlds for agent evals: find, inspect and build fixtures of worlds."""
        for problem in manager.load_problems:
            typer.echo(f"warning: {one_line(problem)}", err=True)

    manager.hook.seahaven_cli(app=app)
    _name_missing_plugins(app)
    _whole_summaries(app)
    return app


# The order the help lists commands in: trying a world, serving it, scaling it out, grading
# it, then building one. A plugin's own commands follow, by name.
COMMAND_ORDER = (
    "worlds",
    "episode",
    "serve",
    "mcp",
    "episodes",
    "scenarios",
    "eval",
    "report",
    "new",
    "check",
    "fixture",
    "hub",
    "docs",
)


class _ListedInOrder(TyperGroup):
    """The root group: its commands listed in ``COMMAND_ORDER``, whatever order they came in."""

    def list_commands(self, ctx: Any) -> list[str]:
        """Every command's name, the built-in order first and the rest by name."""
        known = {name: place for place, name in enumerate(COMMAND_ORDER)}
        return sorted(self.commands, key=lambda name: (known.get(name, len(known)), name))


def _whole_summaries(app: typer.Typer) -> None:
    """Give each command and group, at any depth, its whole first paragraph as its summary.

    Click cuts a summary it makes itself at 45 characters and ends it with
    ``...``; one it is given is printed whole, wrapped to the terminal.
    """
    # Typer marks what was not given with placeholder objects, so "given" means a string.
    for command in app.registered_commands:
        if not isinstance(command.short_help, str):
            given = command.help if isinstance(command.help, str) else None
            command.short_help = _first_paragraph(given or command.callback)
    for group in app.registered_groups:
        instance = group.typer_instance
        if instance is None:
            continue
        if not isinstance(group.short_help, str):
            info = instance.info
            given = next(
                (text for text in (group.help, info.help) if isinstance(text, str) and text), None
            )
            group.short_help = _first_paragraph(given or info.callback)
        _whole_summaries(instance)


def _first_paragraph(source: object) -> str | None:
    """The first paragraph of a help text or a function's docstring, on one line."""
    text = source if isinstance(source, str) else inspect.getdoc(source)
    if not text:
        return None
    return one_line(inspect.cleandoc(text).split("\n\n", 1)[0])


def _name_missing_plugins(app: typer.Typer) -> None:
    """Answer a first-party plugin's command, when the plugin is not installed, with its install."""
    present = {_listed_name(info) for info in (*app.registered_commands, *app.registered_groups)}
    for extra in EXTRAS.values():
        for name in extra.commands:
            if name not in present:
                _add_missing_plugin_command(app, name, extra)


def _add_missing_plugin_command(app: typer.Typer, name: str, extra: Extra) -> None:
    if importlib.util.find_spec(extra.package.partition(".")[0]) is None:
        message = (
            f"seahaven {name} comes with the {extra.distribution} plugin, which is not installed; "
            f"install it with: {extra.install_command}"
        )
    else:
        message = (
            f"seahaven {name} comes with the {extra.distribution} plugin, and the one installed "
            f"does not add it (or failed to load: see the warning above); upgrade it with: "
            f"{extra.install_command.replace('pip install', 'pip install --upgrade')}"
        )

    @app.command(
        name,
        help=f"Not installed: {extra.install_command} adds it.",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def missing(ctx: typer.Context) -> None:
        fail(message)


def _listed_name(info: object) -> str:
    """The name a command or group is listed under, for sorting the help."""
    name = getattr(info, "name", None)
    if isinstance(name, str):
        return name
    typer_instance = getattr(info, "typer_instance", None)
    name = getattr(getattr(typer_instance, "info", None), "name", None)
    if isinstance(name, str):
        return name
    return str(getattr(getattr(info, "callback", None), "__name__", ""))


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``seahaven`` with ``argv`` (default: the process's arguments); return the exit status."""
    try:
        command = typer.main.get_command(build_app())
        command.main(
            args=list(argv) if argv is not None else None,
            prog_name=PROG_NAME,
            standalone_mode=True,
        )
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        typer.echo(f"error: {one_line(str(exit_.code))}", err=True)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # Outside a command's body (click writing the help into a closed pipe, say).
        stop_writing()
        return EXIT_READER_GONE
    except Exception as error:
        # Building the app failed (a default plugin, say): still one line.
        typer.echo(
            f"error: {one_line(f'{type(error).__name__}: {error}')}; this is a bug in seahaven "
            "or in a plugin, please report it with the command you ran",
            err=True,
        )
        return 1
    return 0
