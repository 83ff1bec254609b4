"""The HTTP routes of a server of worlds, at module level: each router's endpoints are a class's.

``WorldsRoutes`` is ``GET /worlds`` (and the page at ``/``), on every server;
``IndexRoutes`` is the root of a server of several worlds; ``WorldRoutes`` is
every route of one served world, ``/ws`` included. Each ``*_router`` function
builds the ``APIRouter`` of one of them. ``AnswerHead`` answers ``HEAD``
wherever ``GET`` is answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any

from fastapi import APIRouter, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

import seahaven
from seahaven.errors import WorldBug
from seahaven.fixtures import Fixture
from seahaven.fixtures import load as load_fixture
from seahaven_openenv.console import console_redirect, console_router, worlds_index_page
from seahaven_openenv.front.connection import serve_connection
from seahaven_openenv.sessions import mcp_frames, mcp_sessions, pool, work
from seahaven_openenv.sessions.mcp_sessions import MAX_MCP_BODY_BYTES
from seahaven_openenv.sessions.session import WorldService
from seahaven_openenv.sessions.session_pool import SessionPool
from seahaven_openenv.web import card
from seahaven_openenv.wire import frames
from seahaven_openenv.wire.close_codes import CLOSE_NO_SESSION_HERE
from seahaven_openenv.wire.echo import bounded, clip
from seahaven_openenv.wire.frames import FrameError
from seahaven_openenv.wire.tasks import scenarios_for, task_router

__all__ = [
    "AnswerHead",
    "IndexRoutes",
    "PoolRoutes",
    "WorldRoutes",
    "WorldsRoutes",
    "index_router",
    "listed_fixtures",
    "schema_document",
    "validation_refusal",
    "world_router",
    "worlds_listing",
    "worlds_router",
]

_log = logging.getLogger("seahaven.openenv")

# How long the root's /ws waits for a first frame to answer before it says where to go.
ROOT_SOCKET_WAIT_SECONDS = 10.0


class AnswerHead:
    """ASGI middleware: ``HEAD`` is answered wherever ``GET`` is, as ``GET`` without the body.

    FastAPI's ``GET`` routes do not take ``HEAD``. The route runs as a ``GET``; uvicorn
    still knows the request was a ``HEAD`` and sends the headers alone.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Run a ``HEAD`` request as a ``GET``; pass every other one on unchanged."""
        if scope["type"] == "http" and scope.get("method") == "HEAD":
            scope = {**scope, "method": "GET"}
        await self.app(scope, receive, send)


def _add_route(router: APIRouter, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
    """``router.add_api_route``, naming the route as its endpoint without a leading ``_``.

    FastAPI publishes an endpoint's docstring as the route's description, which
    the routes here never had: so the endpoints in the OpenAPI document are
    private methods with a comment instead, registered under their old names,
    and the document is the one the server always served.
    """
    router.add_api_route(path, endpoint, name=endpoint.__name__.removeprefix("_"), **options)


def worlds_listing(services: Sequence[WorldService]) -> list[dict[str, Any]]:
    """What ``GET /worlds`` answers: each world's name, version, description and base path."""
    return [
        {
            "name": service.name,
            "version": service.world.version,
            "description": card.description(service.world),
            "base_path": f"/worlds/{service.name}",
        }
        for service in services
    ]


class WorldsRoutes:
    """``GET /worlds`` on every server, and the page at ``/`` when the console is served.

    A server of several worlds shows an index linking each world's console there; a
    server of one sends ``/`` to its console.
    """

    def __init__(self, services: Sequence[WorldService]) -> None:
        self.services = services
        self.listing = worlds_listing(services)

    async def _worlds(self) -> list[dict[str, Any]]:
        # The worlds this server serves.
        return self.listing

    async def index(self) -> Response:
        """The page at ``/``: the one world's console, or the index of several."""
        if len(self.services) == 1:
            return console_redirect("console")
        return worlds_index_page(self.listing)


def worlds_router(services: Sequence[WorldService], *, console: bool) -> APIRouter:
    """The router of ``WorldsRoutes``: ``GET /worlds``, and ``/`` with the console."""
    router = APIRouter()
    routes = WorldsRoutes(services)
    _add_route(
        router,
        "/worlds",
        routes._worlds,
        methods=["GET"],
        tags=["Environment Info"],
        summary="The worlds this server serves",
    )
    if console:
        _add_route(router, "/", routes.index, methods=["GET"], include_in_schema=False)
    return router


