"""Running the test server of ``seahaven.http``: in the foreground, on a thread, or as a command.

``serve_forever`` serves an ``HttpWorldApp`` until Ctrl-C or SIGTERM,
``run_in_background`` serves it for a ``with`` block and yields a
``RunningHttpServer``, and ``command_line`` is a world's ``serve_http.py``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, TextIO

import typer

import seahaven
from seahaven.cli.support import (
    ClockModeOption,
    FixtureOption,
    HostOption,
    NowOption,
    PortOption,
    ResetOptionsOption,
    SeedOption,
    failures,
    instance_options,
)
from seahaven_openenv.front import runner
from seahaven_openenv.front.guard import AllowHostOption, AllowOriginOption, bound_hosts
from seahaven_openenv.web.http.messages import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_INSTANCES,
    HttpHandler,
)
from seahaven_openenv.web.http.server import HttpWorldApp, check_reset_options

__all__ = ["RunningHttpServer", "command_line", "run_in_background", "serve_forever"]


@dataclass(frozen=True, slots=True)
class RunningHttpServer:
    """The test server running on a background thread, as ``seahaven.http.running`` yields it."""

    host: str
    port: int
    app: HttpWorldApp

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT``."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}"

    def url(self, instance_id: str) -> str:
        """The base URL of instance ``instance_id``: ``http://HOST:PORT/worlds/ID``."""
        return f"{self.base_url}/worlds/{instance_id}"


def serve_forever(
    application: HttpWorldApp,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "info",
    out: TextIO | None = None,
) -> None:
    """Serve ``application`` until Ctrl-C or SIGTERM; print the base URL once it listens."""
    server = runner.server_for(application, host=host, port=port, log_level=log_level)
    shown = f"[{host}]" if ":" in host else host
    try:
        runner.in_foreground(
            server,
            host=host,
            port=port,
            announce=lambda bound: [
                f"Serving {application.world.name} at http://{shown}:{bound}/worlds/{{id}}"
            ],
            out=out,
        )
    finally:
        application.close()


@contextmanager
def run_in_background(
    application: HttpWorldApp,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    log_level: str = "warning",
    startup_timeout: float = 30.0,
) -> Iterator[RunningHttpServer]:
    """Serve ``application`` on a background thread for the ``with`` block."""
    server = runner.server_for(application, host=host, port=port, log_level=log_level)
    try:
        with runner.in_background(
            server, host=host, port=port, startup_timeout=startup_timeout
        ) as bound:
            yield RunningHttpServer(host, bound, application)
    finally:
        application.close()


# --- the command line --------------------------------------------------------------------------


def command_line(
    world: seahaven.World, handle: HttpHandler, argv: Sequence[str] | None = None
) -> int:
    """Run the server's command line with ``argv`` (default: the process's); the exit status."""

    def command(
        host: HostOption = "127.0.0.1",
        port: PortOption = 8000,
        max_instances: Annotated[
            int,
            typer.Option(
                "--max-instances",
                metavar="N",
                min=0,
                help="How many instances may exist at once; 0 for no limit.",
            ),
        ] = DEFAULT_MAX_INSTANCES,
        fixture: FixtureOption = None,
        seed: SeedOption = None,
        now: NowOption = None,
        clock_mode: ClockModeOption = None,
        reset_options: ResetOptionsOption = None,
        max_body_bytes: Annotated[
            int,
            typer.Option(
                "--max-body-bytes",
                metavar="N",
                min=0,
                help="The largest request body read; a larger one is refused with 413.",
            ),
        ] = DEFAULT_MAX_BODY_BYTES,
        allow_host: AllowHostOption = None,
        allow_origin: AllowOriginOption = None,
    ) -> None:
        """Serve the world's HTTP API: one instance per id, at /worlds/{id}/...

        The instances keep their stores in memory unless --reset-options, a PUT body
        or SEAHAVEN_STORAGE names a storage.
        """
        flags = {"fixture": fixture, "seed": seed, "now": now, "clock_mode": clock_mode}
        options = instance_options(
            reset_options,
            flags,
            check=lambda parsed: check_reset_options(parsed, source="--reset-options"),
        )
        with failures():
            application = HttpWorldApp(
                world,
                handle,
                max_instances=max_instances,
                reset_options=options,
                max_body_bytes=max_body_bytes,
                allowed_hosts=[*(allow_host or []), *bound_hosts(host)],
                allowed_origins=allow_origin or [],
            )
            serve_forever(application, host=host, port=port)

    app = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
    app.command()(command)
    click_command = typer.main.get_command(app)
    try:
        click_command.main(
            args=list(argv) if argv is not None else None,
            prog_name=os.path.basename(sys.argv[0]) or "serve_http.py",
            standalone_mode=True,
        )
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except KeyboardInterrupt:
        return 130
    return 0
