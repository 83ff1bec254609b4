"""Trials spread over worker processes, each running its share on an event loop of its own.

``run_in_processes(specs, policy, workers=N, concurrency=C)`` is a
``TrialRunner`` for the cores of one machine: it starts ``N`` worker processes
(``seahaven.evaluation.worker``), splits the ``C`` trials at once between them,
hands each worker the next trial of the plan as it finishes one, and yields
each result in this process as it comes. A trial runs in a worker exactly as
it does here (``run_trial_async``, its own seed and instance), so the results
are the ones one process gives; only how long they took differs.

What a worker needs travels once, when it starts, with the standard library's
``pickle``: the policy (a function by reference to its module, an object with
its fields), the users' source, and each pack by its ``source`` (the worker
loads it, and must find the same content hash) or pickled whole. What does not
pickle, or does not load in a worker, is refused before any trial runs, with
a ``WorldBug`` naming what to give instead.

A worker that runs one trial at a time of a plain policy with no time limit
runs its trials in turn on its main thread, as the runner in process does: it is
sent them in batches, sized to about ``_AHEAD_SECONDS`` of trials as the results
so far tell, and sends its results back in batches (``worker.RESULTS_WAIT``), so
that a pack whose trials take a millisecond does not wake this process for each;
which trial it has begun it writes to a channel of its own
(``seahaven.evaluation.begun``), read here only when this process is awake anyway.

A worker that dies (killed, out of memory, ``os._exit`` in a policy) makes the
trials it had begun errored, of kind ``runner``, for ``--resume`` to run
again (for a worker running its trials in turn, those whose results it had not
sent yet too: at most ``worker.RESULTS_WAIT`` seconds of them); the other
workers go on, with the trials it had been sent but had not begun too, and when
none is left the run stops with a ``SeahavenError``.
Closing the iterator (Ctrl-C, enough errored trials) tells every worker to
stop: its trials in flight are cancelled and their instances destroyed, and a
worker that has not exited within ``STOP_WAIT`` seconds is killed. Workers run
in process groups of their own, so a Ctrl-C at the terminal reaches this
process only, and one whose parent dies sees its socket close and stops by
itself: none outlives the run.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import multiprocessing
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from seahaven.errors import SeahavenError, WorldBug
from seahaven.evaluation.begun import BegunReader
from seahaven.evaluation.policies import Policy, describe_policy
from seahaven.evaluation.pool import check_concurrency, check_trial_timeout
from seahaven.evaluation.results import TrialError, TrialResult
from seahaven.evaluation.shipments import (
    PackShipment,
    pack_shipment,
    policy_shipment,
    user_shipment,
)
from seahaven.evaluation.trials import TrialSpec
from seahaven.evaluation.users import UserSource, describe_user
from seahaven.evaluation.worker import WorkerSetup, forked_main, in_turn

__all__ = [
    "STOP_WAIT",
    "check_workers",
    "choose_start_method",
    "run_in_processes",
    "split_concurrency",
]

# Seconds a worker told to stop has to cancel its trials and exit before it is killed.
STOP_WAIT = 10.0
# Trials sent to a worker beyond what it runs at once, so that the next is there when a slot
# frees rather than a round trip later.
_AHEAD = 2
# A worker running its trials in turn is sent about this many seconds of trials ahead, as far
# as the trials so far tell, between _AHEAD and _AHEAD_MOST: its results come back in batches,
# and quick trials need more ahead than a batch so that it never waits for the next one.
_AHEAD_SECONDS = 0.05
_AHEAD_MOST = 48
_ENTRY = "from seahaven.evaluation.worker import main; main()"


def check_workers(workers: object) -> int:
    """``workers`` if it is a whole number, 1 or more; a ``WorldBug`` otherwise."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise WorldBug(f"workers is a whole number of processes, 1 or more; got {workers!r}")
    return workers


def split_concurrency(concurrency: int, workers: int) -> list[int]:
    """``concurrency`` trials at once shared out over at most ``workers`` processes, as evenly.

    Fewer trials at once than workers leaves the extra workers out: each worker
    runs at least one trial at a time.
    """
    used = min(workers, concurrency)
    share, rest = divmod(concurrency, used)
    return [share + (1 if index < rest else 0) for index in range(used)]