class PoolRoutes:
    """``/health``, ``/capacity`` and ``/metrics``: what the session pool says of itself."""

    def __init__(self, hub: SessionPool) -> None:
        self.hub = hub

    async def _health(self) -> dict[str, Any]:
        # Health check.
        return pool.health_document(self.hub.seat)

    async def _capacity(self) -> dict[str, int]:
        # Active and maximum sessions.
        return self.hub.capacity()

    async def _metrics(self) -> dict[str, Any]:
        # Sessions, capacity and worker processes.
        return self.hub.metrics()

    def add_to(self, router: APIRouter) -> None:
        """Add the three routes to ``router``."""
        _add_route(
            router,
            "/health",
            self._health,
            methods=["GET"],
            tags=["Health"],
            summary="Health check",
        )
        _add_route(
            router,
            "/capacity",
            self._capacity,
            methods=["GET"],
            tags=["Health"],
            summary="Active and maximum sessions",
        )
        _add_route(
            router,
            "/metrics",
            self._metrics,
            methods=["GET"],
            tags=["Health"],
            summary="Sessions, capacity and worker processes",
        )


class IndexRoutes(PoolRoutes):
    """The root of a server of several worlds: its health, and where each world is."""

    def __init__(self, services: Sequence[WorldService], hub: SessionPool) -> None:
        super().__init__(hub)
        self.listing = worlds_listing(services)
        self.sockets = [f"{world['base_path']}/ws" for world in self.listing]

    async def ws(self, websocket: WebSocket) -> None:
        """No session lives at the root: say where they do, then close."""
        await websocket.accept()
        sockets = self.sockets
        message = (
            f"this server serves {len(self.listing)} worlds, each with its own sessions: open a "
            f"WebSocket to one of {', '.join(sockets)}"
        )
        reason = _close_reason(sockets)
        with contextlib.suppress(Exception):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(websocket.receive(), ROOT_SOCKET_WAIT_SECONDS)
            error = frames.error_frame("SESSION_ERROR", message, worlds=sockets)
            await websocket.send_text(frames.encode(error))
            await websocket.close(CLOSE_NO_SESSION_HERE, reason)

    async def console_page(self) -> Response:
        """``/console`` at the root sends the browser to the index."""
        return console_redirect("./")


def index_router(
    services: Sequence[WorldService], hub: SessionPool, *, console: bool = True
) -> APIRouter:
    """The router of ``IndexRoutes``."""
    router = APIRouter()
    routes = IndexRoutes(services, hub)
    routes.add_to(router)
    router.add_api_websocket_route("/ws", routes.ws)
    if console:
        _add_route(
            router, "/console", routes.console_page, methods=["GET"], include_in_schema=False
        )
    return router


def _close_reason(sockets: Sequence[str]) -> str:
    """A WebSocket close reason naming the session paths, inside the protocol's 123 bytes."""
    reason = "open " + ", ".join(sockets)
    if len(reason.encode("utf-8")) <= 123:
        return reason
    return "open /worlds/<name>/ws; GET /worlds lists the names"


class WorldRoutes(PoolRoutes):
    """Every route of one served world."""

    def __init__(self, service: WorldService, hub: SessionPool) -> None:
        super().__init__(hub)
        self.service = service
        self._card: list[dict[str, Any]] = []
        self._scenario_list: list[list[dict[str, Any]]] = []
        self.http_sessions = mcp_sessions.HttpSessions(service, hub, work.call_work)

    async def _metadata(self) -> dict[str, Any]:
        # The world's name, version and card, made once.
        if not self._card:
            self._card.append(await self.hub.run(card.world_card, self.service.world))
        return self._card[0]

    async def _schema(self) -> dict[str, Any]:
        # The action, observation and state models.
        return schema_document()

    async def _fixtures(self) -> list[dict[str, Any]]:
        # The fixtures a reset can name.
        listed = await self.hub.run(listed_fixtures, self.service.world)
        return [
            {
                "id": fixture.id,
                "description": fixture.description,
                "now": fixture.now,
                "parent_id": fixture.parent_id,
            }
            for fixture in listed
        ]

    async def _scenarios(self) -> list[dict[str, Any]]:
        # The scenarios a reset can name (the console's chooser): listed once, the packs fixed.
        if not self._scenario_list:
            service = self.service
            self._scenario_list.append(
                await self.hub.run(scenarios_for, service.world, service.packs)
            )
        return self._scenario_list[0]

    async def _mcp_http(self, request: Request) -> Response:
        # ``POST /mcp``: OpenEnv's production MCP; anything else is refused.
        body = await _bounded_body(request, MAX_MCP_BODY_BYTES)
        if body is None:
            return JSONResponse(
                status_code=413,
                content=mcp_frames.rpc_error(
                    None,
                    mcp_frames.INVALID_REQUEST,
                    f"the request body is larger than {MAX_MCP_BODY_BYTES} bytes; this route "
                    "reads no more",
                ),
            )
        try:
            parsed = frames.read_json(body)
        except FrameError:
            parsed = None
        if mcp_sessions.handles(parsed):
            answer = await self.http_sessions.answer(parsed)
            if answer is None:
                # A notification: JSON-RPC sends nothing back.
                return Response(status_code=202)
            return Response(
                frames.encode(answer), media_type="application/json", headers=_retry_after(answer)
            )
        return JSONResponse(_mcp_answer(body))

    async def mcp_ws(self, websocket: WebSocket) -> None:
        """``/mcp`` as a WebSocket: every message is answered with the refusal."""
        await websocket.accept()
        with contextlib.suppress(Exception):
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                answer = _mcp_answer(text if text is not None else message.get("bytes") or b"")
                await websocket.send_text(frames.encode(answer))

    async def ws(self, websocket: WebSocket) -> None:
        """``/ws``: one connection, one session (``seahaven_openenv.front.connection``)."""
        await serve_connection(websocket, self.service, self.hub, self.http_sessions)


