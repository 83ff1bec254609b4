"""The plugin seahaven loads through the ``seahaven.plugins`` entry point: it adds ``episodes``."""

from __future__ import annotations

import typer

from seahaven import hookimpl

__all__ = ["seahaven_cli"]


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven episodes run``."""
    from seahaven_ray.cli import episodes_app

    app.add_typer(episodes_app, name="episodes")
