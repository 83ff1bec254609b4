"""The ASGI app: the ``/ws`` session protocol and the HTTP routes beside it.

One connection to ``/ws`` is one ``Session``. The connection's frames are read
in order; each frame's work (making an instance, a tool call, a state
document) runs on the event loop while that kind of work is quick and on a
worker thread once it is not, so a slow call never stalls the loop; tool calls
pass the framework's fair concurrency gate. Every frame is the client's and is
read as hostile: whatever it holds, it is answered with a frame and the session
goes on. What every session shares (the capacity count, the idle reaper, the
worker threads) is a ``Hub``. One app serves one world at its root, or several
worlds each under ``/worlds/<name>/``. A world may be served with a pack of
scenarios (``scenarios=``): OpenEnv's Task API lists its tasks, and a reset's
``split`` and ``index`` pick one.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import gc
import json
import logging
import secrets
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any, Generic, TypeVar

from fastapi import APIRouter, FastAPI, Request, WebSocket
from fastapi.responses import JSONResponse, Response

import seahaven
from seahaven import sandbox
from seahaven.concurrency import concurrency
from seahaven.errors import WorldBug
from seahaven.fixtures import Fixture
from seahaven.fixtures import load as load_fixture
from seahaven.scenarios import SUBMIT_TOOL, ScenarioSet
from seahaven_openenv import (
    card,
    descriptors,
    frames,
    mcp_frames,
    mcp_sessions,
    pool,
    resume,
    snapframes,
)
from seahaven_openenv.console import console_redirect, console_router, worlds_index_page
from seahaven_openenv.guard import Guard, GuardMiddleware
from seahaven_openenv.session import (
    SCENARIO_KEYS,
    FrameError,
    Session,
    WorldService,
    internal_error_id,
)
from seahaven_openenv.tasks import packs_for, task_router

__all__ = [
    "DEFAULT_MAX_CONCURRENT_ENVS",
    "AnswerHead",
    "Hub",
    "Inbox",
    "app",
    "app_for_worlds",
    "capacity_for",
    "index_router",
    "listed_fixtures",
    "schema_document",
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
# Worker threads for the work that passes no gate (resets, state documents, closing a
# session): enough that several slow resets at once hold up no other session's.
SESSION_WORKERS = 32
# The most kinds of work whose time on the event loop is kept; any further kind runs on a
# worker, so names a client makes up cannot grow the table.
MAX_KINDS = 1000
# The shortest time between two collections asked for by sessions whose instances outlived them.
COLLECT_INTERVAL_SECONDS = 5.0
# How often, at most, the log says connections cannot be accepted.
ACCEPT_WARNING_SECONDS = 10.0
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
# The largest body ``POST /mcp`` reads: it only ever answers a refusal.
MAX_MCP_BODY_BYTES = 64 * 1024
# WebSocket close codes: 1013 is "try again later"; 4408 marks a session reaped for idleness.
CLOSE_NORMAL = 1000
CLOSE_AT_CAPACITY = 1013
CLOSE_REAPED = 4408
# 1008 is "policy violation": the root of a server of several worlds holds no session.
CLOSE_NO_SESSION_HERE = 1008
# A session resumed on a new connection closes the one it was served on with 4409.
CLOSE_RESUMED_ELSEWHERE = 4409
# The ends of a connection that end a resumable session at once, abandoning its frame in
# flight: a client that meant to leave (1000, 1001) and a server that is stopping (1012, as
# uvicorn reports it). Any other end (1006, the TCP connection lost; a ping time-out) detaches
# the session for resume, and its frame in flight runs to its end.
_ENDS_THE_SESSION = frozenset({1000, 1001, 1012})
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
    """What the sessions of one server share: capacity, worker threads and the idle reaper.

    Work runs on two pools of threads. Tool calls pass the framework's
    concurrency gate, so their pool holds all of the gate's slots but the one
    the event loop uses. Everything else (resets, state documents, closing a
    session) passes no gate and has a pool of its own, so one session's slow
    reset (a ``setup_sql`` that runs for its whole allowance) never waits in
    line in front of another session's.
    """

    def __init__(
        self,
        *,
        max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
        session_timeout: float | None = None,
        workers: int | None = None,
        resume_grace: float = resume.DEFAULT_RESUME_GRACE_SECONDS,
        snapshots: snapframes.WireSnapshots | None = None,
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
        #: The ``/ws`` sessions that survive a dropped connection for ``resume_grace`` seconds.
        self.resumables = resume.Resumables(self, resume_grace)
        #: The snapshots ``snapshot`` frames took, for ``reset(from_snapshot=)`` and ``fork``.
        self.snapshots = snapshots if snapshots is not None else snapframes.WireSnapshots()
        #: When this server's sessions began (wall clock): an error naming a restart says it.
        self.started_at = time.time()
        # Every session, with the socket it lives on; ``None`` for a session made over
        # ``POST /mcp`` with no socket attached now.
        self.sessions: dict[Session, WebSocket | None] = {}
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
        self._calls: ThreadPoolExecutor | None = None
        self._others: ThreadPoolExecutor | None = None
        self._jobs: set[_Job[Any]] = set()
        self._reaper: asyncio.Task[None] | None = None
        # A collection asked for after a session whose instance outlived its end.
        self._collection: asyncio.TimerHandle | None = None
        self._collected_at = -COLLECT_INTERVAL_SECONDS
        self._accept_failures = _AcceptFailures()
        #: This process's place among a server's workers (``seahaven serve --workers``).
        self.seat: pool.Seat | None = None

    def join_pool(self, seat: pool.Seat) -> None:
        """Be one of several workers: count sessions on the shared board, make ids it routes."""
        counted: pool.CountedSessions[Session, WebSocket | None] = pool.CountedSessions(
            seat.publish
        )
        for session, websocket in self.sessions.items():
            counted[session] = websocket
        self.sessions = counted
        self.seat = seat
        # A snapshot lives in this worker's memory: its token carries the mark too.
        self.snapshots.prefix = seat.prefix

    def new_session_id(self) -> str:
        """A new session's id: unguessable, and under several workers, saying whose it is.

        The front process routes a request naming a session by the worker mark the
        id starts with; a single process has none.
        """
        prefix = self.seat.prefix if self.seat is not None else ""
        return prefix + secrets.token_urlsafe(18)

    @property
    def active_sessions(self) -> int:
        """How many connections hold a session now (on every worker of the server)."""
        if self.seat is not None:
            return self.seat.board.total_sessions()
        return len(self.sessions)

    def metrics(self) -> dict[str, Any]:
        """What ``GET /metrics`` answers: sessions and capacity, and each worker's counters."""
        return pool.metrics_document(
            self.seat,
            active_sessions=self.active_sessions,
            max_sessions=self.max_concurrent_envs,
            started_at=self.started_at,
        )

    def capacity(self) -> dict[str, int]:
        """OpenEnv's ``ServerCapacityStatus``: active and maximum sessions."""
        return {"active_sessions": self.active_sessions, "max_sessions": self.max_concurrent_envs}

    async def run(
        self, fn: Callable[..., T], *args: Any, gated: bool = False, inbox: Inbox | None = None
    ) -> T:
        """Run ``fn(*args)`` on a worker thread: the gated pool's for a tool call.

        With ``inbox``, a connection's, the next message is read while the work
        runs: when it says the client is gone (or the server is stopping, which
        ends every connection), the work is abandoned: a statement it runs under
        a ``Deadline`` is stopped, and work not yet started never starts.
        """
        executor = self._executor(gated)
        job = _Job(fn, args)
        self._jobs.add(job)
        try:
            future = asyncio.get_running_loop().run_in_executor(executor, job)
            if inbox is None:
                return await future
            ahead = inbox.read_ahead()
            await asyncio.wait({future, ahead}, return_when=asyncio.FIRST_COMPLETED)
            if not future.done() and inbox.ended():
                job.abandon()
            return await future
        finally:
            self._jobs.discard(job)

    def _executor(self, gated: bool) -> ThreadPoolExecutor:
        if gated:
            if self._calls is None:
                self._calls = ThreadPoolExecutor(self._workers, thread_name_prefix="seahaven-call")
            return self._calls
        if self._others is None:
            self._others = ThreadPoolExecutor(
                SESSION_WORKERS, thread_name_prefix="seahaven-session"
            )
        return self._others

    async def execute(
        self,
        work: str | None,
        fn: Callable[..., T],
        *args: Any,
        gated: bool = False,
        inbox: Inbox | None = None,
    ) -> T:
        """Run a frame's work on the event loop while its kind has been quick, else on a worker.

        On the loop a frame costs no thread hand-off, and on a machine of few cores the
        interpreter lock passed between the loop and a worker at every SQLite call costs more
        than the work. So quick work stays on the loop; a kind of work (``work``) whose average
        time there passes ``INLINE_BUDGET_SECONDS`` runs on a worker from then on, so a slow
        tool stalls the other sessions twice at most. ``work=None`` always goes to a worker.
        ``gated`` and ``inbox`` are ``run``'s.
        """
        if (
            work is None
            or work in self.offloaded
            or (work not in self._inline_seconds and len(self._inline_seconds) >= MAX_KINDS)
        ):
            return await self.run(fn, *args, gated=gated, inbox=inbox)
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
                # An expected decision, not a fault: said at INFO.
                _log.info(
                    "%s took %.1f ms on the event loop; it runs on a worker thread from now on",
                    work,
                    took * 1e3,
                )

    def ended(self, instance: weakref.ref[seahaven.Instance] | None) -> None:
        """A session ended: if its instance is still in memory, collect soon.

        An ended instance is freed as soon as nothing refers to it; one held in a
        reference cycle (a world's own code can make one) waits for the cycle
        collector, whose full passes the server makes rare. So a collection is
        asked for, at most one every ``COLLECT_INTERVAL_SECONDS``, and only then.
        """
        if instance is None or instance() is None or self._collection is not None:
            return
        wait = max(0.0, self._collected_at + COLLECT_INTERVAL_SECONDS - time.monotonic())
        self._collection = asyncio.get_running_loop().call_later(wait, self._collect)

    def _collect(self) -> None:
        self._collection = None
        self._collected_at = time.monotonic()
        gc.collect()

    def abandon_all(self) -> None:
        """Stop what every worker runs under a ``Deadline``: the server is stopping."""
        for job in list(self._jobs):
            job.abandon()

    @contextlib.asynccontextmanager
    async def lifespan(self, app: FastAPI) -> AsyncIterator[None]:
        """Start the reaper with the server; at shutdown end every session and the workers."""
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        loop.set_exception_handler(self._accept_failures.handler(previous))
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
            if self._collection is not None:
                self._collection.cancel()
                self._collection = None
            self.abandon_all()
            await self.resumables.shutdown()
            self.snapshots.clear()
            for session in list(self.sessions):
                await self.run(session.close)
            self.sessions.clear()
            for executor in (self._calls, self._others):
                if executor is not None:
                    executor.shutdown(wait=True)
            self._calls = self._others = None
            loop.set_exception_handler(previous)

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
            instance = weakref.ref(session.instance)
            if await self.run(session.reap, timeout):
                reaped += 1
                _log.info("reaped session %s: idle for %s s", session.episode_id, timeout)
                self.ended(instance)
                if websocket is None:
                    # A session made over POST /mcp, no socket attached: it stops counting.
                    self.sessions.pop(session, None)
                    continue
                with contextlib.suppress(Exception):
                    await websocket.close(
                        CLOSE_REAPED, f"idle for more than {timeout:g} s; the session was reaped"
                    )
        return reaped