def world_router(service: WorldService, hub: SessionPool, *, console: bool) -> APIRouter:
    """The router of ``WorldRoutes``, with the console's and the Task API's routes."""
    router = APIRouter()
    routes = WorldRoutes(service, hub)
    routes.add_to(router)
    _add_route(
        router,
        "/metadata",
        routes._metadata,
        methods=["GET"],
        tags=["Environment Info"],
        summary="The world's name, version and card",
    )
    _add_route(
        router,
        "/schema",
        routes._schema,
        methods=["GET"],
        tags=["Schema"],
        summary="The action, observation and state models",
    )
    _add_route(
        router,
        "/fixtures",
        routes._fixtures,
        methods=["GET"],
        tags=["Environment Info"],
        summary="The fixtures a reset can name",
    )
    _add_route(
        router,
        "/scenarios",
        routes._scenarios,
        methods=["GET"],
        tags=["Environment Info"],
        summary="The scenarios a reset can name, with their instructions and budgets",
    )
    for method, path in (("POST", "/reset"), ("POST", "/step"), ("GET", "/state")):
        _add_route(
            router,
            path,
            _episode_refusal(f"{method} {path}"),
            methods=[method],
            tags=["Episodes over HTTP (refused)"],
            summary="Refused with 501: an episode needs a session; use /ws",
            status_code=501,
        )
    _add_route(
        router,
        "/mcp",
        routes._mcp_http,
        methods=["POST"],
        tags=["MCP"],
        summary="OpenEnv's production MCP (openenv/session/create, then requests naming it); "
        "anything else is refused with JSON-RPC -32601",
    )
    router.add_api_websocket_route("/mcp", routes.mcp_ws)
    router.add_api_websocket_route("/ws", routes.ws)
    if console:
        router.include_router(console_router())
    router.include_router(task_router(service.name, service.pack))
    return router


def listed_fixtures(world: seahaven.World) -> list[Fixture]:
    """The world's fixtures for ``GET /fixtures``: every one that loads, whatever else is there.

    ``world.fixtures()`` refuses a directory holding one bad entry (a sidecar that does
    not load, a symlink to another fixture claiming its id). A listing leaves such an
    entry out and logs it, with its path, for the operator; the client never sees it.
    """
    try:
        return world.fixtures()
    except WorldBug as error:
        _log.warning("world %r: the fixtures do not all load (%s)", world.name, error)
    found: dict[str, Fixture] = {}
    directory = world.fixtures_dir
    for entry in sorted(directory.iterdir()) if directory.is_dir() else ():
        if entry.name.startswith(".") or not (entry / "fixture.yaml").exists():
            continue
        try:
            fixture = load_fixture(entry)
        except WorldBug as error:
            _log.warning("world %r: left out of GET /fixtures: %s", world.name, error)
            continue
        if fixture.world != world.name:
            continue
        if fixture.id != entry.name or fixture.id in found:
            _log.warning(
                "world %r: left out of GET /fixtures: %s claims the fixture id %r",
                world.name,
                entry,
                fixture.id,
            )
            continue
        found[fixture.id] = fixture
    return [found[key] for key in sorted(found)]


