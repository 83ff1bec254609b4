"""What every ``seahaven`` command shares: the session, failure reporting and progress.

A command finds its plugin manager and registry on the click context
(``session(ctx)``), runs its body inside ``failures()`` so that any error
becomes one line on stderr and exit status 1, and reports long work through
``Progress``, which writes only when stderr is a terminal.

This is the public import path for a plugin that adds commands through the
``seahaven_cli`` hook: ``from seahaven.cli.support import failures, session``.
(``seahaven.cli_support``, its old name, still re-exports it for one release.)
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO

import typer
from typer.core import TyperArgument, TyperCommand

from seahaven.declaration.instance_options import check_instance_options
from seahaven.declaration.world import INSTANCE_OPTIONS
from seahaven.errors import SeahavenError, ToolError, WorldBug
from seahaven.stores.clock import CLOCK_MODES, check_clock_mode, parse_instant
from seahaven.stores.storage import INSTANCE_STORAGE, RUNNER_STORAGE, STORAGE_VARIABLE

if TYPE_CHECKING:
    from seahaven.registry.discovery import FoundWorld
    from seahaven.registry.plugins import PluginManager
    from seahaven.registry.worlds import Registry

__all__ = [
    "EXIT_READER_GONE",
    "CliSession",
    "ClockModeOption",
    "FixtureOption",
    "HostOption",
    "NowOption",
    "PortOption",
    "Progress",
    "ResetOptionsOption",
    "SeedOption",
    "StorageOption",
    "WorldArgument",
    "WorldFirstCommand",
    "WorldOption",
    "WorldsArgument",
    "check_clock_mode_option",
    "check_instant_option",
    "fail",
    "failures",
    "instance_options",
    "one_line",
    "one_world",
    "plural",
    "reported_here",
    "session",
    "several_worlds",
    "split_world",
    "stop_writing",
]

WorldOption = Annotated[
    str | None,
    typer.Option(
        "--world",
        metavar="WORLD",
        help="A registered world name or module:attr (default: the project's own world).",
        show_default=False,
    ),
]
WorldArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="WORLD",
        help="The world, as --world takes it: a registered name or module:attr (default: the "
        "project's own world).",
        show_default=False,
    ),
]
"""A command's world as its first argument; take it beside ``WorldOption``, then ``one_world``."""

WorldsArgument = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="WORLD",
        help="The worlds, as --world takes them (default: the project's own world).",
        show_default=False,
    ),
]
"""Several worlds as arguments, for a command whose ``--world`` repeats; see ``several_worlds``."""


def one_world(positional: str | None, option: str | None) -> str | None:
    """The world a command was given, as its argument or as ``--world``; ``None`` for neither.

    Both may be given when they agree; two different worlds are a usage error (exit 2).
    """
    if positional is not None and option is not None and positional != option:
        raise typer.BadParameter(
            f"the world is given twice, as {positional!r} and as --world {option!r}; give it "
            "once, either way",
            param_hint="WORLD",
        )
    return positional if positional is not None else option


def several_worlds(positional: Sequence[str] | None, option: Sequence[str] | None) -> list[str]:
    """The worlds a command was given as arguments or as repeated ``--world``s, in order.

    Both may be given when they name the same worlds; otherwise it is a usage error (exit 2).
    """
    given, named = list(positional or ()), list(option or ())
    if given and named and given != named:
        raise typer.BadParameter(
            f"the worlds are given twice, as {' '.join(given)} and as "
            f"{' '.join(f'--world {name}' for name in named)}; give them once, either way",
            param_hint="WORLD",
        )
    return given or named


