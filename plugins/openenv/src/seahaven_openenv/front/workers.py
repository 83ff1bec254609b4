"""``seahaven serve --workers N``: N server processes behind one port, each with its own sessions.

A front process owns the listening socket and never speaks HTTP. It accepts a
connection, peeks at the request's first bytes without consuming them
(``MSG_PEEK``), and hands the accepted socket itself to a worker over a Unix
socket (``SCM_RIGHTS``); the worker serves it with uvicorn's own protocol
(``loop.connect_accepted_socket``), so no byte of a session passes through the
front. A request naming a session goes to the worker that owns it:
``/ws?session_id=<id>`` (and a ``resume=`` token beside it), ``/ws?snapshot=<token>``
(a connection that resets from a snapshot the worker keeps), and ``POST /mcp``
whose JSON ``params.session_id`` names one; the worker is the one the id's
prefix names (``front.routing``). Every other connection goes to the
next live worker in turn. The front bounds what it peeks at as a worker bounds
a request: the head must arrive whole within ``request_read_seconds`` of its
first byte, and a connection silent for ``idle_connection_seconds`` is closed
(``front.runner``). A worker answers each plain HTTP request with
``connection: close``, so every request is routed on its own.

The workers are forked from the front after the worlds are loaded. They share
a ``pool.Board`` of counters, from which any of them answers ``/capacity``,
``/health`` and ``/metrics`` for the whole server. A worker that dies is
reported (logged, ``/health`` degraded, its sessions counted as lost; its
clients' sockets close with it, and an id it made is answered as lost) and
restarted; one that keeps dying stops the server with an error. Ctrl-C or
SIGTERM stops every worker (each closes its sessions) and then the front.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import selectors
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from seahaven.errors import WorldBug
from seahaven_openenv.front import runner
from seahaven_openenv.front.handoff import CloseAfterResponse, die_with_parent, serve_handed
from seahaven_openenv.front.routing import PEEK_LIMIT, route_of
from seahaven_openenv.sessions import pool

if TYPE_CHECKING:
    import uvicorn
    from fastapi import FastAPI

__all__ = [
    "MAX_RESTARTS",
    "RESTART_WINDOW_SECONDS",
    "Front",
    "serve_workers",
]

_log = logging.getLogger("seahaven.openenv")

# More deaths than this within the window and the server stops, loudly, instead of restarting.
MAX_RESTARTS = 5
RESTART_WINDOW_SECONDS = 60.0
# How long a dead worker's slot waits before its replacement is forked.
RESTART_DELAY_SECONDS = 0.2
# How long the front waits for every worker to start, and to stop when asked.
START_SECONDS = 120.0
STOP_SECONDS = 30.0
# How long a peek that found part of a request waits before looking again.
PEEK_RETRY_SECONDS = 0.002
BACKLOG = 2048
# What a worker's bounded protocol answers a request that stops arriving (runner.py).
_REQUEST_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class _Worker:
    """The front's view of one worker slot: its process, control socket and waiting sockets."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.generation = 0
        self.pid: int | None = None
        self.control: socket.socket | None = None
        self.outbox: collections.deque[socket.socket] = collections.deque()
        self.restart_at: float | None = None