class _Abandoned(Exception):
    """The work was abandoned before it started: its client is gone."""


class _Job(Generic[T]):
    """One piece of work for a worker thread, which another thread may abandon."""

    __slots__ = ("_abandoned", "_args", "_fn", "_lock", "_thread")

    def __init__(self, fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        self._fn = fn
        self._args = args
        self._lock = threading.Lock()
        self._thread: int | None = None
        self._abandoned = False

    def __call__(self) -> T:
        with sandbox.interruptible() as thread:
            with self._lock:
                if self._abandoned:
                    raise _Abandoned
                self._thread = thread
            try:
                return self._fn(*self._args)
            finally:
                # Under the lock and inside the block: an abandon() arriving from now on can
                # no longer stop what this thread runs next.
                with self._lock:
                    self._thread = None

    def abandon(self) -> None:
        """Never start; or, running, stop the statement it runs under a ``Deadline``."""
        with self._lock:
            self._abandoned = True
            if self._thread is not None:
                sandbox.interrupt_thread(self._thread)


class Inbox:
    """A connection's incoming messages, read one ahead while a frame's work is on a worker."""

    __slots__ = ("_ahead", "_ends", "websocket")

    def __init__(self, websocket: WebSocket, ends: frozenset[int] | None = None) -> None:
        """``ends``: the only disconnect codes that end the connection's work, when not all do."""
        self.websocket = websocket
        self._ahead: asyncio.Future[Any] | None = None
        self._ends = ends

    async def next(self) -> Mapping[str, Any]:
        """The next message: the one read ahead, or a fresh one."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            message: Mapping[str, Any] = await ahead
            return message
        return await self.websocket.receive()

    def read_ahead(self) -> asyncio.Future[Any]:
        """Start reading the next message, if that has not begun."""
        if self._ahead is None:
            self._ahead = asyncio.ensure_future(self.websocket.receive())
        return self._ahead

    def discard(self) -> None:
        """Stop reading ahead: the connection is over."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return
        if ahead.done():
            if not ahead.cancelled():
                ahead.exception()  # retrieved, so it is never reported as lost
        else:
            ahead.cancel()

    def ended(self) -> bool:
        """Whether the message read ahead says the connection is over."""
        ahead = self._ahead
        if ahead is None or not ahead.done():
            return False
        if ahead.cancelled() or ahead.exception() is not None:
            return self._ends is None
        message = ahead.result()
        if message["type"] != "websocket.disconnect":
            return False
        return self._ends is None or message.get("code", CLOSE_NORMAL) in self._ends


class _AcceptFailures:
    """The event loop's error handler, saying once in a while that it cannot accept connections.

    asyncio reports every ``accept()`` that fails for want of descriptors, with a
    traceback, and retries a hundred times a tick: out of descriptors, a server
    would write megabytes of log a second. One warning per interval is enough.
    """

    def __init__(self) -> None:
        self.refused = 0
        self._warned_at = -ACCEPT_WARNING_SECONDS

    def handler(
        self, previous: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None
    ) -> Callable[[asyncio.AbstractEventLoop, dict[str, Any]], None]:
        """A handler for ``loop.set_exception_handler``, passing on what it does not own."""

        def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            error = context.get("exception")
            if (
                isinstance(error, OSError)
                and error.errno in _OUT_OF_RESOURCES
                and "accept" in str(context.get("message", ""))
            ):
                self.refused += 1
                now = time.monotonic()
                if now - self._warned_at >= ACCEPT_WARNING_SECONDS:
                    self._warned_at = now
                    _log.warning(
                        "cannot accept a connection: %s; new connections wait until sessions "
                        "end (said once every %g s)",
                        error.strerror,
                        ACCEPT_WARNING_SECONDS,
                    )
                return
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)

        return handle


