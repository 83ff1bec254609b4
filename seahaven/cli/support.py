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

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, TextIO

import typer

from seahaven.clock import check_clock_mode, parse_instant
from seahaven.errors import SeahavenError, ToolError, WorldBug

if TYPE_CHECKING:
    from seahaven.discovery import FoundWorld
    from seahaven.plugins import PluginManager
    from seahaven.registry import Registry

__all__ = [
    "CliSession",
    "Progress",
    "WorldOption",
    "check_clock_mode_option",
    "check_instant_option",
    "fail",
    "failures",
    "one_line",
    "plural",
    "session",
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


@dataclass
class CliSession:
    """The plugin manager one run of the command line uses, and the registry built from it."""

    manager: PluginManager
    _registry: Registry | None = field(default=None, repr=False)

    def registry(self) -> Registry:
        """The registry of this manager's plugins and the installed distributions."""
        if self._registry is None:
            from seahaven import plugins, registry

            if self.manager is plugins.plugin_manager():
                self._registry = registry.registry()
            else:
                self._registry = registry.Registry.discover(self.manager)
        return self._registry

    def find_world(self, explicit: str | None, *, start: Path | None = None) -> FoundWorld:
        """A world by registered name or ``module:attr``, else the project convention."""
        from seahaven.discovery import find_world

        # The registry is only consulted, and so only built, for a bare name.
        named = explicit is not None and ":" not in explicit
        return find_world(explicit, start=start, registry=self.registry() if named else None)


def session(ctx: typer.Context) -> CliSession:
    """The session of the running command line; the process's plugins when there is none."""
    found = ctx.find_object(CliSession)
    if found is not None:
        return found
    from seahaven.plugins import plugin_manager

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


@contextmanager
def failures() -> Iterator[None]:
    """Turn any error raised in the block into one line on stderr and exit status 1."""
    try:
        yield
    except (typer.Exit, typer.Abort, typer.BadParameter):
        raise
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