@functools.cache
def schema_document() -> dict[str, Any]:
    """What ``GET /schema`` answers: ``schema.json``, ``seahaven_openenv.clients.models.schemas()``.

    Read from the file shipped with the plugin, so answering it never imports
    OpenEnv (seconds, and its web stack); a test holds the file equal to the models.
    """
    text = resources.files("seahaven_openenv").joinpath("clients", "schema.json").read_text("utf-8")
    document: dict[str, Any] = json.loads(text)
    return document


def _episode_refusal(route: str) -> Callable[[], Any]:
    async def refuse() -> JSONResponse:
        return JSONResponse(
            status_code=501,
            content={
                "detail": {
                    "code": "http_episode_control_unsupported",
                    "message": (
                        f"{route} cannot hold an episode: each HTTP request would meet a "
                        "different instance, so none would see what another did. Open a "
                        "WebSocket to /ws, where one connection is one session with one instance"
                    ),
                    "details": {
                        "route": route,
                        "use_instead": "/ws",
                        "clients": ["seahaven.openenv.SeahavenClient", "openenv.GenericEnvClient"],
                    },
                }
            },
        )

    refuse.__name__ = "refuse_" + route.replace(" /", "_").lower()
    return refuse


def _retry_after(answer: dict[str, Any]) -> dict[str, str] | None:
    """HTTP's ``Retry-After`` for a session refused at capacity: the answer's ``retry_after``.

    The status stays 200, as for every JSON-RPC answer, so a client reading only the
    body reads what it always did.
    """
    error = answer.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    if isinstance(data, dict) and data.get("code") == "CAPACITY_REACHED":
        retry_after = data.get("retry_after")
        if isinstance(retry_after, int):
            return {"Retry-After": str(retry_after)}
    return None


def _mcp_answer(body: str | bytes) -> dict[str, Any]:
    """What ``/mcp`` answers a request: a parse error, or the refusal (with an id it may echo).

    The refusal's ``data`` says what the route does take and where else to go, as
    the 501 of ``POST /reset`` does in its ``details``.
    """
    try:
        request = frames.read_json(body)
    except FrameError as error:
        return mcp_frames.rpc_error(
            None,
            mcp_frames.PARSE_ERROR,
            f"Parse error: {error.message}",
            {"code": error.code},
        )
    request_id = request.get("id") if isinstance(request, dict) else None
    if not mcp_frames.usable_id(request_id):
        request_id = None
    method = request.get("method") if isinstance(request, dict) else None
    return mcp_frames.rpc_error(
        request_id,
        mcp_frames.METHOD_NOT_FOUND,
        "Method not found: this route speaks only OpenEnv's production MCP: "
        "openenv/session/create, then tools/list and tools/call naming its session_id, and "
        "openenv/session/close. Reach the world from any other MCP client with `seahaven mcp`, "
        'or send {"type": "mcp"} frames on /ws after a reset',
        {
            "code": "mcp_session_required",
            "route": "POST /mcp",
            "method": clip(method) if isinstance(method, str) else None,
            "session_methods": [
                mcp_sessions.CREATE,
                "tools/list",
                "tools/call",
                "initialize",
                "ping",
                mcp_sessions.CLOSE,
            ],
            "use_instead": ["seahaven mcp", '{"type": "mcp"} frames on /ws'],
        },
    )


async def validation_refusal(request: Request, error: Exception) -> JSONResponse:
    """FastAPI's 422 for a body that does not validate, every value it echoes bounded.

    FastAPI's own answer repeats each refused value whole, so a body holding
    ``NaN`` or ``1e999`` (which its parser reads) failed the answer itself, a
    plain-text 500; and a long value came back whole. Here each entry keeps
    pydantic's ``type``, ``loc``, ``msg`` and ``input``, that input as
    ``echo.bounded`` shortens it and with NaN and the infinities named.
    """
    assert isinstance(error, RequestValidationError)
    detail = []
    for item in list(error.errors())[:20]:
        entry = {
            "type": item.get("type"),
            "loc": [clip(part) if isinstance(part, str) else part for part in item.get("loc", ())],
            "msg": clip(str(item.get("msg", "")), 1000),
            "input": bounded(item.get("input")),
        }
        if isinstance(item.get("ctx"), dict):
            entry["ctx"] = {str(key): bounded(value) for key, value in item["ctx"].items()}
        detail.append(entry)
    return JSONResponse(status_code=422, content={"detail": detail})


async def _bounded_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or ``None`` once it is known to be longer than ``limit`` bytes.

    A declared length over the limit is refused before a byte is read, and a body
    sent in chunks is counted as it arrives, so a large body is never held whole.
    """
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)