class Front:
    """The front process: accepts, peeks, hands each connection to a worker, watches them."""

    def __init__(
        self,
        listener: socket.socket,
        board: pool.Board,
        run_worker: Callable[[pool.Seat, socket.socket], int],
        *,
        read_seconds: float | None = None,
        idle_seconds: float | None = None,
    ) -> None:
        self.listener = listener
        self.read_seconds = runner.checked_seconds(
            "request_read_seconds",
            runner.REQUEST_READ_SECONDS if read_seconds is None else read_seconds,
        )
        self.idle_seconds = runner.checked_seconds(
            "idle_connection_seconds",
            runner.IDLE_CONNECTION_SECONDS if idle_seconds is None else idle_seconds,
        )
        self.board = board
        self.run_worker = run_worker
        self.workers = [_Worker(index) for index in range(board.workers)]
        self.selector = selectors.DefaultSelector()
        # Each connection not handed on yet, to the time it is refused: its first byte's
        # arrival plus the read time once it sent one, else its accept plus the idle time.
        self.peeking: dict[socket.socket, float] = {}
        self.silent: set[socket.socket] = set()
        self.retry: list[socket.socket] = []
        self.deaths: collections.deque[float] = collections.deque()
        self.stop_signal: int | None = None
        self.failure: str | None = None
        self._turn = 0
        self._wake_r, self._wake_w = socket.socketpair()

    # --- processes ---------------------------------------------------------------------------

    def spawn(self, worker: _Worker) -> None:
        """Fork worker ``worker.index``'s next life."""
        worker.generation += 1
        worker.restart_at = None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        board, index = self.board, worker.index
        board.set(index, "generation", worker.generation)
        board.set(index, "ready", 0)
        board.set(index, "sessions", 0)
        board.set(index, "alive", 1)
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                ours.close()
                self._forget_in_child()
                code = self.run_worker(pool.Seat(board, index, worker.generation), theirs)
            except BaseException:
                traceback.print_exc()
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        theirs.close()
        ours.setblocking(False)
        worker.pid = pid
        worker.control = ours
        board.set(index, "pid", pid)
        self._flush(worker)

    def _forget_in_child(self) -> None:
        """In a forked worker: drop the front's sockets and signal handling."""
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        with contextlib.suppress(Exception):
            self.selector.close()
        for sock in (self.listener, self._wake_r, self._wake_w, *self.peeking, *self.retry):
            sock.close()
        for other in self.workers:
            if other.control is not None:
                other.control.close()
            for waiting in other.outbox:
                waiting.close()

    def _reap(self) -> None:
        """Collect every worker that exited; restart it, or stop the server."""
        for worker in self.workers:
            if worker.pid is None:
                continue
            try:
                pid, status = os.waitpid(worker.pid, os.WNOHANG)
            except ChildProcessError:
                pid, status = worker.pid, 0
            if pid == 0:
                continue
            self._exited(worker, os.waitstatus_to_exitcode(status))

    def _exited(self, worker: _Worker, code: int) -> None:
        board, index = self.board, worker.index
        lost = int(board.get(index, "sessions"))
        board.set(index, "alive", 0)
        board.set(index, "ready", 0)
        worker.pid = None
        if worker.control is not None:
            with contextlib.suppress(Exception):
                self.selector.unregister(worker.control)
            worker.control.close()
            worker.control = None
        if self.stop_signal is not None:
            return
        if code == 0:
            # Only a stop request ends a worker cleanly: someone asked this server to stop.
            _log.warning("worker %d stopped by itself; stopping the server", index)
            self.stop_signal = signal.SIGTERM
            return
        how = f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
        board.set(index, "deaths", board.get(index, "deaths") + 1)
        board.set(index, "lost", board.get(index, "lost") + lost)
        board.set(index, "died_at", time.time())
        now = time.monotonic()
        self.deaths.append(now)
        while self.deaths and now - self.deaths[0] > RESTART_WINDOW_SECONDS:
            self.deaths.popleft()
        if len(self.deaths) > MAX_RESTARTS:
            self.failure = (
                f"worker {index} {how}, and workers died {len(self.deaths)} times in "
                f"{RESTART_WINDOW_SECONDS:g} s; the server stops rather than restart them again "
                "(the log above says why they died)"
            )
            _log.error("%s", self.failure)
            self.stop_signal = signal.SIGTERM
            return
        _log.error(
            "worker %d (pid %s) %s; its %d session(s) are lost, and their clients are told so "
            "on their next frame; restarting it",
            index,
            board.get(index, "pid"),
            how,
            lost,
        )
        worker.restart_at = now + RESTART_DELAY_SECONDS

    # --- connections -------------------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                _log.warning("cannot accept a connection: %s", error.strerror or error)
                return
            conn.setblocking(False)
            self.peeking[conn] = time.monotonic() + self.idle_seconds
            self.silent.add(conn)
            self.selector.register(conn, selectors.EVENT_READ, "peek")

    def _peek(self, conn: socket.socket) -> None:
        try:
            data = conn.recv(PEEK_LIMIT, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop(conn)
            conn.close()
            return
        if conn in self.silent:
            # The head's clock starts at its first byte, not at accept(): a client that waited
            # for the CPU before it wrote has not been slow to send its request.
            self.silent.discard(conn)
            self.peeking[conn] = time.monotonic() + self.read_seconds
        complete, token = route_of(data)
        if not complete:
            # More is on its way: look again shortly rather than spin on what is there (and
            # past the deadline, ``_expire`` refuses it).
            self.selector.unregister(conn)
            self.retry.append(conn)
            return
        self._drop(conn)
        self._hand(conn, token)

    def _expire(self, now: float) -> None:
        """Refuse every connection whose request has not arrived whole in time, as a worker would.

        A connection that sends nothing never wakes the selector, so the deadline is
        checked here, not when bytes come.
        """
        late = [conn for conn, deadline in self.peeking.items() if deadline <= now]
        for conn in late:
            self._drop(conn)
            if conn in self.retry:
                self.retry.remove(conn)
            with contextlib.suppress(OSError):
                # Read what came first: closing with unread bytes would reset the connection
                # before the client reads the answer.
                while conn.recv(65536):
                    pass
            with contextlib.suppress(OSError):
                conn.send(_REQUEST_TIMEOUT)
                conn.shutdown(socket.SHUT_WR)
            conn.close()

    def _drop(self, conn: socket.socket) -> None:
        self.peeking.pop(conn, None)
        self.silent.discard(conn)
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(conn)

    def _hand(self, conn: socket.socket, token: str | None) -> None:
        """Send ``conn`` to the worker ``token`` names, or to the next live one."""
        live = [w for w in self.workers if w.control is not None and self._ready(w)]
        owner = pool.owner_of(token) if token is not None else None
        chosen: _Worker | None = None
        if owner is not None and owner[0] < len(self.workers):
            named = self.workers[owner[0]]
            # Its worker is gone: any live one answers that the session was lost.
            chosen = named if named.control is not None or not live else None
        if chosen is None:
            if live:
                self._turn = (self._turn + 1) % len(live)
                chosen = live[self._turn]
            else:
                chosen = self.workers[self._turn % len(self.workers)]
        chosen.outbox.append(conn)
        self._flush(chosen)

    def _ready(self, worker: _Worker) -> bool:
        return bool(self.board.get(worker.index, "ready"))

    def _flush(self, worker: _Worker) -> None:
        """Send the worker what waits for it, until its socket's buffer is full."""
        control = worker.control
        if control is None:
            return
        while worker.outbox:
            conn = worker.outbox[0]
            try:
                socket.send_fds(control, [b"c"], [conn.fileno()])
            except (BlockingIOError, InterruptedError):
                with contextlib.suppress(KeyError):
                    self.selector.register(control, selectors.EVENT_WRITE, ("drain", worker))
                return
            except OSError:
                # The worker is going; its connections wait for the next life, or are dropped.
                return
            worker.outbox.popleft()
            conn.close()
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(control)

    # --- the loop ----------------------------------------------------------------------------

    def run(self, announce: Callable[[], None]) -> int:
        """Start the workers, route connections until stopped; the process's exit status."""
        self.listener.setblocking(False)
        self.listener.listen(BACKLOG)
        self._wake_w.setblocking(False)
        previous = signal.set_wakeup_fd(self._wake_w.fileno())
        handlers = {
            sig: signal.signal(sig, self._on_signal)
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD)
        }
        try:
            for worker in self.workers:
                self.spawn(worker)
            started = self._wait_started()
            if started:
                announce()
                self.selector.register(self.listener, selectors.EVENT_READ, "accept")
                self.selector.register(self._wake_r, selectors.EVENT_READ, "wake")
            while started and self.stop_signal is None:
                self._tick()
        finally:
            self._stop_all()
            signal.set_wakeup_fd(previous)
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
            self.selector.close()
            self._wake_r.close()
            self._wake_w.close()
        if self.failure is not None:
            raise WorldBug(self.failure)
        return 0

    def _on_signal(self, signum: int, frame: Any) -> None:
        if signum != signal.SIGCHLD:
            self.stop_signal = signum

    def _wait_started(self) -> bool:
        deadline = time.monotonic() + START_SECONDS
        while not all(self._ready(w) for w in self.workers):
            for worker in self.workers:
                if worker.pid is None:
                    continue
                pid, _ = os.waitpid(worker.pid, os.WNOHANG)
                if pid != 0:
                    worker.pid = None
                    self.failure = f"worker {worker.index} failed to start; its log above says why"
                    return False
            if self.stop_signal is not None:
                return False
            if time.monotonic() > deadline:
                self.failure = f"the workers did not start within {START_SECONDS:g} s"
                return False
            time.sleep(0.02)
        return True

    def _tick(self) -> None:
        timeout = 0.1 if not self.retry else PEEK_RETRY_SECONDS
        for event, _ in self.selector.select(timeout):
            what = event.data
            if what == "accept":
                self._accept()
            elif what == "wake":
                with contextlib.suppress(BlockingIOError):
                    self._wake_r.recv(512)
            elif what == "peek":
                self._peek(event.fileobj)  # type: ignore[arg-type]
            else:
                self._flush(what[1])
        self._expire(time.monotonic())
        if self.retry:
            waiting, self.retry = self.retry, []
            for conn in waiting:
                self.selector.register(conn, selectors.EVENT_READ, "peek")
        self._reap()
        now = time.monotonic()
        for worker in self.workers:
            due = worker.restart_at is not None and now >= worker.restart_at
            if due and self.stop_signal is None:
                self.spawn(worker)

    def _stop_all(self) -> None:
        """Ask every worker to stop, wait for them (killing any that will not), drop the rest."""
        if self.stop_signal is None:
            self.stop_signal = signal.SIGTERM
        with contextlib.suppress(Exception):
            self.selector.unregister(self.listener)
        self.listener.close()
        for conn in [*self.peeking, *self.retry]:
            conn.close()
        self.peeking.clear()
        self.silent.clear()
        self.retry.clear()
        for worker in self.workers:
            for conn in worker.outbox:
                conn.close()
            worker.outbox.clear()
            if worker.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        while any(w.pid is not None for w in self.workers):
            self._reap()
            if time.monotonic() > deadline:
                for worker in self.workers:
                    if worker.pid is not None:
                        _log.error("worker %d did not stop in time; killing it", worker.index)
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(worker.pid, signal.SIGKILL)
                deadline = time.monotonic() + STOP_SECONDS
            time.sleep(0.02)