def app(
    world: seahaven.World,
    *,
    scenarios: ScenarioSet | str | None = None,
    include_control_tools: bool = False,
    max_concurrent_envs: int | None = None,
    session_timeout: float | None = None,
    resume_grace: float = resume.DEFAULT_RESUME_GRACE_SECONDS,
    console: bool = True,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    snapshot_limit: int = snapframes.DEFAULT_SNAPSHOT_LIMIT,
    snapshot_memory: float = snapframes.DEFAULT_SNAPSHOT_MEMORY_MB,
    snapshot_age: float = snapframes.DEFAULT_SNAPSHOT_AGE_SECONDS,
) -> FastAPI:
    """The ASGI app serving ``world`` over OpenEnv: ``/ws``, ``/health``, ``/schema``, ....

    ``scenarios`` is a pack of the world's scenarios (a ``ScenarioSet``, an installed
    pack's name, or ``module:attr``) for OpenEnv's Task API and ``reset(split=...,
    index=...)``. ``allowed_hosts`` and ``allowed_origins`` are the names and browser
    origins it answers besides its own (``seahaven_openenv.guard`` says which those are).
    ``resume_grace`` is how long a ``/ws`` session outlives a dropped connection, waiting
    for its client to resume it (``seahaven_openenv.resume``); 0 turns resume off.
    ``snapshot_limit``, ``snapshot_memory`` (MiB) and ``snapshot_age`` (seconds) bound
    the snapshots ``snapshot`` frames keep (``seahaven_openenv.snapframes``).
    """
    return app_for_worlds(
        [world],
        scenarios=None if scenarios is None else [scenarios],
        include_control_tools=include_control_tools,
        max_concurrent_envs=max_concurrent_envs,
        session_timeout=session_timeout,
        resume_grace=resume_grace,
        console=console,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        snapshot_limit=snapshot_limit,
        snapshot_memory=snapshot_memory,
        snapshot_age=snapshot_age,
    )


