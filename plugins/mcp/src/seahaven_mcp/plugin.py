"""The MCP plugin's hooks: ``seahaven mcp``.

This module is loaded every time the ``seahaven`` command line is built, so it
imports nothing heavy: the MCP SDK is imported when ``mcp`` runs. Every option is
checked before the world is loaded: a malformed one is a usage error (exit 2); a
world, fixture or ``setup_sql`` that fails is one line on stderr (exit 1).
"""

from __future__ import annotations

from typing import Annotated

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
from seahaven.registry.hookspecs import hookimpl
from seahaven_mcp.options import check_reset_options

__all__ = ["ScenarioOption", "mcp_command", "seahaven_cli"]

ScenarioOption = Annotated[
    str | None,
    typer.Option(
        "--scenario",
        metavar="PACK/ID",
        help="Bind the episode to this scenario of an installed pack: its start, its "
        "instructions, a submit tool, its budget and its grade.",
        show_default=False,
    ),
]


def mcp_command(
    ctx: typer.Context,
    world_argument: WorldArgument = None,
    world: WorldOption = None,
    fixture: FixtureOption = None,
    seed: SeedOption = None,
    now: NowOption = None,
    clock_mode: ClockModeOption = None,
    reset_options: ResetOptionsOption = None,
    scenario: ScenarioOption = None,
) -> None:
    """Serve one world to one MCP client over stdio, with one instance for the process's life.

    The instance is made when the client starts this command and destroyed when the
    client disconnects or the process is stopped; every row its tools wrote goes with it.
    It keeps its stores in memory unless --reset-options names a storage
    ('{"storage": "disk"}' gives it files) or SEAHAVEN_STORAGE does.

    With --scenario PACK/ID the episode is that scenario's: it starts where the
    scenario says (so --fixture, --now, --clock-mode and --reset-options are not
    taken; --seed is), the client is given its instructions and a submit tool,
    the scenario's budget holds, and submit's result is the grade.
    """
    chosen = one_world(world_argument, world)
    if scenario is not None:
        clashing = {
            "--fixture": fixture,
            "--now": now,
            "--clock-mode": clock_mode,
            "--reset-options": reset_options,
        }
        given = [flag for flag, value in clashing.items() if value is not None]
        if given:
            raise typer.BadParameter(
                f"a scenario sets where its episode starts, so --scenario is not taken with "
                f"{', '.join(given)} (or their SEAHAVEN_* variables); --seed is",
                param_hint="--scenario",
            )
        with failures():
            from seahaven.scenarios import find_scenario

            _, found_scenario = find_scenario(scenario)
            found = session(ctx).find_world(chosen or found_scenario.world_name)
            from seahaven_mcp.server import serve

            serve(found.world, scenario=scenario, seed=seed)
        return
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