def serve_workers(
    build: Callable[[int], tuple[FastAPI, uvicorn.Server]],
    workers: int,
    settings: Mapping[str, Any],
    *,
    out: TextIO | None = None,
    announce: Callable[[int], Sequence[str]],
    prepare: Callable[[], None],
) -> None:
    """Serve from ``workers`` processes behind one port until stopped.

    ``build(port)`` makes a worker's app and uvicorn server, in the worker;
    ``settings`` are ``serve``'s (its host and port are read here);
    ``announce(port)`` the lines to print once every worker is up; ``prepare()``
    runs in each worker before it serves (logging, GC).
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise WorldBug(f"workers is a whole number of processes, 1 or more, not {workers!r}")
    host, port = settings.get("host", "127.0.0.1"), settings.get("port", 8000)
    stream = sys.stdout if out is None else out
    listener = runner.bind(host, port)
    bound: int = listener.getsockname()[1]
    board = pool.Board(workers)

    def run_worker(seat: pool.Seat, control: socket.socket) -> int:
        die_with_parent()
        application, server = build(bound)
        application.state.hub.join_pool(seat)
        application.add_middleware(CloseAfterResponse)
        prepare()
        started = asyncio.run(serve_handed(server, control, seat))
        return 0 if started else 1

    def say() -> None:
        for line in announce(bound):
            print(line, file=stream, flush=True)
        print(
            f"{workers} worker processes share port {bound} (GET /metrics shows each one)",
            file=stream,
            flush=True,
        )

    try:
        front = Front(
            listener,
            board,
            run_worker,
            read_seconds=settings.get("request_read_seconds"),
            idle_seconds=settings.get("idle_connection_seconds"),
        )
        front.run(say)
    finally:
        listener.close()