def app_for_worlds(
    worlds: Sequence[seahaven.World],
    *,
    scenarios: Sequence[ScenarioSet | str] | None = None,
    include_control_tools: bool = False,
    max_concurrent_envs: int | None = None,
    session_timeout: float | None = None,
    resume_grace: float = resume.DEFAULT_RESUME_GRACE_SECONDS,
    console: bool = True,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    snapshot_limit: int = snapframes.DEFAULT_SNAPSHOT_LIMIT,
    snapshot_memory: float = snapframes.DEFAULT_SNAPSHOT_MEMORY_MB,
    snapshot_age: float = snapframes.DEFAULT_SNAPSHOT_AGE_SECONDS,
) -> FastAPI:
    """One app for several worlds, each under ``/worlds/<name>/``; a lone world also at the root.

    ``scenarios`` are packs (or their names), each served beside the world its
    scenarios run on: one pack a world.
    """
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
    packs = packs_for(worlds, scenarios)
    for world in worlds:
        if world.name in packs and SUBMIT_TOOL in {e.name for e in world.composition().surface}:
            raise WorldBug(
                f"world {world.name!r} has a tool named {SUBMIT_TOOL!r}, which a scenario adds to "
                "end its episode; rename the world's tool to serve it with a pack"
            )
    hub = Hub(
        max_concurrent_envs=capacity_for(worlds, max_concurrent_envs),
        session_timeout=session_timeout,
        resume_grace=resume_grace,
        snapshots=snapframes.WireSnapshots(
            max_count=snapshot_limit, max_mb=snapshot_memory, max_age=snapshot_age
        ),
    )
    services = [
        WorldService(
            world,
            include_control_tools=include_control_tools,
            pack=packs.get(world.name),
            packs={served.name: served.pack for served in packs.values()},
        )
        for world in worlds
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
    application.state.packs = {name: served.pack for name, served in packs.items()}
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


def capacity_for(worlds: Sequence[seahaven.World], chosen: int | None) -> int:
    """The server's capacity: ``chosen``, or as many sessions as its descriptors hold, up to 500.

    The process's soft limit on open files is raised as far as it may go first.
    A chosen capacity past what the descriptors hold is kept, with a warning: a
    reset that finds none left is answered ``CAPACITY_REACHED``.
    """
    limit = descriptors.raise_soft_limit()
    if limit is None:
        return DEFAULT_MAX_CONCURRENT_ENVS if chosen is None else chosen
    each = descriptors.per_session(worlds)
    fit = descriptors.sessions_that_fit(limit, each)
    if chosen is None:
        return min(DEFAULT_MAX_CONCURRENT_ENVS, fit)
    if chosen > fit:
        _log.warning(
            "max_concurrent_envs is %d, but at this process's limit of %d open files about %d "
            "sessions fit (%d descriptors each); resets past that answer CAPACITY_REACHED",
            chosen,
            limit,
            fit,
            each,
        )
    return chosen


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
    async def health() -> dict[str, Any]:
        return pool.health_document(hub.seat)

    @router.get("/capacity", tags=["Health"], summary="Active and maximum sessions")
    async def capacity() -> dict[str, int]:
        return hub.capacity()

    @router.get("/metrics", tags=["Health"], summary="Sessions, capacity and worker processes")
    async def metrics() -> dict[str, Any]:
        return hub.metrics()

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
    card_cache: list[dict[str, Any]] = []
    http_sessions = mcp_sessions.HttpSessions(service, hub, _call_work)

    @router.get("/health", tags=["Health"], summary="Health check")
    async def health() -> dict[str, Any]:
        return pool.health_document(hub.seat)

    @router.get("/capacity", tags=["Health"], summary="Active and maximum sessions")
    async def capacity() -> dict[str, int]:
        return hub.capacity()

    @router.get("/metrics", tags=["Health"], summary="Sessions, capacity and worker processes")
    async def metrics() -> dict[str, Any]:
        return hub.metrics()

    @router.get(
        "/metadata", tags=["Environment Info"], summary="The world's name, version and card"
    )
    async def metadata() -> dict[str, Any]:
        if not card_cache:
            card_cache.append(await hub.run(card.world_card, service.world))
        return card_cache[0]

    @router.get("/schema", tags=["Schema"], summary="The action, observation and state models")
    async def schema() -> dict[str, Any]:
        return schema_document()

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

    @router.post(
        "/mcp",
        tags=["MCP"],
        summary="OpenEnv's production MCP (openenv/session/create, then requests naming it); "
        "anything else is refused with JSON-RPC -32601",
    )
    async def mcp_http(request: Request) -> Response:
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
            answer = await http_sessions.answer(parsed)
            if answer is None:
                # A notification: JSON-RPC sends nothing back.
                return Response(status_code=202)
            return Response(frames.encode(answer), media_type="application/json")
        return JSONResponse(_mcp_answer(body))

    @router.websocket("/mcp")
    async def mcp_ws(websocket: WebSocket) -> None:
        await websocket.accept()
        with contextlib.suppress(Exception):
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                answer = _mcp_answer(text if text is not None else message.get("bytes") or b"")
                await websocket.send_text(frames.encode(answer))

    @router.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await serve_connection(websocket, service, hub, http_sessions)

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


async def serve_connection(
    websocket: WebSocket,
    service: WorldService,
    hub: Hub,
    http_sessions: mcp_sessions.HttpSessions | None = None,
) -> None:
    """One connection's whole life: admit it, answer its frames in order, end its session.

    A connection opened with ``?session_id=`` attaches to that session, made over
    ``POST /mcp`` (``http_sessions``), and leaves it standing when it closes; with
    ``&resume=<token>`` too, it resumes a ``/ws`` session whose connection dropped.
    """
    await websocket.accept()
    attach_to = websocket.query_params.get("session_id")
    token = websocket.query_params.get(resume.RESUME_PARAMETER)
    if attach_to is not None and (token is not None or http_sessions is not None):
        await _serve_attached(websocket, service, hub, http_sessions, attach_to, token)
        return
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
    resumables = hub.resumables
    if resumables.enabled:
        record = resumables.open(session, websocket)
        await _connection(
            websocket, session, hub, lambda: resumables.release(record, websocket), record
        )
        return

    async def end() -> None:
        hub.sessions.pop(session, None)
        instance = weakref.ref(session.instance) if session.instance is not None else None
        await hub.execute("close", session.close)
        hub.ended(instance)

    await _connection(websocket, session, hub, end)


async def _serve_attached(
    websocket: WebSocket,
    service: WorldService,
    hub: Hub,
    http_sessions: mcp_sessions.HttpSessions | None,
    session_id: str,
    token: str | None,
) -> None:
    """A connection attached to a session: one made over ``POST /mcp``, or one it resumes.

    Its frames, then it detaches, leaving the session standing.
    """
    try:
        if token is None:
            assert http_sessions is not None
            entry = http_sessions.attach(session_id)
        else:
            record = hub.resumables.attach(session_id, token, websocket, service)
    except FrameError as error:
        with contextlib.suppress(Exception):
            refusal = frames.error_frame(error.code, error.message, **error.extra)
            await websocket.send_text(frames.encode(refusal))
            await websocket.close(CLOSE_NO_SESSION_HERE, "no such session")
        return
    if token is None:
        assert http_sessions is not None
        detach = http_sessions.detach
        await _connection(websocket, entry.session, hub, lambda: detach(entry))
        return
    previous = hub.sessions.get(record.session)
    hub.sessions[record.session] = websocket
    if previous is not None:
        # The client saw its connection drop before the server did: that one is done.
        with contextlib.suppress(Exception):
            await previous.close(CLOSE_RESUMED_ELSEWHERE, "resumed on another connection")
    # Said before any frame, so the client knows the session is back before it re-sends one.
    with contextlib.suppress(Exception):
        resumed = {"type": "resumed", "data": {"session_id": record.session_id}}
        await websocket.send_text(frames.encode(resumed))
    await _connection(
        websocket,
        record.session,
        hub,
        lambda: hub.resumables.release(record, websocket),
        record,
    )


async def _connection(
    websocket: WebSocket,
    session: Session,
    hub: Hub,
    end: Callable[[], Awaitable[None]],
    record: resume.Resumable | None = None,
) -> None:
    """Serve ``session`` on ``websocket`` until the connection ends, then ``end`` and close.

    With ``record``, the session is resumable: see ``_frames_of``.
    """
    hub.sessions[session] = websocket
    inbox = Inbox(websocket, None if record is None else _ENDS_THE_SESSION)
    close_code = CLOSE_NORMAL
    try:
        close_code = await _frames_of(websocket, session, hub, inbox, record)
    finally:
        inbox.discard()
        await end()
        with contextlib.suppress(Exception):
            await websocket.close(close_code)


async def _frames_of(
    websocket: WebSocket,
    session: Session,
    hub: Hub,
    inbox: Inbox,
    record: resume.Resumable | None = None,
) -> int:
    """Answer a connection's frames in order until it ends; the close code to end it with.

    A resumable session (``record``) runs a frame to its end even when the
    connection drops under it, and keeps its answer for the connection that
    resumes it; a client that leaves on purpose (a close frame, or closing the
    WebSocket normally) ends it.
    """
    try:
        while True:
            message = await inbox.next()
            if message["type"] == "websocket.disconnect":
                code = message.get("code", CLOSE_NORMAL)
                if record is not None and record.owned_by(websocket) and code in _ENDS_THE_SESSION:
                    record.closing = True
                break
            text = message.get("text")
            if text is None:
                text = message.get("bytes") or b""
            if record is None:
                reply, last = await _answer(session, hub, text, inbox)
            else:
                reply, last = await _answer_resumable(record, websocket, session, hub, text, inbox)
            if reply is not None:
                await _send(websocket, reply)
            if last is not None:
                if record is not None and record.owned_by(websocket):
                    record.closing = True
                return last
    except Exception as error:
        # A peer that vanished mid-send is an ordinary end of a session, not an error.
        if not _is_disconnect(error):
            _log.error("session %s failed: %s", session.episode_id, error, exc_info=error)
    return CLOSE_NORMAL


async def _send(websocket: WebSocket, reply: str) -> None:
    """Send a reply; one no encoder can write as UTF-8 is the world's bug, sent as such."""
    try:
        await websocket.send_text(reply)
    except UnicodeEncodeError as error:
        await websocket.send_text(_not_json(error))


async def _answer_resumable(
    record: resume.Resumable,
    websocket: WebSocket,
    session: Session,
    hub: Hub,
    text: str | bytes,
    inbox: Inbox,
) -> tuple[str | None, int | None]:
    """``_answer`` for a resumable session: one frame at a time, its answer kept.

    The work is abandoned only when the client left on purpose or the server
    stops (``inbox`` says so); when the connection drops it runs to its end,
    and its answer waits for the connection that resumes the session. A frame
    still arriving on a connection the session was resumed from is never run.
    """
    async with record.lock:
        if not record.owned_by(websocket):
            return None, CLOSE_RESUMED_ELSEWHERE
        try:
            kind, data, request_id = frames.parse_frame(text)
        except FrameError as error:
            record.answer_kept(None)
            reply_text = frames.encode(frames.error_frame(error.code, error.message, **error.extra))
            return frames.with_id(reply_text, error.request_id), None
        kept = record.answer_kept(request_id)
        if kept is not None:
            return kept, None
        credentials = record.credentials(hub.resumables.grace) if kind == "reset" else None
        reply, last = await _answer_frame(session, hub, kind, data, inbox, credentials)
        if reply is not None:
            reply = frames.with_id(reply, request_id)
        # A state changes nothing, so one re-sent simply runs again: its document (the
        # largest answer there is) is never held.
        record.keep(request_id, None if kind == "state" else reply)
        return reply, last


async def _answer(
    session: Session, hub: Hub, text: str | bytes, inbox: Inbox | None = None
) -> tuple[str | None, int | None]:
    """The reply to one frame, and the close code when the connection ends after it.

    The reply carries the frame's ``id`` when the frame had one.
    """
    try:
        kind, data, request_id = frames.parse_frame(text)
    except FrameError as error:
        reply_text = frames.encode(frames.error_frame(error.code, error.message, **error.extra))
        return frames.with_id(reply_text, error.request_id), None
    reply, last = await _answer_frame(session, hub, kind, data, inbox)
    return (None if reply is None else frames.with_id(reply, request_id)), last


async def _answer_frame(
    session: Session,
    hub: Hub,
    kind: str,
    data: Any,
    inbox: Inbox | None,
    credentials: dict[str, Any] | None = None,
) -> tuple[str | None, int | None]:
    """``_answer`` for a frame that parsed: its reply, without the id.

    A reset's answer carries the session's resume ``credentials`` under ``resume``.
    """
    try:
        if kind == "close":
            return None, CLOSE_NORMAL
        if kind == "reset":
            answer = await hub.execute(
                _reset_work(data), session.reset, data, hub.snapshots.find, inbox=inbox
            )
            if credentials is not None:
                answer = {**answer, "resume": credentials}
            reply = frames.observation_frame(answer)
        elif kind == "step":
            work, gated = _step_work(data, hub, session)
            reply = frames.observation_frame(
                await hub.execute(work, session.step, data, gated=gated, inbox=inbox)
            )
        elif kind == "state":
            _check_state_frame(data, session, hub)
            # The document arrives as text: its change log is never re-encoded per frame.
            try:
                text = await hub.execute("state", session.state_text, inbox=inbox)
            except (TypeError, ValueError) as error:
                return _not_json(error), None
            return frames.state_frame_text(text), None
        elif kind == "snapshot":
            _check_snapshot_frame(data)
            snapshot, step_count = await hub.run(session.snapshot, inbox=inbox)
            reply = {"type": "snapshot", "data": hub.snapshots.keep(snapshot, step_count)}
        elif kind == "fork":
            reply = {"type": "fork", "data": await _fork(session, hub, data, inbox)}
        elif kind == "mcp":
            work, gated = _mcp_work(data, hub, session)
            response = await hub.execute(
                work, mcp_frames.answer, session, data, gated=gated, inbox=inbox
            )
            if response is None:
                return None, None
            reply = {"type": "mcp", "data": response}
        else:
            raise FrameError("UNKNOWN_TYPE", f"Unknown message type: {kind!r}")
    except FrameError as error:
        reply_text = frames.encode(frames.error_frame(error.code, error.message, **error.extra))
        # Out of room for another instance: the connection goes too, freeing its socket.
        return reply_text, CLOSE_AT_CAPACITY if error.code == "CAPACITY_REACHED" else None
    except _Abandoned:
        return None, None
    except Exception as error:
        # A frame must never end its session by surprise: the traceback goes to the log.
        correlation = _log_internal_error(error, "a frame")
        return frames.encode(
            frames.error_frame("EXECUTION_ERROR", f"internal error ({correlation})")
        ), None
    try:
        return frames.encode(reply), None
    except (TypeError, ValueError) as error:
        return _not_json(error), None


def _check_state_frame(data: Any, session: Session, hub: Hub) -> None:
    """Refuse a ``state`` on a connection holding no episode, unless it says it expects none.

    OpenEnv's client reconnects without a word when its socket closes (the reaper,
    a server restart, a dropped connection), so a ``state`` landing on a connection
    that never had an episode is most likely a lost episode's: answering the empty
    document would let a grader score it as a real one. ``{"allow_no_episode": true}``
    (what the web console sends) asks for that document anyway.
    """
    if not isinstance(data, dict) or any(key != "allow_no_episode" for key in data):
        raise FrameError(
            "VALIDATION_ERROR",
            'a state frame\'s data is {} or {"allow_no_episode": true}, nothing else',
        )
    allowed = data.get("allow_no_episode", False)
    if not isinstance(allowed, bool):
        raise FrameError("VALIDATION_ERROR", "a state frame's allow_no_episode is true or false")
    if allowed or session.instance is not None or session.lost is not None:
        # A lost episode is refused by the session itself, naming what happened.
        return
    reaper = (
        f"the reaper ended it after {hub.session_timeout:g} s idle"
        if hub.session_timeout is not None
        else "the reaper is off on this server, so not the reaper"
    )
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(hub.started_at))
    raise FrameError(
        "SESSION_ERROR",
        "this connection holds no episode: no reset has started one on it (or its last reset "
        "failed). If this client had an episode, it was on an earlier connection, and it ended "
        f"with that connection ({reaper}; or the server restarted: this one has run since "
        f"{started}; or the connection dropped). OpenEnv's client reconnects without a word, "
        'so nothing else says so. Send a reset to start an episode, or {"type": "state", '
        '"data": {"allow_no_episode": true}} to read the document of no episode',
        no_episode=True,
    )


