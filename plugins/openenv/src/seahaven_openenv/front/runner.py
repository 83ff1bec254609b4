"""Running an ASGI app under uvicorn as every Seahaven server runs: bound first, stopped cleanly.

Both servers of the plugin (the OpenEnv server of ``serve.py`` and the HTTP
test server of ``http_server.py``) run through here. The socket is bound
before uvicorn starts, so a port in use is one clear error and the port chosen
for ``0`` is known before the first connection; Ctrl-C and SIGTERM end the
server gracefully and the process exits 0; a server runs either in the
foreground or on a background thread for the length of a ``with`` block.

No connection is held by a client that stops half way: the head of a request
(its request line and headers) must arrive whole within ``REQUEST_READ_SECONDS``
of its first byte and be at most ``HEAD_LIMIT_BYTES`` long, and a body must keep
arriving, never pausing longer than that, or the connection is closed. The
clock starts at the first byte, not when the connection is accepted, so a
client that only waited for the CPU before it wrote its request (a machine
running thousands of sessions) is served; a connection that sends nothing at
all is closed after ``IDLE_CONNECTION_SECONDS``, so idle sockets are bounded
too. uvicorn itself only times out a connection idle between requests.

uvicorn logs each WebSocket it accepts with its query string, which may carry a
session's credentials (``resume=``, ``session_id=``, ``snapshot=``): its log
shows them cut short (``CredentialsHidden``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

import uvicorn

from seahaven.errors import WorldBug

__all__ = [
    "HEAD_LIMIT_BYTES",
    "IDLE_CONNECTION_SECONDS",
    "KEEP_ALIVE_SECONDS",
    "REQUEST_READ_SECONDS",
    "CredentialsHidden",
    "StoppableServer",
    "bind",
    "bounded_http_protocol",
    "checked_seconds",
    "hide_credentials",
    "in_background",
    "in_foreground",
    "server_for",
]

_log = logging.getLogger("seahaven.openenv")

REQUEST_READ_SECONDS = 10.0
"""How long a request's head may take to arrive from its first byte, and its body may pause."""
IDLE_CONNECTION_SECONDS = 60.0
"""How long a new connection may stay silent before its first byte; then it is closed."""
HEAD_LIMIT_BYTES = 64 * 1024
"""The longest request head (request line and headers) a server reads."""
KEEP_ALIVE_SECONDS = 5
"""How long a connection may sit idle between two requests."""

_Base: Any
try:
    # uvicorn's own choice: httptools' native parsing when it is installed, else h11.
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base
except ImportError:  # pragma: no cover - uvicorn without its standard extras
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base


