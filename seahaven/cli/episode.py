"""A scripted episode (``seahaven episodes run --calls``): run it, and summarise what it changed.

The script is JSON: a list of calls, each ``{"tool": name, "arguments": {...}}``
(a JSON-lines file of such objects works too). Every call is printed with its
outcome, numbered as the state document numbers it (``[-]`` for a name the
world does not serve, which is never dispatched); a ``ToolError`` is an outcome
like any other, so the episode goes on. Every option is checked, and the
``--document`` path's directory too, before the instance is made.
At the end the state document is summarised (format, calls, and change-log
records counted by store, table and operation), and ``--document`` writes the
whole document to a file.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from pydantic_core import to_jsonable_python

from seahaven.cli.support import (
    check_clock_mode_option,
    check_instant_option,
    fail,
    failures,
    plural,
    reported_here,
    session,
    split_world,
)
from seahaven.errors import SeahavenError, ToolError
from seahaven.scenarios.model import read_calls
from seahaven.stores.clock import CLOCK_MODES
from seahaven.stores.storage import runner_storage

if TYPE_CHECKING:
    from seahaven.declaration.world import World
    from seahaven.stores.clock import ClockMode

__all__ = [
    "SCRIPT_OPTIONS",
    "CallsOption",
    "ClockModeOption",
    "DocumentOption",
    "EpisodeIdOption",
    "NowOption",
    "SeedOption",
    "StartupOption",
    "run_script",
    "summarise",
    "world_frame",
]

_PREVIEW = 110


def _startup(pairs: list[str]) -> dict[str, Any]:
    keywords: dict[str, Any] = {}
    for pair in pairs:
        key, separator, raw = pair.partition("=")
        if not separator or not key:
            raise typer.BadParameter(f"--startup takes KEY=VALUE, not {pair!r}")
        try:
            keywords[key] = json.loads(raw)
        except json.JSONDecodeError:
            keywords[key] = raw  # a bare word is a string
    return keywords


def _preview(value: Any) -> str:
    text = json.dumps(to_jsonable_python(value, fallback=repr), separators=(",", ":"))
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 3] + "..."


def summarise(document: dict[str, Any]) -> list[str]:
    """Lines describing a state document: its provenance and what the episode changed."""
    state = document["state"]
    log = state.get("db", {}).get("log", []) if isinstance(state, dict) else []
    fixture = document["fixture"]["id"] if document["fixture"] else "(blank)"
    lines = [
        f"state document {document['format']}: world {document['world']['name']} "
        f"{document['world']['version']}, fixture {fixture}, "
        f"{plural(document['call_count'], 'call')}, "
        f"clock {document['clock_mode']} at {document['now']}",
        f"stores: {', '.join(document['composition'])}",
        f"change log: {plural(len(log), 'record')}",
    ]
    counts = Counter((record["world"], record["table"], record["op"]) for record in log)
    lines.extend(
        f"  {world}.{table}: {plural(count, op)}"
        for (world, table, op), count in sorted(counts.items())
    )
    return lines


def _check_document(value: Path | None) -> None:
    """Refuse a ``--document`` path that could not be written, before the episode runs."""
    if value is None:
        return
    if value.is_dir():
        fail(f"--document {value} is a directory; name a file to write the document to")
    parent = value.parent
    if not parent.is_dir():
        fail(
            f"--document {value}: {parent} does not exist; create it first, or name a file in a "
            "directory that does"
        )
    if not os.access(parent, os.W_OK) or (value.exists() and not os.access(value, os.W_OK)):
        fail(f"--document {value} cannot be written; name a file you can write")


MAX_EPISODE_ID_LENGTH = 255


def _check_episode_id(value: str | None) -> str | None:
    """Refuse an ``--episode-id`` a server's reset would refuse too: empty or over 255."""
    if value is not None and not 0 < len(value) <= MAX_EPISODE_ID_LENGTH:
        raise typer.BadParameter(
            f"give a non-empty id of at most {MAX_EPISODE_ID_LENGTH} characters, such as "
            "acme-refunds-017"
        )
    return value


CallsOption = Annotated[
    str,
    typer.Option(
        "--calls", metavar="FILE", help="The script: a JSON list of calls, or - for stdin."
    ),
]
SeedOption = Annotated[int | None, typer.Option("--seed", metavar="INT", help="The caller seed.")]
NowOption = Annotated[
    str | None,
    typer.Option(
        "--now",
        metavar="TS",
        callback=check_instant_option,
        help="Where the clock starts, such as 2026-06-01T09:00:00.000Z.",
    ),
]
ClockModeOption = Annotated[
    str | None,
    typer.Option(
        "--clock-mode",
        metavar="MODE",
        callback=check_clock_mode_option,
        help=f"How the clock moves: {', '.join(CLOCK_MODES)}.",
    ),
]
StartupOption = Annotated[
    list[str] | None,
    typer.Option("--startup", metavar="KEY=VALUE", help="A startup keyword (repeatable)."),
]
DocumentOption = Annotated[
    Path | None,
    typer.Option(
        "--document",
        metavar="PATH",
        help="Write the whole state document here.",
    ),
]
EpisodeIdOption = Annotated[
    str | None,
    typer.Option(
        "--episode-id",
        metavar="ID",
        callback=_check_episode_id,
        help="The state document's episode_id (default: the instance's id).",
        show_default=False,
    ),
]
SCRIPT_OPTIONS = (
    "calls",
    "seed",
    "now",
    "clock_mode",
    "startup",
    "storage",
    "document_path",
    "episode_id",
)
"""The parameters only a scripted episode (no ``--episodes``) takes."""