def _check_snapshot_frame(data: Any) -> None:
    if not isinstance(data, dict) or data:
        raise FrameError("VALIDATION_ERROR", "a snapshot frame's data is {}, nothing else")


def _fork_arguments(data: Any) -> tuple[int, str | None]:
    """A fork frame's ``n`` and ``token``; ``FrameError`` naming what is wrong."""
    if not isinstance(data, dict) or any(key not in ("n", "token") for key in data):
        raise FrameError(
            "VALIDATION_ERROR",
            'a fork frame\'s data is {"n": <sessions>} and, to fork a kept snapshot rather '
            'than this session\'s episode, "token"; nothing else',
        )
    n = data.get("n")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= snapframes.MAX_FORK:
        raise FrameError(
            "VALIDATION_ERROR",
            f"a fork's n is a whole number of sessions from 1 to {snapframes.MAX_FORK}",
        )
    token = data.get("token")
    if token is not None and not isinstance(token, str):
        raise FrameError("VALIDATION_ERROR", "a fork's token is a string a snapshot answered")
    return n, token


def _capacity_refusal(hub: Hub, n: int) -> FrameError:
    # Not CAPACITY_REACHED: that code closes the connection, and a refused fork leaves this
    # session as it was.
    return FrameError(
        "EXECUTION_ERROR",
        f"a fork of {n} sessions would pass this server's maximum of {hub.max_concurrent_envs} "
        f"sessions ({hub.active_sessions} are held now); fork fewer, or raise "
        "`seahaven serve --max-concurrent-envs`",
        reason="fork_refused",
        limit="sessions",
        option="--max-concurrent-envs",
        **hub.capacity(),
    )


