"""Run the server: uvicorn, one worker, one event loop, the app of ``seahaven_openenv.web.server``.

``serve(world, ...)`` is what ``seahaven serve`` runs. It prints where it
listens once the socket is bound, so ``--port 0`` (any free port) is usable:
the printed address has the port the system chose. ``running(world)`` is the
same server on a background thread for the length of a ``with`` block, for a
harness or a test that wants a real server inside its own process.
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TextIO, TypedDict, Unpack, cast

import uvicorn
from fastapi import FastAPI

import seahaven
from seahaven.calls.concurrency import set_concurrency
from seahaven.errors import WorldBug
from seahaven.scenarios import ScenarioSet
from seahaven_openenv.front import runner
from seahaven_openenv.front.guard import bound_hosts
from seahaven_openenv.sessions import admission, snapframes
from seahaven_openenv.sessions.resume import DEFAULT_RESUME_GRACE_SECONDS
from seahaven_openenv.sessions.session_pool import SessionPool
from seahaven_openenv.web.server import app_for_worlds

# Allocations between two collections of the youngest generation (Python's default is 700).
GC_FIRST_THRESHOLD = 20_000
# uvicorn's log levels, as ``--log-level`` takes them, and the logging level each is.
LOG_LEVELS = {
    "critical": logging.CRITICAL,
    "error": logging.ERROR,
    "warning": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
    "trace": logging.DEBUG,
}

__all__ = [
    "LOG_LEVELS",
    "RunningServer",
    "ServerSettings",
    "addresses",
    "build",
    "running",
    "serve",
]


def addresses(
    worlds: Sequence[seahaven.World],
    host: str,
    port: int,
    *,
    console: bool,
    packs: Mapping[str, ScenarioSet] | None = None,
) -> list[str]:
    """The lines ``serve`` prints once it listens: each world's base URL, WebSocket and console.

    A world served with a pack (``packs``, by world name) gets a line naming its Task API.
    """
    shown_host = f"[{host}]" if ":" in host else host
    base = f"http://{shown_host}:{port}"
    lines = []
    for world in worlds:
        root = base if len(worlds) == 1 else f"{base}/worlds/{world.name}"
        ws = root.replace("http://", "ws://", 1)
        lines.append(f"Serving world {world.name!r} at {root} (sessions on {ws}/ws)")
        if console:
            lines.append(f"Web console for {world.name!r}: {root}/console")
        pack = (packs or {}).get(world.name)
        if pack is not None:
            lines.append(
                f"Tasks of pack {pack.name!r} {pack.version} for {world.name!r}: "
                f"{root}/{world.name}/splits (reset with split and index, or scenario=pack/id)"
            )
    return lines


@dataclass
class RunningServer:
    """A server running on a background thread, as ``running(...)`` yields it."""

    host: str
    port: int
    app: FastAPI

    @property
    def base_url(self) -> str:
        """The HTTP base URL, for ``SeahavenClient(base_url=...)``."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}"

    @property
    def hub(self) -> SessionPool:
        """What the server's sessions share: its capacity and live sessions."""
        hub: SessionPool = self.app.state.hub
        return hub


