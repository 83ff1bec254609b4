"""The MCP plugin's hooks: ``seahaven mcp``.

This module is loaded every time the ``seahaven`` command line is built, so it
imports nothing heavy: the MCP SDK is imported when ``mcp`` runs. Every option is
checked before the world is loaded: a malformed one is a usage error (exit 2); a
world, fixture or ``setup_sql`` that fails is one line on stderr (exit 1).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from seahaven.cli.support import (
    WorldOption,
    check_clock_mode_option,
    check_instant_option,
    failures,
    session,
)
from seahaven.clock import CLOCK_MODES
from seahaven.hookspecs import hookimpl

__all__ = ["mcp_command", "reset_options_from", "seahaven_cli"]

# Mirrors seahaven_mcp.server's names, which are not imported here (see above).
_RESET_KEYS = ("fixture", "seed", "now", "clock_mode", "state_format", "startup", "setup_sql")
_FLAGS = {"fixture": "--fixture", "seed": "--seed", "now": "--now", "clock_mode": "--clock-mode"}


def reset_options_from(text: str | None, flags: dict[str, Any]) -> dict[str, Any]:
    """The ``world.instance()`` keywords the options spell, or ``typer.BadParameter``.

    ``text`` is ``--reset-options`` (JSON) and ``flags`` the four convenience
    options by key, ``None`` when not given. The two ways are not merged.
    """
    given = {key: value for key, value in flags.items() if value is not None}
    if text is None:
        return given
    if given:
        named = ", ".join(_FLAGS[key] for key in given)
        raise typer.BadParameter(
            f"--reset-options is the whole of what the instance is made with, so it is not "
            f"given with {named}; put {', '.join(repr(key) for key in given)} inside the JSON "
            "instead",
            param_hint="--reset-options",
        )
    try:
        options = json.loads(text)
    except json.JSONDecodeError as error:
        raise typer.BadParameter(f"not JSON: {error}", param_hint="--reset-options") from None
    if not isinstance(options, dict):
        raise typer.BadParameter(
            f"must be a JSON object of world.instance() keywords, not {type(options).__name__}",
            param_hint="--reset-options",
        )
    if "control_tools" in options:
        raise typer.BadParameter(
            "may not hold control_tools: an instance seahaven mcp makes never has the control tool",
            param_hint="--reset-options",
        )
    stray = sorted(key for key in options if key not in _RESET_KEYS)
    if stray:
        raise typer.BadParameter(
            f"does not take {', '.join(repr(key) for key in stray)}; it takes "
            f"{', '.join(_RESET_KEYS)}",
            param_hint="--reset-options",
        )
    if "clock_mode" in options and isinstance(options["clock_mode"], str):
        check_clock_mode_option(options["clock_mode"])
    if "now" in options and isinstance(options["now"], str):
        check_instant_option(options["now"])
    return options


def mcp_command(
    ctx: typer.Context,
    world: WorldOption = None,
    fixture: Annotated[
        str | None,
        typer.Option(
            "--fixture",
            envvar="SEAHAVEN_FIXTURE",
            metavar="NAME",
            help="The fixture the instance starts from (default: a blank instance).",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            envvar="SEAHAVEN_SEED",
            metavar="N",
            help="The caller seed (default: a random one, written to stderr).",
            show_default=False,
        ),
    ] = None,
    now: Annotated[
        str | None,
        typer.Option(
            "--now",
            envvar="SEAHAVEN_NOW",
            metavar="ISO",
            callback=check_instant_option,
            help="Where the clock starts, such as 2026-06-01T09:00:00.000Z (default: the "
            "fixture's now, or the time the instance is made).",
            show_default=False,
        ),
    ] = None,
    clock_mode: Annotated[
        str | None,
        typer.Option(
            "--clock-mode",
            envvar="SEAHAVEN_CLOCK_MODE",
            metavar="MODE",
            callback=check_clock_mode_option,
            help=f"How the clock moves: {', '.join(CLOCK_MODES)} (default: the world's).",
            show_default=False,
        ),
    ] = None,
    reset_options: Annotated[
        str | None,
        typer.Option(
            "--reset-options",
            envvar="SEAHAVEN_RESET_OPTIONS",
            metavar="JSON",
            help="A JSON object of the keywords world.instance() is called with (fixture, seed, "
            "now, clock_mode, state_format, startup, setup_sql); not with the four options "
            "above.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve one world to one MCP client over stdio, with one instance for the process's life.

    The instance is made when the client starts this command and destroyed when the
    client disconnects or the process is stopped; every row its tools wrote goes with it.
    """
    options = reset_options_from(
        reset_options, {"fixture": fixture, "seed": seed, "now": now, "clock_mode": clock_mode}
    )
    with failures():
        found = session(ctx).find_world(world)
        from seahaven_mcp.server import serve

        serve(found.world, reset_options=options)


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven mcp``."""
    app.command("mcp")(mcp_command)