async def _fork(session: Session, hub: Hub, data: Any, inbox: Inbox | None) -> dict[str, Any]:
    """``n`` new detached sessions, each with its own instance from one snapshot.

    All or none: when a branch cannot be made, or the sessions would pass the
    server's capacity, none is left behind.
    """
    n, token = _fork_arguments(data)
    resumables = hub.resumables
    if not resumables.enabled:
        raise FrameError(
            "EXECUTION_ERROR",
            "a fork's sessions wait for their clients as resumable sessions do, and this server "
            "keeps none (seahaven serve --resume-grace 0); serve with a resume grace above 0",
            reason="fork_refused",
            option="--resume-grace",
        )
    if hub.active_sessions + n > hub.max_concurrent_envs:
        raise _capacity_refusal(hub, n)
    if token is None:
        snapshot, step_count = await hub.run(session.snapshot, inbox=inbox)
    else:
        snapshot, step_count = hub.snapshots.find(token)
        if snapshot.world is not session.service.world:
            raise FrameError(
                "VALIDATION_ERROR",
                f"snapshot {token!r} was taken of another world than this session serves",
            )
    try:
        instances = await hub.run(snapshot.restore_many, n, inbox=inbox)
    except seahaven.SeahavenError as error:
        raise FrameError("EXECUTION_ERROR", f"fork failed: {error}") from None
    if hub.active_sessions + n > hub.max_concurrent_envs:
        # Other connections took the room while the branches were made.
        for instance in instances:
            await hub.run(instance.destroy)
        raise _capacity_refusal(hub, n)
    grace = resumables.grace
    sessions = []
    for instance in instances:
        branch = session.service.session()
        branch.adopt(instance, step_count)
        record = resumables.open_detached(branch)
        sessions.append({**record.credentials(grace), "episode_id": instance.id})
    return {"sessions": sessions, "step_count": step_count, "call_count": snapshot.call_count}


