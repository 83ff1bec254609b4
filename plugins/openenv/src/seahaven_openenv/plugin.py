"""The serving plugin's hooks: ``seahaven serve`` and ``seahaven hub``.

This module is loaded every time the ``seahaven`` command line is built, so it
imports nothing heavy: the server and uvicorn are imported when ``serve`` runs.
"""

from __future__ import annotations

import enum
import os
from typing import Annotated

import typer

from seahaven.cli.support import (
    HostOption,
    PortOption,
    StorageOption,
    WorldsArgument,
    fail,
    failures,
    session,
    several_worlds,
)
from seahaven.registry.hookspecs import hookimpl
from seahaven.stores.storage import STORAGE_VARIABLE, check_storage
from seahaven_openenv.front.guard import AllowHostOption, AllowOriginOption

# ``seahaven_openenv.sessions.resume.DEFAULT_RESUME_GRACE_SECONDS``, written out so that the command
# line imports no server module (a test holds the two equal).
RESUME_GRACE_SECONDS = 30.0

__all__ = ["LogLevel", "hub_command", "seahaven_cli", "serve_command"]


class LogLevel(enum.StrEnum):
    """``seahaven serve --log-level``: uvicorn's levels."""

    critical = "critical"
    error = "error"
    warning = "warning"
    info = "info"
    debug = "debug"
    trace = "trace"


def serve_command(
    ctx: typer.Context,
    world_arguments: WorldsArgument = None,
    world: Annotated[
        list[str] | None,
        typer.Option(
            "--world",
            metavar="WORLD",
            help="A registered world name or module:attr; repeat it to serve several worlds, "
            "each under /worlds/NAME (default: the project's own world).",
            show_default=False,
        ),
    ] = None,
    all_worlds: Annotated[
        bool,
        typer.Option("--all", help="Serve every installed world, each under /worlds/NAME."),
    ] = False,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8000,
    max_concurrent_envs: Annotated[
        int | None,
        typer.Option(
            # OpenEnv's own spelling, and the command line's usual one beside it.
            "--max_concurrent_envs",
            "--max-concurrent-envs",
            metavar="N",
            min=1,
            help="How many sessions may be open at once; past it a connection gets "
            "CAPACITY_REACHED (default: 500, or as many as the open-file limit holds).",
            show_default=False,
        ),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            metavar="N",
            min=0,
            help="How many tool calls run at once; 0 for no gate (default: min(cpus, 16)).",
            show_default=False,
        ),
    ] = None,
    session_timeout: Annotated[
        float,
        typer.Option(
            "--session-timeout",
            metavar="SECONDS",
            min=0,
            help="Seconds of idleness (no reset or step) before a session is reaped; 0 is off.",
        ),
    ] = 0,
    resume_grace: Annotated[
        float,
        typer.Option(
            "--resume-grace",
            metavar="SECONDS",
            min=0,
            help="Seconds a session outlives a dropped connection, holding its instance for "
            "its client to resume it (the reset's answer carries the token); 0 is off.",
        ),
    ] = RESUME_GRACE_SECONDS,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            metavar="N",
            min=1,
            help="Server processes sharing the port, each with its own sessions; a front "
            "process hands each connection to one (1: this process alone).",
        ),
    ] = 1,
    include_control_tools: Annotated[
        bool,
        typer.Option(
            "--include-control-tools",
            help="Let each session's instance call the deprecated control tool "
            "controller_run_sql (it is never listed).",
        ),
    ] = False,
    no_console: Annotated[
        bool, typer.Option("--no-console", help="Do not serve the web console at /console.")
    ] = False,
    log_level: Annotated[
        LogLevel,
        typer.Option(
            "--log-level",
            help="How much the server logs: uvicorn's and the framework's loggers.",
            case_sensitive=False,
        ),
    ] = LogLevel.info,
    allow_host: AllowHostOption = None,
    allow_origin: AllowOriginOption = None,
    snapshot_limit: Annotated[
        int,
        typer.Option(
            "--snapshot-limit",
            metavar="COUNT",
            min=1,
            help="The most snapshots (snapshot frames) kept at once; the oldest is evicted "
            "past it.",
        ),
    ] = 64,
    snapshot_memory: Annotated[
        float,
        typer.Option(
            "--snapshot-memory",
            metavar="MB",
            min=1,
            help="The most MiB the kept snapshots hold together; the oldest are evicted past it.",
        ),
    ] = 1024,
    snapshot_age: Annotated[
        float,
        typer.Option(
            "--snapshot-age",
            metavar="SECONDS",
            min=1,
            help="Seconds a snapshot is kept for reset(from_snapshot=) and fork.",
        ),
    ] = 3600,
    admission_queue: Annotated[
        int,
        typer.Option(
            "--admission-queue",
            metavar="N",
            min=0,
            help="How many new connections may wait for a seat once the server is at capacity, "
            "first come first served; 0 refuses them at once.",
        ),
    ] = 8192,
    admission_wait: Annotated[
        float,
        typer.Option(
            "--admission-wait",
            metavar="SECONDS",
            min=0,
            help="How long a new connection waits for a seat before it is refused with "
            "CAPACITY_REACHED and a retry time.",
        ),
    ] = 20,
    retry_after: Annotated[
        int,
        typer.Option(
            "--retry-after",
            metavar="SECONDS",
            min=1,
            help="The seconds a refusal at capacity tells the client to wait before trying "
            "again (retry_after, and HTTP's Retry-After).",
        ),
    ] = 5,
    request_read_seconds: Annotated[
        float,
        typer.Option(
            "--request-read-seconds",
            metavar="SECONDS",
            min=0.001,
            help="How long a request's head may take to arrive whole, counted from its first "
            "byte (not from the connection), and how long a body may pause; then 408.",
        ),
    ] = 10,
    idle_connection_seconds: Annotated[
        float,
        typer.Option(
            "--idle-connection-seconds",
            metavar="SECONDS",
            min=0.001,
            help="How long a new connection may stay silent before its first byte; then it "
            "is closed.",
        ),
    ] = 60,
    scenarios: Annotated[
        list[str] | None,
        typer.Option(
            "--scenarios",
            metavar="PACK",
            help="Serve a pack of scenarios beside the world it runs on (an installed pack's "
            "name or module:attr): OpenEnv's Task API lists its tasks and a reset's split and "
            "index pick one. Repeat it for several worlds, one pack each.",
            show_default=False,
        ),
    ] = None,
    storage: StorageOption = None,
) -> None:
    """Serve worlds over OpenEnv: one session per WebSocket connection to /ws."""
    world = several_worlds(world_arguments, world)
    if all_worlds and world:
        raise typer.BadParameter(
            "serves every installed world; give it without naming worlds", param_hint="--all"
        )
    with failures():
        if storage is not None:
            # The process's default for a reset naming no storage; worker processes
            # inherit it, as they would the variable set by hand.
            os.environ[STORAGE_VARIABLE] = check_storage(storage)
        cli = session(ctx)
        if all_worlds:
            registry = cli.registry()
            names = registry.names()
            if not names:
                fail("no worlds are installed; install a world package, or name one with --world")
            chosen = [registry.load(name) for name in names]
        elif world:
            chosen = [cli.find_world(spec).world for spec in world]
        else:
            chosen = [cli.find_world(None).world]
        from seahaven_openenv.serve import serve

        serve(
            chosen,
            host=host,
            port=port,
            max_concurrent_envs=max_concurrent_envs,
            concurrency=concurrency,
            session_timeout=session_timeout or None,
            resume_grace=resume_grace,
            include_control_tools=include_control_tools,
            console=not no_console,
            log_level=log_level.value,
            allowed_hosts=allow_host or [],
            allowed_origins=allow_origin or [],
            scenarios=scenarios or [],
            workers=workers,
            snapshot_limit=snapshot_limit,
            snapshot_memory=snapshot_memory,
            snapshot_age=snapshot_age,
            admission_queue=admission_queue,
            admission_wait=admission_wait,
            retry_after=retry_after,
            request_read_seconds=request_read_seconds,
            idle_connection_seconds=idle_connection_seconds,
        )


