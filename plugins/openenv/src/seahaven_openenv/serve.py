"""Run the server: uvicorn, one worker, one event loop, the app of ``seahaven_openenv.server``.

``serve(world, ...)`` is what ``seahaven serve`` runs. It prints where it
listens once the socket is bound, so ``--port 0`` (any free port) is usable:
the printed address has the port the system chose. ``running(world)`` is the
same server on a background thread for the length of a ``with`` block, for a
harness or a test that wants a real server inside its own process.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TextIO, TypedDict, Unpack

import uvicorn
from fastapi import FastAPI

import seahaven
from seahaven.errors import WorldBug
from seahaven.instances import set_concurrency
from seahaven_openenv.server import DEFAULT_MAX_CONCURRENT_ENVS, Hub, app_for_worlds

# Allocations between two collections of the youngest generation (Python's default is 700).
GC_FIRST_THRESHOLD = 20_000

__all__ = ["RunningServer", "ServerSettings", "addresses", "bind", "build", "running", "serve"]


def addresses(
    worlds: Sequence[seahaven.World], host: str, port: int, *, console: bool
) -> list[str]:
    """The lines ``serve`` prints once it listens: each world's base URL, WebSocket and console."""
    shown_host = f"[{host}]" if ":" in host else host
    base = f"http://{shown_host}:{port}"
    lines = []
    for world in worlds:
        root = base if len(worlds) == 1 else f"{base}/worlds/{world.name}"
        ws = root.replace("http://", "ws://", 1)
        lines.append(f"Serving world {world.name!r} at {root} (sessions on {ws}/ws)")
        if console:
            lines.append(f"Web console for {world.name!r}: {root}/console")
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
    def hub(self) -> Hub:
        """What the server's sessions share: its capacity and live sessions."""
        hub: Hub = self.app.state.hub
        return hub


class ServerSettings(TypedDict, total=False):
    """How ``serve``, ``running`` and ``build`` set a server up; every key is optional."""

    #: The address to bind (``127.0.0.1``; ``0.0.0.0`` for every interface).
    host: str
    #: The port to bind (``8000`` for ``serve``, ``0``, a free one, for ``running``).
    port: int
    #: How many sessions may be open at once (500).
    max_concurrent_envs: int
    #: The process's concurrency gate resized to this; ``0`` removes it (unchanged by default).
    concurrency: int | None
    #: Seconds of idleness before a session is reaped; ``None`` or ``0``, never (the default).
    session_timeout: float | None
    #: Let sessions call the deprecated control tool (``False``).
    include_control_tools: bool
    #: Serve the web console at ``/console`` (``True``).
    console: bool
    #: uvicorn's log level (``info`` for ``serve``, ``warning`` for ``running``).
    log_level: str


def build(
    worlds: seahaven.World | Sequence[seahaven.World], **settings: Unpack[ServerSettings]
) -> tuple[list[seahaven.World], FastAPI, uvicorn.Server]:
    """The worlds, their app, and a uvicorn server for it, configured as ``serve`` runs it."""
    host = settings.get("host", "127.0.0.1")
    port = settings.get("port", 8000)
    concurrency = settings.get("concurrency")
    chosen = [worlds] if isinstance(worlds, seahaven.World) else list(worlds)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise WorldBug(f"port must be a number from 0 to 65535, not {port!r}")
    if concurrency is not None:
        set_concurrency(concurrency)
    application = app_for_worlds(
        chosen,
        include_control_tools=settings.get("include_control_tools", False),
        max_concurrent_envs=settings.get("max_concurrent_envs", DEFAULT_MAX_CONCURRENT_ENVS),
        session_timeout=settings.get("session_timeout"),
        console=settings.get("console", True),
    )
    config = uvicorn.Config(
        application,
        host=host,
        port=port,
        workers=1,
        log_level=settings.get("log_level", "info"),
        access_log=False,
        # Compressing every frame costs more CPU than a loopback or data-centre link saves.
        ws_per_message_deflate=False,
        lifespan="on",
    )
    return chosen, application, _Server(config)


class _Server(uvicorn.Server):
    """uvicorn's server, ending cleanly on Ctrl-C or SIGTERM.

    uvicorn shuts down gracefully on a signal and then raises the signal again,
    so a stopped server would exit as if killed. A server that was asked to stop
    and did has succeeded: its process exits 0.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        stopping = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in stopping}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (``0``: a free port), or a ``WorldBug`` naming the fix.

    The server binds before uvicorn starts, so a port in use is one clear error and
    the port chosen for ``0`` is known before the first connection.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise WorldBug(
            f"cannot listen on {host}:{port}: {error.strerror or error}; choose another --port, "
            "or stop what is using it"
        ) from None
    return sock


async def _serve_until_stopped(server: uvicorn.Server, sock: socket.socket) -> bool:
    """Run ``server`` on ``sock``; answer whether it started (uvicorn exits on a failed start)."""
    try:
        await server.serve(sockets=[sock])
    except SystemExit:
        return False
    return server.started


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
    chosen, _, server = build(worlds, **settings)
    host, port = settings.get("host", "127.0.0.1"), settings.get("port", 8000)
    console = settings.get("console", True)
    _show_framework_errors()
    _tune_garbage_collection()
    stream = sys.stdout if out is None else out
    sock = bind(host, port)
    bound = sock.getsockname()[1]

    async def run() -> bool:
        task = asyncio.create_task(_serve_until_stopped(server, sock))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            for line in addresses(chosen, host, bound, console=console):
                print(line, file=stream, flush=True)
        return await task

    try:
        started = asyncio.run(run())
    finally:
        sock.close()
    if not started:
        raise WorldBug(f"the server on {host}:{bound} failed to start; its log above says why")


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
    settings = {"port": 0, "log_level": "warning", **settings}
    _, application, server = build(worlds, **settings)
    host, port = settings.get("host", "127.0.0.1"), settings.get("port", 0)
    failure: list[BaseException] = []
    sock = bind(host, port)

    def run() -> None:
        try:
            asyncio.run(_serve_until_stopped(server, sock))
        except BaseException as error:  # reported to the caller below
            failure.append(error)

    thread = threading.Thread(target=run, name="seahaven-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(timeout=startup_timeout)
            sock.close()
            raise WorldBug(
                f"the server did not start on {host}:{port}"
                + (f": {failure[0]!r}" if failure else "")
            )
        time.sleep(0.01)
    try:
        yield RunningServer(host, sock.getsockname()[1], application)
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()


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


def _show_framework_errors() -> None:
    """Give the framework's own loggers a handler, so an internal error's traceback is seen."""
    logger = logging.getLogger("seahaven")
    if logger.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)
