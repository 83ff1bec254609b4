"""The ASGI app: the ``/ws`` session protocol and the HTTP routes beside it.

One connection to ``/ws`` is one ``Session``. The connection's frames are read
in order; each frame's work (making an instance, a tool call, a state
document) runs on a worker thread, so a slow call never stalls the event
loop, and tool calls pass the framework's fair concurrency gate there. What
every session shares (the capacity count, the idle reaper, the worker threads)
is a ``Hub``. One app serves one world at its root, or several worlds each
under ``/worlds/<name>/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from fastapi import APIRouter, FastAPI, Request, WebSocket
from fastapi.responses import JSONResponse, Response

import seahaven
from seahaven.errors import WorldBug
from seahaven.fixtures import Fixture
from seahaven.fixtures import load as load_fixture
from seahaven.instances import concurrency
from seahaven_openenv import card, frames, mcp_frames
from seahaven_openenv.console import console_redirect, console_router, worlds_index_page
from seahaven_openenv.guard import Guard, GuardMiddleware
from seahaven_openenv.session import FrameError, Session, WorldService, internal_error_id

__all__ = [
    "DEFAULT_MAX_CONCURRENT_ENVS",
    "AnswerHead",
    "Hub",
    "app",
    "app_for_worlds",
    "index_router",
    "listed_fixtures",
    "serve_connection",
    "world_router",
    "worlds_listing",
    "worlds_router",
]

_log = logging.getLogger("seahaven.openenv")

DEFAULT_MAX_CONCURRENT_ENVS = 500
# Worker threads when the concurrency gate is off (``--concurrency 0``).
UNGATED_WORKERS = 8
# A kind of frame work whose running average on the event loop passes this runs on a worker
# thread from then on. The average starts at zero with a kind's second run (the first pays for
# what is built once) and weighs each run by INLINE_WEIGHT, so one run of 25 ms moves a kind at
# once, and a stray slow run (a collection, a busy disk) does not.
INLINE_BUDGET_SECONDS = 0.005
INLINE_WEIGHT = 0.2
# WebSocket close codes: 1013 is "try again later"; 4408 marks a session reaped for idleness.
CLOSE_AT_CAPACITY = 1013
CLOSE_REAPED = 4408
# 1008 is "policy violation": the root of a server of several worlds holds no session.
CLOSE_NO_SESSION_HERE = 1008
# How long the root's /ws waits for a first frame to answer before it says where to go.
ROOT_SOCKET_WAIT_SECONDS = 10.0

T = TypeVar("T")


class _CollectorClock:
    """The seconds the garbage collector has spent, so a frame's time can leave them out.

    A full collection under load takes tens of milliseconds, and it lands on whatever
    frame is running: it says nothing about that frame's work.
    """

    def __init__(self) -> None:
        self.spent = 0.0
        self._started = 0.0
        gc.callbacks.append(self._observe)

    def _observe(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.spent += time.perf_counter() - self._started


_collector = _CollectorClock()


class Hub:
    """What the sessions of one server share: capacity, worker threads and the idle reaper."""

    def __init__(
        self,
        *,
        max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
        session_timeout: float | None = None,
        workers: int | None = None,
    ) -> None:
        if isinstance(max_concurrent_envs, bool) or not isinstance(max_concurrent_envs, int):
            raise WorldBug("max_concurrent_envs must be a whole number of sessions, 1 or more")
        if max_concurrent_envs < 1:
            raise WorldBug("max_concurrent_envs must be 1 or more")
        if session_timeout is not None and (
            isinstance(session_timeout, bool)
            or not isinstance(session_timeout, int | float)
            or session_timeout < 0
        ):
            raise WorldBug("session_timeout is a number of seconds, 0 (off) or more")
        self.max_concurrent_envs = max_concurrent_envs
        self.session_timeout = session_timeout or None
        self.sessions: dict[Session, WebSocket] = {}
        gate = concurrency()
        # The event loop runs quick work itself and holds one of the gate's slots while it
        # does; the workers get the rest, so a call on the loop never waits at the gate. With
        # a gate of one slot, tool calls always go to the worker.
        self.inline_calls = gate != 1
        if workers is None:
            workers = UNGATED_WORKERS if gate == 0 else max(1, gate - 1)
        self._workers = workers
        # The kinds of work (``tool <name>``, ``reset <fixture>``, ``state``) seen to be slow,
        # and each kind's running average time on the loop.
        self.offloaded: set[str] = set()
        self._inline_seconds: dict[str, float] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._reaper: asyncio.Task[None] | None = None

    @property
    def active_sessions(self) -> int:
        """How many connections hold a session now."""
        return len(self.sessions)

    def capacity(self) -> dict[str, int]:
        """OpenEnv's ``ServerCapacityStatus``: active and maximum sessions."""
        return {"active_sessions": self.active_sessions, "max_sessions": self.max_concurrent_envs}

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on a worker thread."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="seahaven-frame")
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def execute(self, work: str | None, fn: Callable[..., T], *args: Any) -> T:
        """Run a frame's work on the event loop while its kind has been quick, else on a worker.

        On the loop a frame costs no thread hand-off, and on a machine of few cores the
        interpreter lock passed between the loop and a worker at every SQLite call costs more
        than the work. So quick work stays on the loop; a kind of work (``work``) whose average
        time there passes ``INLINE_BUDGET_SECONDS`` runs on a worker from then on, so a slow
        tool stalls the other sessions twice at most. ``work=None`` always goes to a worker.
        """
        if work is None or work in self.offloaded:
            return await self.run(fn, *args)
        started = time.perf_counter()
        collecting = _collector.spent
        try:
            return fn(*args)
        finally:
            took = time.perf_counter() - started - (_collector.spent - collecting)
            # A kind's first run pays for what is built once (caches, a first import): the
            # average starts with its second.
            average = self._inline_seconds.get(work)
            if average is None:
                average = self._inline_seconds[work] = 0.0
            else:
                average += INLINE_WEIGHT * (took - average)
                self._inline_seconds[work] = average
            if average > INLINE_BUDGET_SECONDS:
                self.offloaded.add(work)
                _log.warning(
                    "%s took %.1f ms on the event loop; it runs on a worker thread from now on",
                    work,
                    took * 1e3,
                )

    @contextlib.asynccontextmanager
    async def lifespan(self, app: FastAPI) -> AsyncIterator[None]:
        """Start the reaper with the server; at shutdown end every session and the workers."""
        if self.session_timeout is not None:
            self._reaper = asyncio.create_task(self._reap_forever(self.session_timeout))
        try:
            yield
        finally:
            if self._reaper is not None:
                self._reaper.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._reaper
                self._reaper = None
            for session in list(self.sessions):
                await self.run(session.close)
            self.sessions.clear()
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None

    async def _reap_forever(self, timeout: float) -> None:
        interval = max(0.05, min(timeout / 4, 5.0))
        while True:
            await asyncio.sleep(interval)
            await self.reap_idle(timeout)

    async def reap_idle(self, timeout: float) -> int:
        """Destroy the instance of every session idle ``timeout`` seconds and close its socket."""
        reaped = 0
        deadline = time.monotonic() - timeout
        for session, websocket in list(self.sessions.items()):
            if session.last_activity > deadline or session.instance is None:
                continue
            if await self.run(session.reap, timeout):
                reaped += 1
                _log.info("reaped session %s: idle for %s s", session.episode_id, timeout)
                with contextlib.suppress(Exception):
                    await websocket.close(
                        CLOSE_REAPED, f"idle for more than {timeout:g} s; the session was reaped"
                    )
        return reaped