class _BoundedRequests(_Base):  # type: ignore[misc]
    """uvicorn's HTTP protocol, closing a connection whose request stops arriving.

    A timer runs while the connection waits for a request's head, from the head's
    first byte (the connection's first, or the first after an idle keep-alive), and
    is not moved by more bytes of that head; while a body arrives it restarts with
    every piece. Once the request is in whole, the application takes as long as it
    takes. Before its first byte a connection has ``idle_seconds``.
    """

    read_seconds: float = REQUEST_READ_SECONDS
    head_limit: int = HEAD_LIMIT_BYTES
    idle_seconds: float = IDLE_CONNECTION_SECONDS

    def connection_made(self, transport: asyncio.Transport) -> None:
        self._read_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._silent = True
        super().connection_made(transport)
        self._start_timer(self.idle_seconds)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._silent and data:
            # The head's clock starts now, not at accept(): a client that connected and then
            # waited for the CPU before writing has not been slow to send its request.
            self._silent = False
            self._stop_timer()
        waiting = self._waiting_for_head()
        if waiting:
            self._head_bytes += len(data)
        super().data_received(data)
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            # Closed, or handed to the WebSocket protocol after an upgrade.
            self._stop_timer()
        elif self._waiting_for_head():
            if self._head_bytes > self.head_limit:
                self._refuse(b"431 Request Header Fields Too Large")
            elif self._read_timer is None:
                self._start_timer()
        else:
            self._head_bytes = 0
            if self.cycle.more_body:
                self._stop_timer()
                self._start_timer()
            else:
                self._stop_timer()

    def _waiting_for_head(self) -> bool:
        cycle = self.cycle
        return cycle is None or bool(cycle.response_complete)

    def _start_timer(self, seconds: float | None = None) -> None:
        self._read_timer = asyncio.get_running_loop().call_later(
            self.read_seconds if seconds is None else seconds, self._read_timed_out
        )

    def _stop_timer(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _read_timed_out(self) -> None:
        self._read_timer = None
        if self.transport.is_closing():
            return
        if not self._waiting_for_head() and self.flow.read_paused:
            # The application has not read what came yet; the client is not the slow one.
            self._start_timer()
            return
        if self._silent:
            _log.debug("closed a connection that sent nothing: %s", self.client)
        else:
            _log.debug("closed a connection whose request stopped arriving: %s", self.client)
        if self._waiting_for_head():
            self._refuse(b"408 Request Timeout")
        else:
            self.transport.close()

    def _refuse(self, status: bytes) -> None:
        self._stop_timer()
        self.transport.write(
            b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
        self.transport.close()


def bounded_http_protocol(
    read_seconds: float = REQUEST_READ_SECONDS,
    head_limit: int = HEAD_LIMIT_BYTES,
    idle_seconds: float = IDLE_CONNECTION_SECONDS,
) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol with these bounds on reading a request (see the module)."""
    bounded: type[asyncio.Protocol] = type(
        "BoundedRequests",
        (_BoundedRequests,),
        {
            "read_seconds": checked_seconds("read_seconds", read_seconds),
            "head_limit": int(head_limit),
            "idle_seconds": checked_seconds("idle_seconds", idle_seconds),
        },
    )
    return bounded


def checked_seconds(name: str, value: object) -> float:
    """``value`` as a number of seconds above zero, or a ``WorldBug`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e9:
        raise WorldBug(f"{name} is a number of seconds above 0, not {value!r}")
    return float(value)


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


# A query parameter whose value lets its holder into a session or a snapshot.
_CREDENTIAL = re.compile(r"([?&](?:resume|session_id|snapshot)=)([^&\s\"]{1,6})[^&\s\"]*")


def hide_credentials(text: str) -> str:
    """``text`` with each credential in a query string cut to its first characters and ``...``."""
    return _CREDENTIAL.sub(r"\1\2...", text)


class CredentialsHidden(logging.Filter):
    """A log filter: a resume token, a session id or a snapshot token is never logged whole.

    The first characters stay (a worker's mark, enough to tell two apart in a
    log); the rest, which is what grants access, does not.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        """Cut the credentials in the record's arguments and message; always keep the record."""
        if isinstance(record.args, tuple):
            record.args = tuple(
                hide_credentials(value) if isinstance(value, str) else value
                for value in record.args
            )
        if isinstance(record.msg, str):
            record.msg = hide_credentials(record.msg)
        return True


def _hide_credentials_in_uvicorns_log() -> None:
    for name in ("uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(existing, CredentialsHidden) for existing in logger.filters):
            logger.addFilter(CredentialsHidden())


def server_for(
    application: Any,
    *,
    host: str,
    port: int,
    log_level: str,
    read_seconds: float | None = None,
    idle_seconds: float | None = None,
) -> StoppableServer:
    """A uvicorn server for ``application``: one worker, no access log, no per-frame deflate.

    A request must arrive within ``read_seconds`` of its first byte
    (``REQUEST_READ_SECONDS`` unless given), and a new connection must send that
    byte within ``idle_seconds`` (``IDLE_CONNECTION_SECONDS``); see the module's
    docstring.
    """
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
        http=bounded_http_protocol(
            REQUEST_READ_SECONDS if read_seconds is None else read_seconds,
            idle_seconds=IDLE_CONNECTION_SECONDS if idle_seconds is None else idle_seconds,
        ),
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        h11_max_incomplete_event_size=HEAD_LIMIT_BYTES,
    )
    # After the config, which sets uvicorn's loggers up afresh.
    _hide_credentials_in_uvicorns_log()
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