def split_world(
    given: Sequence[str | None], option: str | None, *, takes: Sequence[str], required: int
) -> tuple[str | None, list[str | None]]:
    """Split a command's arguments into its world and the rest, which ``takes`` names in order.

    The world may come first, before the ``required`` arguments of ``takes`` and
    the optional ones after them: the first argument is the world when there is
    one more than ``takes`` holds, or, with no ``--world``, more than ``required``
    (so ``fixture verify payments`` names a world and ``fixture freeze starter``
    a fixture), or when it is ``--world``'s own value given again. Too many or
    too few are usage errors (exit 2), and so are a world argument and a
    different ``--world``.
    """
    values = [value for value in given if value is not None]
    world: str | None = None
    repeated = option is not None and len(values) > required and values[0] == option
    if len(values) > len(takes) or (option is None and len(values) > required) or repeated:
        world = values.pop(0)
    if len(values) > len(takes):
        raise typer.BadParameter(
            f"{' '.join(values[len(takes) :])!r} is one argument too many; the command takes "
            f"[WORLD] {' '.join(takes)}",
            param_hint=takes[-1],
        )
    if len(values) < required:
        raise typer.BadParameter(
            f"missing; the command takes [WORLD] {' '.join(takes)}", param_hint=takes[len(values)]
        )
    rest: list[str | None] = [*values, *([None] * (len(takes) - len(values)))]
    return one_world(world, option), rest


class WorldFirstCommand(TyperCommand):
    """A command whose usage line says which of its arguments are needed, as its metavars do.

    For commands that take ``[WORLD]`` before their own arguments: every
    argument is optional to the parser (``split_world`` decides what each
    value is), so the parser would show all of them in brackets. Here a
    metavar in brackets is shown as it is, and any other is shown as a
    required argument is everywhere else: ``[WORLD] {PARENT} {ID}``.
    """

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS]``, then every argument, optional ones in brackets, needed ones in braces."""
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                metavar = param.metavar or (param.name or "").upper()
                pieces.append(metavar if metavar.startswith("[") else f"{{{metavar}}}")
        return pieces


@dataclass
class CliSession:
    """The plugin manager one run of the command line uses, and the registry built from it."""

    manager: PluginManager
    _registry: Registry | None = field(default=None, repr=False)

    def registry(self) -> Registry:
        """The registry of this manager's plugins and the installed distributions."""
        if self._registry is None:
            import seahaven.registry.plugins as plugins
            import seahaven.registry.worlds as registry

            if self.manager is plugins.plugin_manager():
                self._registry = registry.registry()
            else:
                self._registry = registry.Registry.discover(self.manager)
        return self._registry

    def find_world(self, explicit: str | None, *, start: Path | None = None) -> FoundWorld:
        """A world by registered name or ``module:attr``, else the project convention."""
        from seahaven.registry.discovery import find_world

        # The registry is only consulted, and so only built, for a bare name.
        named = explicit is not None and ":" not in explicit
        return find_world(explicit, start=start, registry=self.registry() if named else None)


def session(ctx: typer.Context) -> CliSession:
    """The session of the running command line; the process's plugins when there is none."""
    found = ctx.find_object(CliSession)
    if found is not None:
        return found
    from seahaven.registry.plugins import plugin_manager

    return CliSession(plugin_manager())


def one_line(text: str) -> str:
    """``text`` with every run of whitespace, newlines included, folded to one space."""
    return " ".join(text.split())


def plural(count: int, noun: str) -> str:
    """``1 call``, ``2 calls``: a count and its noun, in the number the count takes."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def fail(message: str) -> NoReturn:
    """Print ``message`` as one line on stderr and exit with status 1."""
    typer.echo(f"error: {one_line(message)}", err=True)
    raise typer.Exit(1)


EXIT_READER_GONE = 141
"""The exit status when stdout's reader closed the pipe: 128 + SIGPIPE, as other tools do."""


def stop_writing() -> None:
    """Point stdout at the null device, so the interpreter's last flush finds no broken pipe."""
    try:
        stdout = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's capture): nothing to flush into a pipe
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, stdout)
    finally:
        os.close(null)