class ServerSettings(TypedDict, total=False):
    """How ``serve``, ``running`` and ``build`` set a server up; every key is optional."""

    #: The address to bind (``127.0.0.1``; ``0.0.0.0`` for every interface).
    host: str
    #: The port to bind (``8000`` for ``serve``, ``0``, a free one, for ``running``).
    port: int
    #: How many sessions may be open at once (``None``: 500, or as many as descriptors hold).
    max_concurrent_envs: int | None
    #: The process's call slots, resized to this; ``0`` removes the bound (unchanged by default).
    concurrency: int | None
    #: Seconds of idleness before a session is reaped; ``None`` or ``0``, never (the default).
    session_timeout: float | None
    #: Seconds a ``/ws`` session waits for its client to resume it after its connection
    #: dropped; ``0`` turns resume off (30).
    resume_grace: float
    #: Let sessions call the deprecated control tool (``False``).
    include_control_tools: bool
    #: Serve the web console at ``/console`` (``True``).
    console: bool
    #: The log level of uvicorn and of the framework's own loggers (``info`` for ``serve``,
    #: ``warning`` for ``running``).
    log_level: str
    #: Host names answered besides the loopback names and ``host`` (``*.example.org``, ``*``).
    allowed_hosts: Sequence[str]
    #: Browser origins answered besides the server's own pages (``http://localhost:3000``, ``*``).
    allowed_origins: Sequence[str]
    #: Packs of scenarios (or their names), each served beside the world it runs on: its
    #: Task API, and ``reset(split=..., index=...)``.
    scenarios: Sequence[ScenarioSet | str]
    #: How many server processes share the port (``1``: this process alone, no front process;
    #: more is ``serve``'s alone: see ``seahaven_openenv.front.workers``).
    workers: int
    #: The most snapshots kept at once (64); older ones are evicted past it.
    snapshot_limit: int
    #: The most MiB the kept snapshots hold together (1024); older ones are evicted past it.
    snapshot_memory: float
    #: Seconds a snapshot is kept (3600).
    snapshot_age: float
    #: How many new connections may wait for a seat past capacity (100); 0 refuses at once.
    admission_queue: int
    #: Seconds a new connection waits for a seat before it is refused (30).
    admission_wait: float
    #: Seconds a refusal at capacity tells the client to wait before trying again (5).
    retry_after: int
    #: Seconds a request's head may take to arrive whole, counted from its first byte, and a
    #: body may pause (10); past them the connection is answered 408 and closed.
    request_read_seconds: float
    #: Seconds a new connection may stay silent before its first byte (60); then it is closed.
    idle_connection_seconds: float


def _check_read_times(settings: ServerSettings) -> None:
    """A ``WorldBug`` naming the read or idle time given that is not seconds above zero."""
    for key in ("request_read_seconds", "idle_connection_seconds"):
        value = settings.get(key)
        if value is not None:
            runner.checked_seconds(key, value)


def build(
    worlds: seahaven.World | Sequence[seahaven.World], **settings: Unpack[ServerSettings]
) -> tuple[list[seahaven.World], FastAPI, uvicorn.Server]:
    """The worlds, their app, and a uvicorn server for it, configured as ``serve`` runs it."""
    host = settings.get("host", "127.0.0.1")
    port = settings.get("port", 8000)
    concurrency = settings.get("concurrency")
    chosen = [worlds] if isinstance(worlds, seahaven.World) else list(worlds)
    _check_read_times(settings)
    if concurrency is not None:
        set_concurrency(concurrency)
    application = app_for_worlds(
        chosen,
        scenarios=settings.get("scenarios"),
        include_control_tools=settings.get("include_control_tools", False),
        max_concurrent_envs=settings.get("max_concurrent_envs"),
        session_timeout=settings.get("session_timeout"),
        resume_grace=settings.get("resume_grace", DEFAULT_RESUME_GRACE_SECONDS),
        console=settings.get("console", True),
        allowed_hosts=[*settings.get("allowed_hosts", ()), *bound_hosts(host)],
        allowed_origins=settings.get("allowed_origins"),
        snapshot_limit=settings.get("snapshot_limit", snapframes.DEFAULT_SNAPSHOT_LIMIT),
        snapshot_memory=settings.get("snapshot_memory", snapframes.DEFAULT_SNAPSHOT_MEMORY_MB),
        snapshot_age=settings.get("snapshot_age", snapframes.DEFAULT_SNAPSHOT_AGE_SECONDS),
        admission_queue=settings.get("admission_queue", admission.DEFAULT_ADMISSION_QUEUE),
        admission_wait=settings.get("admission_wait", admission.DEFAULT_ADMISSION_WAIT_SECONDS),
        retry_after=settings.get("retry_after", admission.DEFAULT_RETRY_AFTER_SECONDS),
    )
    server = runner.server_for(
        application,
        host=host,
        port=port,
        log_level=settings.get("log_level", "info"),
        read_seconds=settings.get("request_read_seconds"),
        idle_seconds=settings.get("idle_connection_seconds"),
    )
    return chosen, application, server