def app(
    world: seahaven.World,
    *,
    include_control_tools: bool = False,
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
    session_timeout: float | None = None,
    console: bool = True,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> FastAPI:
    """The ASGI app serving ``world`` over OpenEnv: ``/ws``, ``/health``, ``/schema``, ....

    ``allowed_hosts`` and ``allowed_origins`` are the names and browser origins it answers
    besides its own (``seahaven_openenv.guard`` says which those are).
    """
    return app_for_worlds(
        [world],
        include_control_tools=include_control_tools,
        max_concurrent_envs=max_concurrent_envs,
        session_timeout=session_timeout,
        console=console,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )


def app_for_worlds(
    worlds: Sequence[seahaven.World],
    *,
    include_control_tools: bool = False,
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
    session_timeout: float | None = None,
    console: bool = True,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> FastAPI:
    """One app for several worlds, each under ``/worlds/<name>/``; a lone world also at the root."""
    if not worlds:
        raise WorldBug("serve at least one world")
    for world in worlds:
        if not isinstance(world, seahaven.World):
            raise WorldBug(f"app() serves seahaven.World objects, not {type(world).__name__}")
    names = [world.name for world in worlds]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise WorldBug(f"world {duplicates[0]!r} is named twice; serve each world once")
    guard = Guard.build(allowed_hosts, allowed_origins)
    for world in worlds:
        # Seal now, so a world that does not compose fails at start-up, not on a first reset.
        world.composition()
    hub = Hub(max_concurrent_envs=max_concurrent_envs, session_timeout=session_timeout)
    services = [
        WorldService(world, include_control_tools=include_control_tools) for world in worlds
    ]
    title = services[0].name if len(services) == 1 else "Seahaven worlds"
    application = FastAPI(
        title=title,
        version=worlds[0].version if len(worlds) == 1 else seahaven.__version__,
        description=card.description(worlds[0]) if len(worlds) == 1 else ", ".join(names),
        lifespan=hub.lifespan,
    )
    application.state.hub = hub
    application.state.services = {service.name: service for service in services}
    application.include_router(worlds_router(services, console=console))
    if len(services) == 1:
        application.include_router(world_router(services[0], hub, console=console))
    else:
        application.include_router(index_router(services, hub, console=console))
    for service in services:
        application.include_router(
            world_router(service, hub, console=console), prefix=f"/worlds/{service.name}"
        )
    # Outermost first: the guard refuses foreign hosts and origins before anything runs.
    application.add_middleware(AnswerHead)
    application.add_middleware(GuardMiddleware, guard=guard)
    return application


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


def worlds_router(services: Sequence[WorldService], *, console: bool) -> APIRouter:
    """``GET /worlds`` on every server, and the page at ``/`` when the console is served.

    A server of several worlds shows an index linking each world's console there; a
    server of one sends ``/`` to its console.
    """
    router = APIRouter()
    listing = worlds_listing(services)

    @router.get("/worlds", tags=["Environment Info"], summary="The worlds this server serves")
    async def worlds() -> list[dict[str, Any]]:
        return listing

    if console:

        @router.get("/", include_in_schema=False)
        async def index() -> Response:
            if len(services) == 1:
                return console_redirect("console")
            return worlds_index_page(listing)

    return router


def index_router(services: Sequence[WorldService], hub: Hub, *, console: bool = True) -> APIRouter:
    """The root of a server of several worlds: its health, and where each world is."""
    router = APIRouter()
    listing = worlds_listing(services)
    sockets = [f"{world['base_path']}/ws" for world in listing]

    @router.get("/health", tags=["Health"], summary="Health check")
    async def health() -> dict[str, str]:
        return {"status": "healthy"}

    @router.get("/capacity", tags=["Health"], summary="Active and maximum sessions")
    async def capacity() -> dict[str, int]:
        return hub.capacity()

    @router.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        # No session lives at the root: say where they do, then close.
        await websocket.accept()
        message = (
            f"this server serves {len(listing)} worlds, each with its own sessions: open a "
            f"WebSocket to one of {', '.join(sockets)}"
        )
        reason = _close_reason(sockets)
        with contextlib.suppress(Exception):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(websocket.receive(), ROOT_SOCKET_WAIT_SECONDS)
            error = frames.error_frame("SESSION_ERROR", message, worlds=sockets)
            await websocket.send_text(frames.encode(error))
            await websocket.close(CLOSE_NO_SESSION_HERE, reason)

    if console:

        @router.get("/console", include_in_schema=False)
        async def console_page() -> Response:
            return console_redirect("./")

    return router


def _close_reason(sockets: Sequence[str]) -> str:
    """A WebSocket close reason naming the session paths, inside the protocol's 123 bytes."""
    reason = "open " + ", ".join(sockets)
    if len(reason.encode("utf-8")) <= 123:
        return reason
    return "open /worlds/<name>/ws; GET /worlds lists the names"


def world_router(service: WorldService, hub: Hub, *, console: bool) -> APIRouter:
    """Every route of one served world."""
    router = APIRouter()
    schema_cache: list[dict[str, Any]] = []
    card_cache: list[dict[str, Any]] = []

    @router.get("/health", tags=["Health"], summary="Health check")
    async def health() -> dict[str, str]:
        return {"status": "healthy"}

    @router.get("/capacity", tags=["Health"], summary="Active and maximum sessions")
    async def capacity() -> dict[str, int]:
        return hub.capacity()

    @router.get(
        "/metadata", tags=["Environment Info"], summary="The world's name, version and card"
    )
    async def metadata() -> dict[str, Any]:
        if not card_cache:
            card_cache.append(await hub.run(card.world_card, service.world))
        return card_cache[0]

    @router.get("/schema", tags=["Schema"], summary="The action, observation and state models")
    async def schema() -> dict[str, Any]:
        if not schema_cache:
            schema_cache.append(await hub.run(_schemas))
        return schema_cache[0]

    @router.get("/fixtures", tags=["Environment Info"], summary="The fixtures a reset can name")
    async def fixtures() -> list[dict[str, Any]]:
        listed = await hub.run(listed_fixtures, service.world)
        return [
            {
                "id": fixture.id,
                "description": fixture.description,
                "now": fixture.now,
                "parent_id": fixture.parent_id,
            }
            for fixture in listed
        ]

    for method, path in (("POST", "/reset"), ("POST", "/step"), ("GET", "/state")):
        router.add_api_route(
            path,
            _episode_refusal(f"{method} {path}"),
            methods=[method],
            tags=["Episodes over HTTP (refused)"],
            summary="Refused with 501: an episode needs a session; use /ws",
            status_code=501,
        )

    @router.post("/mcp", tags=["MCP (refused)"], summary="Refused with JSON-RPC -32601")
    async def mcp_http(request: Request) -> dict[str, Any]:
        return _mcp_refusal(await _request_id(request))

    @router.websocket("/mcp")
    async def mcp_ws(websocket: WebSocket) -> None:
        await websocket.accept()
        with contextlib.suppress(Exception):
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text") or (message.get("bytes") or b"").decode(
                    "utf-8", "replace"
                )
                await websocket.send_text(frames.encode(_mcp_refusal(_text_id(text))))

    @router.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await serve_connection(websocket, service, hub)

    if console:
        router.include_router(console_router())
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


async def serve_connection(websocket: WebSocket, service: WorldService, hub: Hub) -> None:
    """One connection's whole life: admit it, answer its frames in order, end its session."""
    await websocket.accept()
    if hub.active_sessions >= hub.max_concurrent_envs:
        with contextlib.suppress(Exception):
            await websocket.send_text(
                frames.encode(
                    frames.error_frame(
                        "CAPACITY_REACHED",
                        f"the server holds {hub.max_concurrent_envs} sessions, its maximum; "
                        "try again when one ends",
                        **hub.capacity(),
                    )
                )
            )
            await websocket.close(CLOSE_AT_CAPACITY, "at capacity")
        return
    session = service.session()
    hub.sessions[session] = websocket
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if text is None:
                text = message.get("bytes") or b""
            reply, last = await _answer(session, hub, text)
            if reply is not None:
                await websocket.send_text(reply)
            if last:
                break
    except Exception as error:
        # A peer that vanished mid-send is an ordinary end of a session, not an error.
        if not _is_disconnect(error):
            _log.error("session %s failed: %s", session.episode_id, error, exc_info=error)
    finally:
        hub.sessions.pop(session, None)
        await hub.execute("close", session.close)
        with contextlib.suppress(Exception):
            await websocket.close()


async def _answer(session: Session, hub: Hub, text: str | bytes) -> tuple[str | None, bool]:
    """The reply to one frame, and whether the connection ends after it."""
    try:
        kind, data = frames.parse(text)
        if kind == "close":
            return None, True
        if kind == "reset":
            reply = frames.observation_frame(
                await hub.execute(_reset_work(data), session.reset, data)
            )
        elif kind == "step":
            work = _step_work(data, hub)
            reply = frames.observation_frame(await hub.execute(work, session.step, data))
        elif kind == "state":
            # The document arrives as text: its change log is never re-encoded per frame.
            try:
                text = await hub.execute("state", session.state_text)
            except (TypeError, ValueError) as error:
                return _not_json(error), False
            return frames.state_frame_text(text), False
        elif kind == "mcp":
            response = await hub.execute(_mcp_work(data, hub), mcp_frames.answer, session, data)
            if response is None:
                return None, False
            reply = {"type": "mcp", "data": response}
        else:
            raise FrameError("UNKNOWN_TYPE", f"Unknown message type: {kind!r}")
    except FrameError as error:
        return frames.encode(frames.error_frame(error.code, error.message)), False
    try:
        return frames.encode(reply), False
    except (TypeError, ValueError) as error:
        return _not_json(error), False


def _reset_work(data: Any) -> str | None:
    """The kind of work a reset is; ``setup_sql`` may run for seconds, so it is never inline."""
    if not isinstance(data, dict) or data.get("setup_sql") is not None:
        return None
    return f"reset {data.get('fixture')}"


def _step_work(data: Any, hub: Hub) -> str | None:
    """The kind of work a step is: a call is its tool's, a listing is quick."""
    if isinstance(data, dict) and data.get("type") == "call_tool":
        return f"tool {data.get('tool_name')}" if hub.inline_calls else None
    return "list_tools"


def _mcp_work(data: Any, hub: Hub) -> str | None:
    """The kind of work an MCP request is: ``tools/call`` is its tool's, the rest is quick."""
    if isinstance(data, dict) and data.get("method") == "tools/call":
        params = data.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        return f"tool {name}" if hub.inline_calls else None
    return "mcp"


def _not_json(error: Exception) -> str:
    """A result JSON cannot carry (NaN, say) is the world's bug: fail the frame loudly."""
    correlation = internal_error_id()
    _log.error("internal error (%s): the reply is not JSON: %s", correlation, error)
    message = f"internal error ({correlation})"
    return frames.encode(frames.error_frame("EXECUTION_ERROR", message))


def _is_disconnect(error: BaseException) -> bool:
    from starlette.websockets import WebSocketDisconnect
    from websockets.exceptions import ConnectionClosed

    if isinstance(error, WebSocketDisconnect | ConnectionClosed):
        return True
    # Starlette raises RuntimeError for a send after the peer's close frame arrived.
    return isinstance(error, RuntimeError) and "close" in str(error).lower()


def _schemas() -> dict[str, Any]:
    from seahaven_openenv.models import schemas

    return schemas()


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


def _mcp_refusal(request_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": -32601,
            "message": (
                "Method not found: this route does not speak MCP. Reach the world from an MCP "
                'client with `seahaven mcp`, or send {"type": "mcp"} frames on /ws after a reset'
            ),
        },
    }


async def _request_id(request: Request) -> Any:
    return _text_id(await request.body())


def _text_id(text: str | bytes) -> Any:
    try:
        body = json.loads(text)
    except ValueError:
        return None
    request_id = body.get("id") if isinstance(body, dict) else None
    return request_id if isinstance(request_id, str | int) else None
