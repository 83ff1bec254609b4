"""A worker of ``--workers``: serving the sockets the front hands it, one request each.

The worker runs uvicorn with no listener of its own: each socket the front
passes over the control socket (``SCM_RIGHTS``) is served with uvicorn's own
protocol (``loop.connect_accepted_socket``). Every plain HTTP response says
``connection: close`` (``CloseAfterResponse``), so the front routes each
request on its own; the worker dies with the front (``die_with_parent``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import signal
import socket
from typing import Any

from seahaven_openenv.sessions import pool

__all__ = ["CloseAfterResponse", "die_with_parent", "serve_handed"]

_log = logging.getLogger("seahaven.openenv")


class CloseAfterResponse:
    """ASGI middleware: every plain HTTP response says ``connection: close``.

    The front routes a connection by its first request, so a kept-alive
    connection's next request (naming another worker's session, say) would
    land on the wrong worker. WebSockets are untouched: they are one session.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass the request on; add ``connection: close`` to its response's headers."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def closing(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", ()), (b"connection", b"close")]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, closing)


def die_with_parent() -> None:
    """Ask Linux to send this process SIGTERM when the front process dies."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


async def serve_handed(server: Any, control: socket.socket, seat: pool.Seat) -> bool:
    """Run ``server`` with no listener of its own, serving each socket the front hands over."""
    loop = asyncio.get_running_loop()
    serving = asyncio.create_task(server.serve(sockets=[]))
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if not server.started:
        with contextlib.suppress(SystemExit):
            await serving
        return False
    config = server.config

    def protocol() -> asyncio.Protocol:
        # What uvicorn's own server builds for each connection it accepts.
        made: asyncio.Protocol = config.http_protocol_class(
            config=config,
            server_state=server.server_state,
            app_state=server.lifespan.state,
            _loop=loop,
        )
        return made

    pending: set[asyncio.Future[Any]] = set()

    def connected(future: asyncio.Future[Any]) -> None:
        pending.discard(future)
        if not future.cancelled() and future.exception() is not None:
            _log.debug("a handed-over connection failed: %s", future.exception())

    def receive() -> None:
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(control, 16, 64)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                message, fds = b"", []
            if not message and not fds:
                # The front is gone: nothing more will come, and no client can reach us.
                loop.remove_reader(control.fileno())
                server.should_exit = True
                return
            for fd in fds:
                sock = socket.socket(fileno=fd)
                if server.should_exit:
                    sock.close()
                    continue
                future = asyncio.ensure_future(loop.connect_accepted_socket(protocol, sock))
                pending.add(future)
                future.add_done_callback(connected)

    control.setblocking(False)
    loop.add_reader(control.fileno(), receive)
    seat.board.set(seat.index, "ready", 1)
    try:
        await serving
    except SystemExit:
        return False
    finally:
        with contextlib.suppress(Exception):
            loop.remove_reader(control.fileno())
        control.close()
    return True