def run_in_processes(
    specs: Sequence[TrialSpec],
    policy: Policy,
    *,
    workers: int,
    concurrency: int,
    storage: str | None = None,
    trial_timeout: float | None = None,
    record: bool = False,
    user: UserSource | None = None,
    start_method: str | None = None,
) -> Iterator[TrialResult]:
    """Run ``specs`` over ``workers`` processes, ``concurrency`` at once in all; yield each result.

    The options are ``run_concurrently``'s. A trial that cannot start (its
    fixture is missing) stops the run with that error, as it does in process.
    ``start_method`` is how workers start: ``"fork"`` (a copy of this process,
    its imports done: the default when this process runs one thread and can
    fork) or ``"spawn"`` (a new interpreter, which imports seahaven itself: the
    default otherwise, since a fork copies no other thread and keeps any lock one
    held). Either way everything a worker runs is sent to it pickled.
    """
    shares = split_concurrency(check_concurrency(concurrency), check_workers(workers))
    timeout = check_trial_timeout(trial_timeout)
    specs = list(specs)
    if not specs:
        return
    shares = shares[: len(specs)]
    # Everything is pickled now, before a process starts: what cannot travel is refused here.
    policy_data = policy_shipment(policy, describe_policy(policy))
    user_data = None if user is None else user_shipment(user, describe_user(user))
    keys: dict[int, str] = {}
    packs: dict[str, PackShipment] = {}
    for spec in specs:
        if id(spec.pack) not in keys:
            key = keys[id(spec.pack)] = f"pack {len(keys)}"
            packs[key] = pack_shipment(spec.pack)
    setups = [
        WorkerSetup(
            name=f"worker process {number + 1} of {len(shares)}",
            policy=policy_data,
            policy_name=describe_policy(policy),
            packs=packs,
            concurrency=share,
            storage=storage,
            trial_timeout=timeout,
            record=record,
            user=user_data,
            path=tuple(sys.path),
            in_turn=in_turn(share, timeout, policy),
        )
        for number, share in enumerate(shares)
    ]
    fleet = _Fleet(setups, choose_start_method(start_method))
    try:
        fleet.start()
        yield from fleet.run(specs, keys)
    finally:
        fleet.stop()