def hub_command(
    wheelhouse: Annotated[
        bool,
        typer.Option(
            "--wheelhouse",
            help="Also build wheels/, every wheel the image installs (Seahaven, its plugins, "
            "the world and their dependencies), and write a Dockerfile that installs from it "
            "with no package index.",
        ),
    ] = False,
) -> None:
    """Add the files publishing to a hub needs: openenv.yaml, a Dockerfile, README front matter.

    Run it in a world's project. It never overwrites: if anything it would write
    is already there, it names each one and writes nothing.
    """
    with failures():
        from seahaven_openenv.hub import publish

        project, written = publish(
            wheelhouse=wheelhouse,
            say=lambda line: typer.echo(f"{line}...", err=True),
            note=lambda line: typer.echo(f"note: {line}", err=True),
        )
        for path in written:
            verb = "updated" if path.name == "README.md" else "wrote"
            suffix = "/" if path.is_dir() else ""
            typer.echo(f"{verb} {path.relative_to(project.root)}{suffix}")
        typer.echo(
            f"The image serves {project.app} on port 8000; build it with "
            f"docker build -t {project.package} . and publish it with openenv push."
        )


@hookimpl
def seahaven_cli(app: typer.Typer) -> None:
    """Add ``seahaven serve`` and ``seahaven hub``."""
    app.command("serve")(serve_command)
    app.command("hub")(hub_command)
