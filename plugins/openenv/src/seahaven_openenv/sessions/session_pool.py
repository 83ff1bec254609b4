"""The session pool: what every session of one server shares.

The capacity count, the two pools of worker threads, the scheduler that runs
a frame's work on the event loop while that kind of work is quick and on a
worker once it is not, and the idle reaper; it installs the event loop's
handler for connections it cannot accept (``seahaven_openenv.sessions.accept_failures``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import secrets
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Generic, TypeVar

from fastapi import FastAPI, WebSocket

import seahaven
from seahaven import sandbox
from seahaven.calls.concurrency import concurrency
from seahaven.errors import WorldBug
from seahaven_openenv.sessions import admission, pool, resume, snapframes
from seahaven_openenv.sessions.accept_failures import AcceptFailures
from seahaven_openenv.sessions.loop_clock import (
    LoopTime,
    loop_time,
    own_cpu_seconds,
    read_loop_clock,
)
from seahaven_openenv.sessions.session import Session
from seahaven_openenv.wire.close_codes import CLOSE_REAPED
from seahaven_openenv.wire.inbox import Inbox

__all__ = [
    "DEFAULT_MAX_CONCURRENT_ENVS",
    "Abandoned",
    "SessionPool",
]

_log = logging.getLogger("seahaven.openenv")

DEFAULT_MAX_CONCURRENT_ENVS = 500
# Worker threads when the process has no bound on call slots (``--concurrency 0``).
UNGATED_WORKERS = 8
# A kind of frame work runs on a worker thread from then on once its running average on the
# event loop passes a budget (``sessions.loop_clock`` says what is counted). A wait (a
# sleep, a disk) is the loop's time lost whole, and a worker frees the loop for all of it: its
# budget is short. CPU work on a worker still holds the interpreter lock, and lets the loop in
# only at the lock's switches (every 5 ms), while each frame pays a thread hand-off: its budget
# is four switches. Each average starts at zero with a kind's second run (the first pays for
# what is built once) and weighs each run by INLINE_WEIGHT, so one wait of 25 ms moves a kind at
# once, and a stray slow run (a busy disk, a CPU shared with other processes) does not.
INLINE_WAIT_BUDGET_SECONDS = 0.005
INLINE_CPU_BUDGET_SECONDS = 0.020
INLINE_WEIGHT = 0.2
# Worker threads for the work that passes no gate (resets, state documents, closing a
# session): enough that several slow resets at once hold up no other session's.
SESSION_WORKERS = 32
# The most kinds of work whose time on the event loop is kept; any further kind runs on a
# worker, so names a client makes up cannot grow the table.
MAX_KINDS = 1000
# The shortest time between two collections asked for by sessions whose instances outlived them.
COLLECT_INTERVAL_SECONDS = 5.0

T = TypeVar("T")


class SessionPool:
    """What the sessions of one server share: capacity, worker threads and the idle reaper.

    Work runs on two pools of threads. Tool calls take one of the framework's
    call slots, so their pool holds all of the slots but the one the event
    loop uses. Everything else (resets, state documents, closing a session)
    takes no slot and has a pool of its own, so one session's slow
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
        admission_queue: int = admission.DEFAULT_ADMISSION_QUEUE,
        admission_wait: float = admission.DEFAULT_ADMISSION_WAIT_SECONDS,
        retry_after: int = admission.DEFAULT_RETRY_AFTER_SECONDS,
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
        #: New sessions past capacity: the queue they wait in, and the retry time refusals carry.
        self.admission = admission.Admission(
            lambda: self.max_concurrent_envs - self.active_sessions,
            queue=admission_queue,
            wait=admission_wait,
            retry_after=retry_after,
        )
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
        # The event loop runs quick work itself and holds one of the call slots while it
        # does; the workers get the rest, so a call on the loop never waits for a slot. With
        # one slot in all, tool calls always go to the worker.
        self.inline_calls = gate != 1
        if workers is None:
            workers = UNGATED_WORKERS if gate == 0 else max(1, gate - 1)
        self._workers = workers
        # The kinds of work (``tool <name>``, ``reset <fixture>``, ``state``) seen to be slow,
        # and each kind's running averages of CPU and waits on the loop.
        self.offloaded: set[str] = set()
        self._inline_seconds: dict[str, LoopTime] = {}
        self._calls: ThreadPoolExecutor | None = None
        self._others: ThreadPoolExecutor | None = None
        self._jobs: set[_Job[Any]] = set()
        self._reaper: asyncio.Task[None] | None = None
        # A collection asked for after a session whose instance outlived its end.
        self._collection: asyncio.TimerHandle | None = None
        self._collected_at = -COLLECT_INTERVAL_SECONDS
        self._accept_failures = AcceptFailures()
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
        self.admission.share(seat.announce_waiting, seat.earliest_waiting_elsewhere)
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
            waiting=self.admission.waiting,
        )

    def capacity(self) -> dict[str, int]:
        """OpenEnv's ``ServerCapacityStatus``: active and maximum sessions."""
        return {"active_sessions": self.active_sessions, "max_sessions": self.max_concurrent_envs}

    def capacity_refusal(self, *, waited: bool = False) -> tuple[str, dict[str, Any]]:
        """The message and data of a new session's ``CAPACITY_REACHED``, with ``retry_after``."""
        return self.admission.refusal(self.active_sessions, self.max_concurrent_envs, waited)

    async def run(
        self,
        fn: Callable[..., T],
        *args: Any,
        gated: bool = False,
        inbox: Inbox | None = None,
        on_cpu: Callable[[float], None] | None = None,
    ) -> T:
        """Run ``fn(*args)`` on a worker thread: the call-slot pool's for a tool call.

        With ``inbox``, a connection's, the next message is read while the work
        runs: when it says the client is gone (or the server is stopping, which
        ends every connection), the work is abandoned: a statement it runs under
        a ``Deadline`` is stopped, and work not yet started never starts. ``on_cpu``
        is told the CPU seconds the work took on its thread, once it has run.
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
            if on_cpu is not None and job.cpu is not None:
                on_cpu(job.cpu)

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
        CPU there passes ``INLINE_CPU_BUDGET_SECONDS``, or whose average wait passes
        ``INLINE_WAIT_BUDGET_SECONDS``, runs on a worker from then on, so a slow tool stalls
        the other sessions a few times at most. ``work=None`` always goes to a worker.
        ``gated`` and ``inbox`` are ``run``'s.
        """
        if work is None or (
            work not in self._inline_seconds and len(self._inline_seconds) >= MAX_KINDS
        ):
            return await self.run(fn, *args, gated=gated, inbox=inbox)
        if work in self.offloaded:
            return await self.run(
                fn, *args, gated=gated, inbox=inbox, on_cpu=partial(self._observe_worker, work)
            )
        before = read_loop_clock()
        # Work in flight on worker threads may hold the interpreter lock meanwhile.
        contended = bool(self._jobs)
        try:
            return fn(*args)
        finally:
            self._observe(work, loop_time(before, read_loop_clock(), contended=contended))

    def _observe(self, work: str, took: LoopTime) -> None:
        """Fold one run of ``work`` on the loop into its averages; move it once one is over."""
        averages = self._inline_seconds.get(work)
        if averages is None:
            # A kind's first run pays for what is built once (caches, a first import): the
            # averages start with its second.
            self._inline_seconds[work] = LoopTime(cpu=0.0, waited=0.0)
            return
        averages = LoopTime(
            cpu=averages.cpu + INLINE_WEIGHT * (took.cpu - averages.cpu),
            waited=averages.waited + INLINE_WEIGHT * (took.waited - averages.waited),
        )
        self._inline_seconds[work] = averages
        if averages.cpu > INLINE_CPU_BUDGET_SECONDS or averages.waited > INLINE_WAIT_BUDGET_SECONDS:
            self.offloaded.add(work)
            # An expected decision, not a fault: said at INFO.
            _log.info(
                "%s took %.1f ms of CPU and waited %.1f ms on the event loop;"
                " it runs on a worker thread from now on",
                work,
                took.cpu * 1e3,
                took.waited * 1e3,
            )

    def _observe_worker(self, work: str, cpu: float) -> None:
        """Fold one run of moved ``work`` on a worker into its CPU average; bring it back if low.

        A kind can pass the CPU budget for a while and then fall well below it: the
        first resets of a new process fill its memory from the system, and each
        costs several times what it does once memory is reused. So a kind moved for
        its CPU comes back to the loop once its average on the workers is under half
        the budget. A kind moved for its waits stays: on a worker its waits for the
        interpreter lock cannot be told from its own.
        """
        averages = self._inline_seconds.get(work)
        if averages is None or averages.waited > INLINE_WAIT_BUDGET_SECONDS:
            return
        averages = LoopTime(
            cpu=averages.cpu + INLINE_WEIGHT * (cpu - averages.cpu), waited=averages.waited
        )
        self._inline_seconds[work] = averages
        if averages.cpu < INLINE_CPU_BUDGET_SECONDS / 2:
            self.offloaded.discard(work)
            _log.info(
                "%s took %.1f ms of CPU on a worker thread; it runs on the event loop again",
                work,
                cpu * 1e3,
            )

    def ended(self, instance: weakref.ref[seahaven.Instance] | None) -> None:
        """A session ended: if its instance is still in memory, collect soon.

        An ended instance is freed as soon as nothing refers to it; one held in a
        reference cycle (a world's own code can make one) waits for the cycle
        collector, whose full passes the server makes rare. So a collection is
        asked for, at most one every ``COLLECT_INTERVAL_SECONDS``, and only then.
        Its seat goes to the connection at the head of the admission queue.
        """
        self.admission.nudge()
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
            await self.admission.shutdown()
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


class Abandoned(Exception):
    """The work was abandoned before it started: its client is gone."""


class _Job(Generic[T]):
    """One piece of work for a worker thread, which another thread may abandon."""

    __slots__ = ("_abandoned", "_args", "_fn", "_lock", "_thread", "cpu")

    def __init__(self, fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        #: The CPU seconds the work took on its thread (collections left out), once it ran.
        self.cpu: float | None = None
        self._fn = fn
        self._args = args
        self._lock = threading.Lock()
        self._thread: int | None = None
        self._abandoned = False

    def __call__(self) -> T:
        with sandbox.interruptible() as thread:
            with self._lock:
                if self._abandoned:
                    raise Abandoned
                self._thread = thread
            started = own_cpu_seconds()
            try:
                return self._fn(*self._args)
            finally:
                self.cpu = own_cpu_seconds() - started
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
