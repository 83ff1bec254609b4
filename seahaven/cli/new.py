"""``seahaven new``: scaffold a world distribution (the work is ``seahaven.scaffold``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from seahaven.cli.support import failures
from seahaven.registry.hookspecs import hookimpl

__all__ = ["new", "seahaven_cli"]


def new(
    name: Annotated[
        str,
        typer.Argument(
            metavar="NAME",
            help="The world's name; its package is the name in lower case with '-' as '_'.",
            show_default=False,
        ),
    ],
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            metavar="PATH",
            help="The directory to create the world in (default: the current directory).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Scaffold a world: a package with a table, two tools, a test, a generator and a server app."""
    from seahaven.cli.scaffold import name_problem, render

    # A name spelled so that it cannot be a world is the command line's fault (exit 2); one
    # this machine cannot take (it would shadow a module, its directory exists) is exit 1.
    problem = name_problem(name)
    if problem is not None:
        raise typer.BadParameter(problem, param_hint="NAME")
    with failures():
        made = render(name, directory)
        for line in made.next_steps():
            typer.echo(line)


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven new``."""
    app.command("new")(new)