def run_script(
    ctx: typer.Context,
    first: str | None,
    second: str | None,
    world_option: str | None,
    *,
    calls: str,
    seed: int | None,
    now: str | None,
    clock_mode: str | None,
    startup: list[str] | None,
    storage: str | None,
    document_path: Path | None,
    episode_id: str | None,
) -> None:
    """Run a scripted episode and summarise the state document it leaves."""
    world, (fixture,) = split_world((first, second), world_option, takes=("FIXTURE",), required=0)
    # What the options name is checked before the instance is made, so a long episode never
    # runs only to fail at the end; a file that cannot be read or written is exit 1.
    _check_document(document_path)
    if calls == "-":
        if _is_terminal(sys.stdin):
            typer.echo(
                "reading the calls from standard input: a JSON list, or one call per line; "
                "end with Ctrl-D (or pass --calls FILE)",
                err=True,
            )
        text = sys.stdin.read()
    else:
        text = _read(calls)
    try:
        script = read_calls(text, "standard input" if calls == "-" else calls)
    except ValueError as error:
        fail(str(error))
    keywords = _startup(startup or [])
    with failures():
        found = session(ctx).find_world(world)
        with found.world.instance(
            fixture,
            seed=seed,
            now=now,
            clock_mode=cast("ClockMode | None", clock_mode),
            startup=keywords or None,
            storage=runner_storage(storage),
        ) as instance:
            for step in script:
                tool, arguments = step.tool, step.arguments
                shown = ", ".join(f"{key}={_preview(value)}" for key, value in arguments.items())
                number = instance.call_count
                try:
                    with reported_here():
                        result = instance.call(tool, **arguments)
                except ToolError as error:
                    outcome = f"{error.code}: {error.message}"
                except SeahavenError:
                    raise
                except Exception as error:
                    fail(_world_raised(found.world, tool, error))
                else:
                    outcome = _preview(result)
                # Numbered as the state document numbers calls: a name the world does
                # not serve is refused before dispatch, so it has no number.
                label = f"[{number}]" if instance.call_count > number else "[-]"
                typer.echo(f"{label} {tool}({shown}) -> {outcome}")
            document = instance.state()
        if episode_id is not None:
            # As a server's reset does: the caller names the episode, the envelope says so.
            document["episode_id"] = episode_id
        for line in summarise(document):
            typer.echo(line)
        if document_path is not None:
            document_path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
            typer.echo(f"wrote {document_path}")


def _world_raised(world: World, tool: str, error: Exception) -> str:
    """The one line for a tool whose code raised something that is not a ``ToolError``."""
    raised = f"tool {tool!r} raised {type(error).__name__}: {error}"
    frame = world_frame(world, error)
    if frame is None:
        return (
            f"{raised}; this is a bug in seahaven or in a plugin, please report it with the "
            "command you ran"
        )
    return (
        f"{raised} at {frame}; the world's code raised it, not seahaven: fix it there, or raise "
        "a ToolError the agent can act on"
    )


def world_frame(world: World, error: BaseException) -> str | None:
    """``file:line (in function)`` of the innermost frame of ``world``'s own code in the traceback.

    A world's code is every module its tools and middleware (and those of every
    world it adds) were defined in, with the packages around them; ``None``
    when the traceback never passed through it.
    """
    packages = {
        module.partition(".")[0]
        for node in world.composition().nodes
        for module in (
            *(getattr(tool.fn, "__module__", None) for tool in node.world.tools.values()),
            *(getattr(middleware, "__module__", None) for middleware in node.world.middlewares),
        )
        if isinstance(module, str)
    }
    packages.discard("seahaven")
    found: str | None = None
    trace = error.__traceback__
    while trace is not None:
        code = trace.tb_frame.f_code
        module = str(trace.tb_frame.f_globals.get("__name__", ""))
        if module.partition(".")[0] in packages:
            found = f"{_shown_path(code.co_filename)}:{trace.tb_lineno} (in {code.co_name})"
        trace = trace.tb_next
    return found


def _shown_path(filename: str) -> str:
    """A path relative to the working directory when it is under it, else as Python has it."""
    try:
        return str(Path(filename).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return filename


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        fail(f"cannot read --calls {path}: {error.strerror or error}")
    except UnicodeDecodeError:
        fail(f"cannot read --calls {path}: it is not UTF-8 text")
