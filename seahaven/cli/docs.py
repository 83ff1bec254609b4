"""``seahaven docs``: print the directory holding the docs of the installed version.

The docs ship inside the package as ``seahaven/docs/`` (in the source tree
that is a link to the project's ``docs/``, which the wheel copies in), so the
directory printed always matches the seahaven that is running.
"""

from __future__ import annotations

from pathlib import Path

import typer

from seahaven.cli.support import failures
from seahaven.errors import WorldBug
from seahaven.registry.hookspecs import hookimpl

__all__ = ["docs_directory", "seahaven_cli"]


def docs_directory() -> Path:
    """The bundled docs directory of the running seahaven; a ``WorldBug`` if it is missing."""
    # This file is seahaven/cli/docs.py; the docs are seahaven/docs.
    directory = (Path(__file__).resolve().parent.parent / "docs").resolve()
    if not directory.is_dir():
        raise WorldBug(
            f"the bundled docs are missing ({directory} is not a directory); reinstall seahaven"
        )
    return directory


def docs() -> None:
    """Print the directory holding the bundled docs, and nothing else."""
    with failures():
        typer.echo(str(docs_directory()))


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven docs``."""
    app.command("docs")(docs)