def serve(
    worlds: seahaven.World | Sequence[seahaven.World],
    *,
    out: TextIO | None = None,
    **settings: Unpack[ServerSettings],
) -> None:
    """Serve ``worlds`` in the foreground until interrupted (Ctrl-C or SIGTERM end it cleanly).

    ``settings`` are ``ServerSettings``' keys. The addresses are printed to ``out``
    (standard output by default) once the socket is bound, with the port actually bound.
    """
    workers = settings.get("workers", 1)
    # Checked before any socket is bound or worker forked.
    _check_read_times(settings)
    if workers != 1:
        _serve_with_workers(worlds, workers, out, settings)
        return
    chosen, application, server = build(worlds, **settings)
    host, port = settings.get("host", "127.0.0.1"), settings.get("port", 8000)
    console = settings.get("console", True)
    _show_framework_logs(settings.get("log_level", "info"))
    _tune_garbage_collection()
    runner.in_foreground(
        server,
        host=host,
        port=port,
        announce=lambda bound: addresses(
            chosen, host, bound, console=console, packs=application.state.packs
        ),
        out=out,
    )


def _serve_with_workers(
    worlds: seahaven.World | Sequence[seahaven.World],
    workers: int,
    out: TextIO | None,
    settings: ServerSettings,
) -> None:
    """``serve`` with several processes behind a front process (``front.workers``)."""
    from seahaven_openenv.front.workers import serve_workers
    from seahaven_openenv.wire.tasks import packs_for

    chosen = [worlds] if isinstance(worlds, seahaven.World) else list(worlds)
    host = settings.get("host", "127.0.0.1")
    console = settings.get("console", True)
    level = settings.get("log_level", "info")
    _show_framework_logs(level)
    # Checked here, once, so a world that does not compose fails before any worker is forked.
    served = packs_for(chosen, settings.get("scenarios"))
    packs = {name: each.pack for name, each in served.items()}
    for world in chosen:
        world.composition()

    def prepare() -> None:
        _tune_garbage_collection()

    own = cast(ServerSettings, {key: value for key, value in settings.items() if key != "workers"})

    def build_worker(port: int) -> tuple[FastAPI, uvicorn.Server]:
        worker_settings = ServerSettings(**own)
        worker_settings["port"] = port
        _, application, server = build(chosen, **worker_settings)
        return application, server

    serve_workers(
        build_worker,
        workers,
        own,
        out=out,
        announce=lambda bound: addresses(chosen, host, bound, console=console, packs=packs),
        prepare=prepare,
    )


@contextmanager
def running(
    worlds: seahaven.World | Sequence[seahaven.World],
    *,
    startup_timeout: float = 30.0,
    **settings: Unpack[ServerSettings],
) -> Iterator[RunningServer]:
    """Serve ``worlds`` on a background thread for the ``with`` block; a free port by default.

    For a harness or a test that wants a real server inside its own process::

        with running(world) as server:
            with SeahavenClient(base_url=server.base_url) as env:
                ...

    ``settings`` are ``ServerSettings``' keys. Leaving the block stops the server
    and ends every session it still holds.
    """
    if settings.get("workers", 1) != 1:
        raise WorldBug(
            "running() serves from this process alone; for several workers run "
            "`seahaven serve --workers N` (or serve(..., workers=N)) in a process of its own"
        )
    settings = {"port": 0, "log_level": "warning", **settings}
    _, application, server = build(worlds, **settings)
    host, port = settings.get("host", "127.0.0.1"), settings.get("port", 0)
    with runner.in_background(
        server, host=host, port=port, startup_timeout=startup_timeout
    ) as bound:
        yield RunningServer(host, bound, application)


def _tune_garbage_collection() -> None:
    """Keep the collector's full passes short in a long-lived server.

    A full collection walks every tracked object, and a server holds a great many
    that never become garbage: everything imported at start-up, and each open
    session's instance. Measured under a load of 400 sessions, those passes took
    65-90 ms each, a stall for every frame in flight. Freezing what start-up built
    takes it out of every later pass, and a larger first threshold makes passes rarer.
    """
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(GC_FIRST_THRESHOLD, middle, oldest)


def _show_framework_logs(level: str) -> None:
    """Give the framework's own loggers a handler at ``level``, so what they say is seen.

    An internal error's traceback is logged at ERROR, and what the server decides
    while it runs (a kind of work moving to worker threads, a session reaped) at INFO.
    """
    logger = logging.getLogger("seahaven")
    if logger.level == logging.NOTSET:
        logger.setLevel(LOG_LEVELS[level])
    if logger.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
