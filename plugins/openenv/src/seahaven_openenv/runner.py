"""Running an ASGI app under uvicorn as every Seahaven server runs: bound first, stopped cleanly.

Both servers of the plugin (the OpenEnv server of ``serve.py`` and the HTTP
test server of ``http_server.py``) run through here. The socket is bound
before uvicorn starts, so a port in use is one clear error and the port chosen
for ``0`` is known before the first connection; Ctrl-C and SIGTERM end the
server gracefully and the process exits 0; a server runs either in the
foreground or on a background thread for the length of a ``with`` block.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

import uvicorn

from seahaven.errors import WorldBug

__all__ = ["StoppableServer", "bind", "in_background", "in_foreground", "server_for"]


class StoppableServer(uvicorn.Server):
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


def server_for(application: Any, *, host: str, port: int, log_level: str) -> StoppableServer:
    """A uvicorn server for ``application``: one worker, no access log, no per-frame deflate."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise WorldBug(f"port must be a number from 0 to 65535, not {port!r}")
    config = uvicorn.Config(
        application,
        host=host,
        port=port,
        workers=1,
        log_level=log_level,
        access_log=False,
        # Compressing every frame costs more CPU than a loopback or data-centre link saves.
        ws_per_message_deflate=False,
        lifespan="on",
    )
    return StoppableServer(config)


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (``0``: a free port), or a ``WorldBug`` naming the fix."""
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


async def _until_stopped(server: uvicorn.Server, sock: socket.socket) -> bool:
    """Run ``server`` on ``sock``; answer whether it started (uvicorn exits on a failed start)."""
    try:
        await server.serve(sockets=[sock])
    except SystemExit:
        return False
    return server.started


def in_foreground(
    server: uvicorn.Server,
    *,
    host: str,
    port: int,
    announce: Callable[[int], Sequence[str]],
    out: TextIO | None = None,
) -> None:
    """Run ``server`` until it is stopped; once it listens, print ``announce(bound_port)``."""
    stream = sys.stdout if out is None else out
    sock = bind(host, port)
    bound: int = sock.getsockname()[1]

    async def run() -> bool:
        task = asyncio.create_task(_until_stopped(server, sock))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            for line in announce(bound):
                print(line, file=stream, flush=True)
        return await task

    try:
        started = asyncio.run(run())
    finally:
        sock.close()
    if not started:
        raise WorldBug(f"the server on {host}:{bound} failed to start; its log above says why")


@contextlib.contextmanager
def in_background(
    server: uvicorn.Server, *, host: str, port: int, startup_timeout: float = 30.0
) -> Iterator[int]:
    """Run ``server`` on a background thread for the block; yield the port it listens on."""
    failure: list[BaseException] = []
    sock = bind(host, port)

    def run() -> None:
        try:
            asyncio.run(_until_stopped(server, sock))
        except BaseException as error:  # reported to the caller below
            failure.append(error)

    thread = threading.Thread(target=run, name="seahaven-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    try:
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise WorldBug(
                    f"the server did not start on {host}:{port}"
                    + (f": {failure[0]!r}" if failure else "")
                )
            time.sleep(0.01)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()