class _Fleet:
    """The worker processes of one run, the threads reading them, and the trials each holds."""

    def __init__(self, setups: list[WorkerSetup], start_method: str) -> None:
        self._setups = setups
        self._start_method = start_method
        self._processes: list[_Spawned | _Forked] = []
        self._connections: list[Connection] = []
        self._readers: list[threading.Thread] = []
        # (worker, message); ``None`` as the message once the worker's socket has closed.
        self._inbox: queue.Queue[tuple[int, Any]] = queue.Queue()
        self._worlds: dict[str, tuple[str, str]] = {}
        # The workers that said they are ready: past their start, so a SIGINT is theirs.
        self._ready: set[int] = set()
        # Each worker's begun channel, for those that run their trials in turn.
        self._begun: list[BegunReader | None] = []
        # The trials' seconds so far, and how many, for how far ahead to send.
        self._seconds = 0.0
        self._timed = 0

    def start(self) -> None:
        """Start every worker and wait until each has loaded what it runs, or refused."""
        fork = self._start_method == "fork"
        for setup in self._setups:
            ours, theirs = socket.socketpair()
            begun_ours, begun_theirs = socket.socketpair() if setup.in_turn else (None, None)
            with ours, theirs, contextlib.ExitStack() as stack:
                if begun_theirs is not None:
                    stack.enter_context(begun_theirs)
                begun = None if begun_theirs is None else begun_theirs.fileno()
                if fork:
                    parents = [c.fileno() for c in self._connections] + [ours.fileno()]
                    parents += [r.fileno() for r in self._begun if r is not None]
                    if begun_ours is not None:
                        parents.append(begun_ours.fileno())
                    self._processes.append(_fork(theirs.fileno(), parents, begun))
                else:
                    self._processes.append(_spawn(theirs.fileno(), begun))
                self._connections.append(Connection(ours.detach()))
                self._begun.append(None if begun_ours is None else BegunReader(begun_ours))
        # The threads start once every worker is forked: a fork copies only the thread that
        # makes it, and what another held (a lock) would stay held in the child for ever.
        for number, (connection, setup) in enumerate(
            zip(self._connections, self._setups, strict=True)
        ):
            reader = threading.Thread(
                target=self._read,
                args=(number, connection),
                name=f"seahaven-worker-{number + 1}",
                daemon=True,
            )
            reader.start()
            self._readers.append(reader)
            with contextlib.suppress(OSError):  # it died at once: its end of file says so below
                connection.send(setup)
        waiting = set(range(len(self._setups)))
        while waiting:
            number, message = self._inbox.get()
            if message is None:
                code = self._exit_code(number)
                raise SeahavenError(
                    f"{self._setups[number].name} exited while it started (exit code {code}); "
                    "its error is above, or run the trials in this process only (workers=1)"
                )
            if message[0] == "refused":
                raise WorldBug(str(message[1]))
            waiting.discard(number)
            self._ready.add(number)

    def run(self, specs: list[TrialSpec], keys: dict[int, str]) -> Iterator[TrialResult]:
        """Hand out ``specs`` as the workers free up; yield each result as it comes."""
        waiting = deque(enumerate(specs))
        held: list[dict[int, TrialSpec]] = [{} for _ in self._setups]
        begun: list[set[int]] = [set() for _ in self._setups]
        alive = set(range(len(self._setups)))

        def top_up(number: int) -> None:
            ahead = self._ahead(number)
            if ahead > _AHEAD:
                # Near the plan's end no worker is sent more than its share of what is left,
                # so that the workers finish together.
                ahead = max(_AHEAD, min(ahead, math.ceil(len(waiting) / max(1, len(alive)))))
            room = self._setups[number].concurrency + ahead - len(held[number])
            batch = list(itertools.islice(waiting, max(0, room)))
            sent = [
                (i, keys[id(spec.pack)], spec.scenario.id, spec.trial, spec.seed)
                for i, spec in batch
            ]
            # A worker running its trials in turn takes them a batch to a message.
            messages: list[tuple[tuple[Any, ...], list[tuple[int, TrialSpec]]]] = (
                [(("trials", sent), batch)]
                if self._setups[number].in_turn and sent
                else [(("trial", *trial), [item]) for trial, item in zip(sent, batch, strict=True)]
            )
            for message, given in messages:
                try:
                    self._connections[number].send(message)
                except OSError:
                    return  # it has gone; its end of file comes through the inbox
                for index, spec in given:
                    waiting.popleft()
                    held[number][index] = spec

        for number in alive:
            top_up(number)
        while waiting or any(held):
            if not alive:
                raise SeahavenError(
                    f"every worker process exited, {len(waiting)} trials before the end; the "
                    "finished trials are kept: fix the cause (the workers' errors are above) and "
                    "run again with --resume"
                )
            number, message = self._inbox.get()
            channel = self._begun[number]
            if channel is not None:
                # Read before the message is: a trial's start was written before its result.
                begun[number].update(channel.drain())
            if message is None:
                alive.discard(number)
                code = self._exit_code(number)
                lost, held[number] = held[number], {}
                # What it had not begun goes back to the front of the plan, for the others.
                waiting.extendleft(
                    (index, lost[index])
                    for index in sorted(lost, reverse=True)
                    if index not in begun[number]
                )
                for other in alive:
                    top_up(other)
                for index in sorted(begun[number] & lost.keys()):
                    yield self._lost(lost[index], number, code)
                continue
            kind = message[0]
            if kind == "started":
                begun[number].add(message[1])
            elif kind == "result" or kind == "results":
                done: list[tuple[int, TrialResult]] = (
                    [(message[1], message[2])] if kind == "result" else message[1]
                )
                for index, result in done:
                    held[number].pop(index, None)
                    begun[number].discard(index)
                    self._seconds += result.seconds
                    self._timed += 1
                    yield result
                top_up(number)
            elif kind == "failed":
                raise WorldBug(str(message[2]))

    def stop(self) -> None:
        """Tell every worker to stop, wait for each (killing one that does not), and let go."""
        try:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.send(("stop",))
            for number in sorted(self._ready):
                if self._setups[number].in_turn:
                    # Its trial runs on its main thread, which reads the stop only after it.
                    self._processes[number].interrupt()
            for process in self._processes:
                if process.wait(STOP_WAIT) is None:
                    process.kill()
                    process.wait(None)
        except BaseException:
            # A second Ctrl-C while they stop: no waiting any more, but no process left either.
            for process in self._processes:
                process.kill()
            raise
        finally:
            for reader in self._readers:
                reader.join(timeout=STOP_WAIT)
            for connection in self._connections:
                connection.close()
            for channel in self._begun:
                if channel is not None:
                    channel.close()

    def _ahead(self, number: int) -> int:
        """How many trials past what it runs at once worker ``number`` is sent."""
        if not self._setups[number].in_turn or not self._timed:
            return _AHEAD
        mean = self._seconds / self._timed
        wanted = int(_AHEAD_SECONDS / mean) if mean > 0 else _AHEAD_MOST
        return max(_AHEAD, min(_AHEAD_MOST, wanted))

    def _read(self, number: int, connection: Connection) -> None:
        try:
            while True:
                self._inbox.put((number, connection.recv()))
        except Exception:
            pass  # its end of file (it exited), or a message that does not load: it is lost
        finally:
            self._inbox.put((number, None))

    def _exit_code(self, number: int) -> int | str:
        process = self._processes[number]
        code = process.wait(STOP_WAIT)
        if code is None:
            # Alive but no longer heard (a message that did not load): it is of no more use.
            process.kill()
            process.wait(None)
            return "killed: its messages did not load"
        return code

    def _lost(self, spec: TrialSpec, number: int, code: int | str) -> TrialResult:
        """The errored result of a trial whose worker went while it ran."""
        name = spec.scenario.world_name
        if name not in self._worlds:
            try:
                world = spec.scenario.resolve_world()
                self._worlds[name] = (world.name, world.version)
            except Exception:
                self._worlds[name] = (name, "unknown")
        world_name, version = self._worlds[name]
        return spec.result(
            world=world_name,
            world_version=version,
            score=0.0,
            passed=False,
            error=TrialError(
                kind="runner",
                message=(
                    f"{self._setups[number].name} exited (exit code {code}) before it sent the "
                    "trial's result; --resume runs it again"
                ),
            ),
        )


