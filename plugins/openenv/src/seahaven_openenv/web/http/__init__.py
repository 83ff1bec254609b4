"""``seahaven.http``: a world that mocks a REST API, as one handler function and a test server.

A handler is ``handle(ctx, request) -> response``: it reads and writes the
world's database through ``ctx`` exactly as a tool does, routes the request
itself, and answers an ``HttpResponse``. A tool calls the handler with its own
``ctx`` (a plain function call, inside the tool's transaction); the test server
serves it to software under test, one world instance per id under
``/worlds/{id}/``.

``HttpRequest`` and ``HttpResponse`` are plain values. ``app(world, handle)``
builds the server as an ASGI application, ``serve(world, handle)`` runs it under
uvicorn until stopped, ``running(world, handle)`` runs it on a background thread
for a ``with`` block, and ``main(world, handle)`` is a whole command line with
the server's options, for a world's ``serve_http.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn, TextIO

import seahaven
from seahaven_openenv.front.guard import bound_hosts
from seahaven_openenv.web.http.launch import (
    RunningHttpServer,
    command_line,
    run_in_background,
    serve_forever,
)
from seahaven_openenv.web.http.messages import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_INSTANCES,
    HttpHandler,
    HttpRequest,
    HttpResponse,
)
from seahaven_openenv.web.http.server import HttpWorldApp

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_INSTANCES",
    "HttpHandler",
    "HttpRequest",
    "HttpResponse",
    "app",
    "main",
    "running",
    "serve",
]


def app(
    world: seahaven.World,
    handle: HttpHandler,
    *,
    max_instances: int = DEFAULT_MAX_INSTANCES,
    reset_options: Mapping[str, Any] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> HttpWorldApp:
    """The test server as an ASGI application, for an ASGI server of your own (one worker).

    ``reset_options`` are the keyword arguments each instance is made with
    (``fixture``, ``seed``, ``now``, ``clock_mode``, ``state_format``,
    ``startup``, ``setup_sql``); they are checked, by making and destroying one
    instance, before this returns. ``max_instances=0`` means no limit. A body over
    ``max_body_bytes`` is refused with 413. ``allowed_hosts`` and ``allowed_origins``
    are the host names and browser origins answered besides the loopback names and
    requests without an ``Origin`` (``*`` for any).
    """
    return HttpWorldApp(
        world,
        handle,
        max_instances=max_instances,
        reset_options=reset_options,
        max_body_bytes=max_body_bytes,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )


def serve(
    world: seahaven.World,
    handle: HttpHandler,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_instances: int = DEFAULT_MAX_INSTANCES,
    reset_options: Mapping[str, Any] | None = None,
    log_level: str = "info",
    out: TextIO | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> None:
    """Serve ``handle`` in the foreground until Ctrl-C or SIGTERM, which end it cleanly.

    Prints the base URL a client uses (``http://HOST:PORT/worlds/{id}``) to
    ``out`` (standard output) once the socket is bound; ``port=0`` picks a free
    port, and the printed address has it. Stopping destroys every instance.
    """
    application = app(
        world,
        handle,
        max_instances=max_instances,
        reset_options=reset_options,
        max_body_bytes=max_body_bytes,
        allowed_hosts=[*(allowed_hosts or ()), *bound_hosts(host)],
        allowed_origins=allowed_origins,
    )
    serve_forever(
        application,
        host=host,
        port=port,
        log_level=log_level,
        out=out,
    )


@contextmanager
def running(
    world: seahaven.World,
    handle: HttpHandler,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    max_instances: int = DEFAULT_MAX_INSTANCES,
    reset_options: Mapping[str, Any] | None = None,
    log_level: str = "warning",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> Iterator[RunningHttpServer]:
    """The test server on a background thread for the ``with`` block, on a free port by default.

    Yields where it listens (``server.url("test1")`` is an instance's base URL);
    leaving the block stops it and destroys every instance.
    """
    application = app(
        world,
        handle,
        max_instances=max_instances,
        reset_options=reset_options,
        max_body_bytes=max_body_bytes,
        allowed_hosts=[*(allowed_hosts or ()), *bound_hosts(host)],
        allowed_origins=allowed_origins,
    )
    with run_in_background(application, host=host, port=port, log_level=log_level) as server:
        yield server


def main(world: seahaven.World, handle: HttpHandler, argv: Sequence[str] | None = None) -> NoReturn:
    """The test server's command line, for a world's ``serve_http.py``; exits when it stops.

    Options: ``--host``, ``--port``, ``--max-instances``, ``--max-body-bytes``,
    ``--allow-host``, ``--allow-origin`` and the reset options
    ``--fixture``, ``--seed``, ``--now``, ``--clock-mode`` (or all of them at once
    as ``--reset-options JSON``), each of the last five also read from its
    ``SEAHAVEN_*`` variable. A failure is one line on stderr and exit status 1; a
    malformed option exits 2.
    """
    raise SystemExit(command_line(world, handle, argv))
