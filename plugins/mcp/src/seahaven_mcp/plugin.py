"""The MCP plugin's hooks: ``seahaven mcp``.

This module is loaded every time the ``seahaven`` command line is built, so it
imports nothing heavy: the MCP SDK is imported when ``mcp`` runs. Every option is
checked before the world is loaded: a malformed one is a usage error (exit 2); a
world, fixture or ``setup_sql`` that fails is one line on stderr (exit 1).
"""

from __future__ import annotations

import typer

from seahaven.cli.support import (
    ClockModeOption,
    FixtureOption,
    NowOption,
    ResetOptionsOption,
    SeedOption,
    WorldArgument,
    WorldOption,
    failures,
    instance_options,
    one_world,
    session,
)
from seahaven.hookspecs import hookimpl
from seahaven_mcp.options import check_reset_options

__all__ = ["mcp_command", "seahaven_cli"]


def mcp_command(
    ctx: typer.Context,
    world_argument: WorldArgument = None,
    world: WorldOption = None,
    fixture: FixtureOption = None,
    seed: SeedOption = None,
    now: NowOption = None,
    clock_mode: ClockModeOption = None,
    reset_options: ResetOptionsOption = None,
) -> None:
    """Serve one world to one MCP client over stdio, with one instance for the process's life.

    The instance is made when the client starts this command and destroyed when the
    client disconnects or the process is stopped; every row its tools wrote goes with it.
    It keeps its stores in memory unless --reset-options names a storage
    ('{"storage": "disk"}' gives it files) or SEAHAVEN_STORAGE does.
    """
    chosen = one_world(world_argument, world)
    flags = {"fixture": fixture, "seed": seed, "now": now, "clock_mode": clock_mode}
    options = instance_options(reset_options, flags, check=check_reset_options)
    with failures():
        found = session(ctx).find_world(chosen)
        from seahaven_mcp.server import serve

        serve(found.world, reset_options=options)


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven mcp``."""
    app.command("mcp")(mcp_command)