def _reset_work(data: Any) -> str | None:
    """The kind of work a reset is; ``setup_sql`` may run for seconds, so it is never inline.

    Nor is a reset naming a scenario: it may load a pack, and a scenario's start
    usually runs ``setup_sql``.
    """
    if not isinstance(data, dict) or data.get("setup_sql") is not None:
        return None
    if data.get("from_snapshot") is not None:
        # A restore writes every store's file.
        return None
    if any(data.get(key) is not None for key in SCENARIO_KEYS):
        return None
    fixture = data.get("fixture")
    return f"reset {fixture}" if fixture is None or isinstance(fixture, str) else None


def _step_work(data: Any, hub: Hub, session: Session) -> tuple[str | None, bool]:
    """The kind of work a step is, and whether it passes the gate: a call and a finish do."""
    if isinstance(data, dict) and data.get("type") == "call_tool":
        return _call_work(data.get("tool_name"), hub, session), True
    if isinstance(data, dict) and data.get("type") == "finish":
        # Grading reads every store, and may replay the scenario's solution.
        return ("finish" if hub.inline_calls else None), True
    return "list_tools", False


def _mcp_work(data: Any, hub: Hub, session: Session) -> tuple[str | None, bool]:
    """The kind of work an MCP request is: ``tools/call`` is its tool's, the rest is quick."""
    if isinstance(data, dict) and data.get("method") == "tools/call":
        params = data.get("params")
        return _call_work(
            params.get("name") if isinstance(params, dict) else None, hub, session
        ), True
    return "mcp", False