def choose_start_method(given: str | None) -> str:
    """``given`` checked, or the default: fork when it is safe here, else spawn."""
    if given is None:
        can_fork = hasattr(os, "fork") and threading.active_count() == 1
        return "fork" if can_fork else "spawn"
    if given not in ("fork", "spawn"):
        raise WorldBug(f"start_method is 'fork', 'spawn' or None; got {given!r}")
    if given == "fork" and not hasattr(os, "fork"):
        raise WorldBug("start_method='fork' needs os.fork, which this platform lacks; use spawn")
    return given


class _Spawned:
    """A worker started as a new interpreter."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process

    def wait(self, timeout: float | None) -> int | None:
        """Its exit code once it has exited, ``None`` if it still runs after ``timeout``."""
        try:
            return self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """Kill it (if it still runs)."""
        with contextlib.suppress(OSError):
            self._process.kill()

    def interrupt(self) -> None:
        """Send it ``SIGINT`` (if it still runs)."""
        with contextlib.suppress(OSError):
            self._process.send_signal(signal.SIGINT)


class _Forked:
    """A worker forked from this process (by ``multiprocessing``, which reaps it)."""

    def __init__(self, process: BaseProcess) -> None:
        self._process = process

    def wait(self, timeout: float | None) -> int | None:
        """Its exit code once it has exited, ``None`` if it still runs after ``timeout``."""
        self._process.join(timeout)
        return self._process.exitcode

    def kill(self) -> None:
        """Kill it (if it still runs)."""
        with contextlib.suppress(OSError, ValueError):
            self._process.kill()

    def interrupt(self) -> None:
        """Send it ``SIGINT`` (if it still runs)."""
        pid = self._process.pid
        if pid is not None and self._process.exitcode is None:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGINT)


def _spawn(descriptor: int, begun: int | None) -> _Spawned:
    given = (descriptor,) if begun is None else (descriptor, begun)
    return _Spawned(
        subprocess.Popen(
            [sys.executable, "-c", _ENTRY, *map(str, given)],
            pass_fds=given,
            stdin=subprocess.DEVNULL,
            # A group of its own: a Ctrl-C at the terminal is this process's to handle.
            process_group=0,
        )
    )


def _fork(descriptor: int, parents: list[int], begun: int | None) -> _Forked:
    # What this process has buffered would otherwise be written twice, by each of them.
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    # Daemonic: should this process exit without stopping it, multiprocessing ends it then.
    process = multiprocessing.get_context("fork").Process(
        target=forked_main,
        args=(descriptor, parents, begun),
        name="seahaven-eval-worker",
        daemon=True,
    )
    process.start()
    return _Forked(process)