@contextmanager
def failures() -> Iterator[None]:
    """Turn any error raised in the block into one line on stderr and exit status 1."""
    try:
        yield
    except (typer.Exit, typer.Abort, typer.BadParameter):
        raise
    except BrokenPipeError:
        # The reader went away (``| head``): nothing is wrong with the command, and there
        # is no one to tell. Exit as a program stopped by SIGPIPE does.
        stop_writing()
        raise typer.Exit(EXIT_READER_GONE) from None
    except WorldBug as error:
        fail(str(error))
    except ToolError as error:
        fail(f"{type(error).__name__} {error.code}: {error.message}")
    except SeahavenError as error:
        fail(str(error))
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        fail(f"{where}{error.strerror or error}")
    except Exception as error:
        # Not the user's mistake as far as we can tell: still one line, never a traceback.
        fail(
            f"unexpected {type(error).__name__}: {error}; this is a bug in seahaven or in a "
            "plugin, please report it with the command you ran"
        )


class _CallTracebacks(logging.Filter):
    """Drops the traceback records ``seahaven.dispatch`` logs for a call that failed."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno >= logging.ERROR and record.exc_info)


@contextmanager
def reported_here() -> Iterator[None]:
    """Keep the dispatch log's tracebacks off stderr while a command reports failures itself.

    ``seahaven.dispatch`` logs an ERROR with the traceback for anything but a
    ``ToolError`` escaping a call, for a server's log. A command that turns the
    same failure into its one ``error:`` line would otherwise print both.
    """
    dispatch_log = logging.getLogger("seahaven.dispatch")
    quiet = _CallTracebacks()
    dispatch_log.addFilter(quiet)
    try:
        yield
    finally:
        dispatch_log.removeFilter(quiet)


class Progress:
    """A one-line status on stderr, shown only when stderr is a terminal, never in a pipe."""

    _TICK_SECONDS = 0.25

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = sys.stderr if stream is None else stream
        try:
            self.active = self._stream.isatty()
        except (AttributeError, ValueError):
            self.active = False
        self._lock = threading.Lock()
        self._shown = False

    def show(self, text: str) -> None:
        """Replace the status line with ``text``."""
        if not self.active:
            return
        with self._lock:
            self._stream.write(f"\r\x1b[2K{text}")
            self._stream.flush()
            self._shown = True

    def clear(self) -> None:
        """Remove the status line, so what is printed next starts on a clean line."""
        if not self.active:
            return
        with self._lock:
            if self._shown:
                self._stream.write("\r\x1b[2K")
                self._stream.flush()
                self._shown = False

    @contextmanager
    def working(self, text: str) -> Iterator[None]:
        """Show ``text`` with the seconds it has taken so far, ticking while the block runs."""
        if not self.active:
            yield
            return
        started = time.monotonic()
        stop = threading.Event()

        def tick() -> None:
            while not stop.is_set():
                self.show(f"{text} ({time.monotonic() - started:.0f}s)")
                stop.wait(self._TICK_SECONDS)

        ticker = threading.Thread(target=tick, name="seahaven-progress", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join()
            self.clear()


def check_clock_mode_option(value: str | None) -> str | None:
    """A ``--clock-mode`` callback: a mode the clock does not have is a usage error (exit 2)."""
    if value is None:
        return None
    try:
        return check_clock_mode(value)
    except WorldBug as error:
        raise typer.BadParameter(str(error)) from None


def check_instant_option(value: str | None) -> str | None:
    """A ``--now`` callback: text that is not an instant is a usage error (exit 2)."""
    if value is None:
        return None
    try:
        parse_instant(value)
    except WorldBug as error:
        raise typer.BadParameter(str(error)) from None
    return value


# --- what a serving command takes --------------------------------------------------------------

HostOption = Annotated[
    str,
    typer.Option(
        "--host",
        metavar="HOST",
        help="The interface to listen on; 0.0.0.0 listens on all of them.",
    ),
]
PortOption = Annotated[
    int,
    typer.Option(
        "--port", metavar="PORT", min=0, max=65535, help="The TCP port; 0 lets the system choose."
    ),
]

FixtureOption = Annotated[
    str | None,
    typer.Option(
        "--fixture",
        envvar="SEAHAVEN_FIXTURE",
        metavar="NAME",
        help="The fixture an instance starts from (default: a blank instance).",
        show_default=False,
    ),
]
SeedOption = Annotated[
    int | None,
    typer.Option(
        "--seed",
        envvar="SEAHAVEN_SEED",
        metavar="N",
        help="The caller seed (default: a random one for each instance).",
        show_default=False,
    ),
]
NowOption = Annotated[
    str | None,
    typer.Option(
        "--now",
        envvar="SEAHAVEN_NOW",
        metavar="ISO",
        callback=check_instant_option,
        help="Where the clock starts, such as 2026-06-01T09:00:00.000Z (default: the fixture's "
        "now, or the time the instance is made).",
        show_default=False,
    ),
]
ClockModeOption = Annotated[
    str | None,
    typer.Option(
        "--clock-mode",
        envvar="SEAHAVEN_CLOCK_MODE",
        metavar="MODE",
        callback=check_clock_mode_option,
        help=f"How the clock moves: {', '.join(CLOCK_MODES)}.",
        show_default=False,
    ),
]
ResetOptionsOption = Annotated[
    str | None,
    typer.Option(
        "--reset-options",
        envvar="SEAHAVEN_RESET_OPTIONS",
        metavar="JSON",
        help="A JSON object of the keywords world.instance() is called with "
        f"({', '.join(INSTANCE_OPTIONS)}); not with the four options above.",
        show_default=False,
    ),
]
StorageOption = Annotated[
    str | None,
    typer.Option(
        "--storage",
        metavar="WHERE",
        help="Where the instances this command makes keep their stores: memory or disk "
        f"(default: {STORAGE_VARIABLE}, else {RUNNER_STORAGE}, as for every runner; a plain "
        f"world.instance() defaults to {INSTANCE_STORAGE}).",
    ),
]


def _model_check(parsed: dict[str, Any]) -> dict[str, Any]:
    """The options in ``parsed`` as ``seahaven.InstanceOptions`` takes them, or ``WorldBug``."""
    return check_instance_options(parsed, source="--reset-options").keywords()


_FLAGS = {"fixture": "--fixture", "seed": "--seed", "now": "--now", "clock_mode": "--clock-mode"}


def instance_options(
    reset_options: str | None,
    flags: Mapping[str, Any],
    *,
    check: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``world.instance()`` keywords the options spell, or ``typer.BadParameter`` (exit 2).

    ``reset_options`` is ``--reset-options`` (JSON text) and ``flags`` the four
    convenience options by key, ``None`` when not given; the two ways are never
    merged. ``check`` is the server's own verdict on the parsed object, raising
    ``WorldBug`` for a key or value it does not take; without one, the object is
    checked against ``seahaven.InstanceOptions``. A ``clock_mode`` or ``now`` in
    the JSON is checked as its flag would be.
    """
    given = {key: value for key, value in flags.items() if value is not None}
    if reset_options is None:
        return given
    if given:
        spelled = ", ".join(_FLAGS.get(key, key) for key in given)
        raise typer.BadParameter(
            f"--reset-options holds every reset option, so it is not taken together with "
            f"{spelled} (or their SEAHAVEN_* variables); put "
            f"{', '.join(repr(key) for key in given)} inside the JSON instead",
            param_hint="--reset-options",
        )
    try:
        parsed = json.loads(reset_options)
    except ValueError as error:
        raise typer.BadParameter(
            f"not JSON ({error}); give an object such as '{{\"seed\": 7}}'",
            param_hint="--reset-options",
        ) from None
    if not isinstance(parsed, dict):
        raise typer.BadParameter(
            f"must be a JSON object of world.instance() keywords, not {type(parsed).__name__}",
            param_hint="--reset-options",
        )
    try:
        options = _model_check(parsed) if check is None else check(parsed)
    except WorldBug as error:
        raise typer.BadParameter(str(error), param_hint="--reset-options") from None
    if isinstance(options.get("clock_mode"), str):
        check_clock_mode_option(options["clock_mode"])
    if isinstance(options.get("now"), str):
        check_instant_option(options["now"])
    return options