def _call_work(name: Any, hub: Hub, session: Session) -> str | None:
    """A call's kind of work: its tool's when the world has that tool; an unknown one is quick."""
    if not hub.inline_calls:
        return None
    if session.service.serves(name) or (name == SUBMIT_TOOL and session.trial is not None):
        return f"tool {name}"
    return "tool (unknown)"


def _log_internal_error(error: BaseException, what: str) -> str:
    correlation = internal_error_id()
    _log.error("internal error (%s) in %s: %s", correlation, what, error, exc_info=error)
    return correlation


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


@functools.cache
def schema_document() -> dict[str, Any]:
    """What ``GET /schema`` answers: ``schema.json``, ``seahaven_openenv.models.schemas()``.

    Read from the file shipped with the plugin, so answering it never imports
    OpenEnv (seconds, and its web stack); a test holds the file equal to the models.
    """
    text = resources.files("seahaven_openenv").joinpath("schema.json").read_text("utf-8")
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


def _mcp_answer(body: str | bytes) -> dict[str, Any]:
    """What ``/mcp`` answers a request: a parse error, or the refusal (with an id it may echo)."""
    try:
        request = frames.read_json(body)
    except FrameError as error:
        return mcp_frames.rpc_error(None, mcp_frames.PARSE_ERROR, f"Parse error: {error.message}")
    request_id = request.get("id") if isinstance(request, dict) else None
    if not mcp_frames.usable_id(request_id):
        request_id = None
    return mcp_frames.rpc_error(
        request_id,
        mcp_frames.METHOD_NOT_FOUND,
        "Method not found: this route speaks only OpenEnv's production MCP: "
        "openenv/session/create, then tools/list and tools/call naming its session_id, and "
        "openenv/session/close. Reach the world from any other MCP client with `seahaven mcp`, "
        'or send {"type": "mcp"} frames on /ws after a reset',
    )


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
