"""A worker process of an eval: what it starts with, and how it runs the trials it is sent.

``seahaven.evaluation.processes`` starts each worker (forked, calling
``forked_main``, or a new interpreter calling ``main``, with the number of its
end of a socket pair) and sends it a
``WorkerSetup`` (the policy and the users' source, pickled; each pack by its
``source``, or pickled when it has none; how the trials run); ``serve`` runs in
the worker:
it loads the policy and the packs once (a pack loaded by source must have the
content hash the parent's has), says it is ready, then runs each trial it is
sent on an event loop, at most ``concurrency`` at a time, with the code that
runs trials in the parent (``run_trial_async``), and sends each result back, its
transcript with it. Only the standard library's ``pickle`` is used: a policy or
a pack that it cannot carry is refused in the parent, before any trial.

The parent stops a worker with a message (or by closing its end of the pipe);
the trials in flight are cancelled, their instances destroyed, and the worker
exits. A worker runs in a process group of its own, so a Ctrl-C at the terminal
reaches the parent only, which stops its workers. A worker that runs its trials
in turn on its main thread (one at a time, a plain policy, no time limit: how the
runner in process runs them too) is also sent ``SIGINT``, which stops the trial
it runs where it is; any other worker ignores one.

The messages, parent to worker: the ``WorkerSetup``, then ``("trial", index,
pack key, scenario id, trial, seed)`` and ``("stop",)``; worker to parent:
``("ready",)`` or ``("refused", text)``, then for each trial ``("started", index)``
and ``("result", index, result)``, or ``("failed", index, text)`` for a trial
that could not start. A worker that runs its trials in turn is sent them in
batches, ``("trials", [(index, pack key, scenario id, trial, seed), ...])``, says
each trial begins on the begun channel (``seahaven.evaluation.begun``) instead of
with a message, and sends its results as ``("results", [(index, result), ...])``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import pickle
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.evaluation.begun import BegunWriter
from seahaven.evaluation.policies import Policy, close_policy_async, is_async_policy, load_policy
from seahaven.evaluation.results import TrialError, TrialResult
from seahaven.evaluation.shipments import PackShipment, one_line
from seahaven.evaluation.trials import TrialSpec, run_trial, run_trial_async
from seahaven.evaluation.users import UserSource, close_user, close_user_async
from seahaven.instance.creation import destroy_live_instances
from seahaven.scenarios.pack import ScenarioSet

__all__ = [
    "RESULTS_BATCH",
    "RESULTS_WAIT",
    "WorkerSetup",
    "forked_main",
    "in_turn",
    "main",
    "serve",
]


@dataclass(frozen=True, slots=True)
class WorkerSetup:
    """What a worker process starts with: the policy, the packs, and how its trials run."""

    # How results name the worker (``TrialResult.runner``).
    name: str
    # The pickled policy, or ``module:attr`` to import in the worker.
    policy: bytes | str
    policy_name: str
    # Each pack by the key trials name it with.
    packs: Mapping[str, PackShipment]
    # Trials at once in this worker.
    concurrency: int
    storage: str | None = None
    trial_timeout: float | None = None
    record: bool = False
    # What plays the scenarios' users, pickled (``None``: each scenario's own).
    user: bytes | None = None
    # The parent's import path, so that what it pickled by reference imports here too.
    path: Sequence[str] = ()
    # Run the trials one after another on the worker's main thread, as the runner in process
    # does (``in_turn``), rather than on an event loop.
    in_turn: bool = False


# A worker running its trials in turn sends their results in batches: at most this many in
# a message, and a batch goes once its first result has waited this many seconds, or after
# a trial that took as long; always before the worker waits for its next trials.
RESULTS_BATCH = 32
RESULTS_WAIT = 0.05


def in_turn(concurrency: int, trial_timeout: float | None, policy: Policy) -> bool:
    """Whether a worker runs its trials in turn on its main thread: one at a time, no time
    limit and a plain policy, the case where the runner in process does so too."""
    return concurrency == 1 and trial_timeout is None and not is_async_policy(policy)


# --- in the worker -------------------------------------------------------------------------------


def main() -> None:
    """A spawned worker's entry: its end of the socket pair, and of the begun channel when it
    runs its trials in turn, are the file descriptors in argv."""
    # A Ctrl-C is the parent's to act on (it stops its workers); this process is in a group
    # of its own, so none should come from the terminal, but one sent by hand is ignored too.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    given = sys.argv[1:]
    if len(given) not in (1, 2) or not all(part.isdigit() for part in given):
        sys.exit("seahaven's eval worker is started by seahaven.evaluation.processes")
    _begin(int(given[0]), int(given[1]) if len(given) == 2 else None)


def forked_main(descriptor: int, parents: Sequence[int], begun: int | None = None) -> None:
    """A forked worker's entry: ``descriptor`` is its end, ``parents`` the parent's ends to close.

    It holds no other worker's socket open, so each worker sees its own parent go.
    ``begun`` is its end of the begun channel, when it runs its trials in turn.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A group of its own, as a spawned worker's: a Ctrl-C at the terminal is the parent's.
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    for inherited in parents:
        with contextlib.suppress(OSError):
            os.close(inherited)
    # What it inherited is the parent's: the collector leaves it alone, as walking it would
    # touch (and so copy) every page it sits on, the whole of the parent's heap, in each worker.
    gc.freeze()
    _begin(descriptor, begun)


def _begin(descriptor: int, begun: int | None) -> None:
    connection = Connection(descriptor)
    try:
        setup = connection.recv()
    except (EOFError, OSError):
        _exit(0)  # the parent went before sending anything
    if not isinstance(setup, WorkerSetup) or setup.in_turn != (begun is not None):
        _exit(2)
    serve(connection, setup, None if begun is None else BegunWriter(begun))


def serve(connection: Connection, setup: WorkerSetup, begun: BegunWriter | None = None) -> None:
    """A worker process's life: load, say ready, run the trials sent until told to stop.

    ``begun`` is where a worker that runs its trials in turn says each one begins.
    """
    for entry in setup.path:
        if entry not in sys.path:
            sys.path.append(entry)
    try:
        policy, user, packs = _load(setup)
    except WorldBug as problem:
        _send(connection, ("refused", str(problem)))
        _exit(0)
    _send(connection, ("ready",))
    try:
        if begun is not None:
            _run_in_turn(connection, setup, policy, user, packs, begun)
        else:
            asyncio.run(_Worker(connection, setup, policy, user, packs).run())
    finally:
        if user is not None:
            close_user(user)
        # Not the interpreter's own exit: that would wait for a plain policy still running in
        # a thread after its trial was cancelled, which ends at its next call, or never.
        _exit(0)


def _exit(status: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def _send(connection: Connection, message: tuple[Any, ...]) -> None:
    with contextlib.suppress(OSError):  # the parent has gone: nobody to tell
        connection.send(message)


def _load(setup: WorkerSetup) -> tuple[Policy, UserSource | None, dict[str, ScenarioSet]]:
    where = setup.name
    if isinstance(setup.policy, str):
        try:
            policy = load_policy(setup.policy)
        except WorldBug as error:
            raise WorldBug(f"in {where}: {error}") from None
    else:
        policy = _unpickle(setup.policy, f"the policy {setup.policy_name}", where)
    user = None if setup.user is None else _unpickle(setup.user, "the users' source", where)
    packs = {key: _load_pack(shipment, where) for key, shipment in setup.packs.items()}
    return policy, user, packs


def _unpickle(data: bytes, what: str, where: str) -> Any:
    try:
        return pickle.loads(data)
    except Exception as error:
        raise WorldBug(
            f"{what} cannot be loaded in {where}: {type(error).__name__}: {one_line(error)}; "
            "what travels to a worker by reference to its module must be importable there: "
            "define it in a module (not in __main__ or an interactive session), or run in this "
            "process only (workers=1)"
        ) from None


def _load_pack(shipment: PackShipment, where: str) -> ScenarioSet:
    if shipment.pickled is not None:
        try:
            loaded: ScenarioSet = pickle.loads(shipment.pickled)
        except Exception as error:
            raise WorldBug(
                f"pack {shipment.name!r} cannot be loaded in {where}: {type(error).__name__}: "
                f"{one_line(error)}; the modules of its graders and worlds must be importable "
                "there, or load the pack by name (seahaven.scenarios.load_pack)"
            ) from None
        return loaded
    from seahaven.scenarios.registry import load_pack

    assert shipment.source is not None
    try:
        pack = load_pack(shipment.source)
    except WorldBug as error:
        raise WorldBug(
            f"pack {shipment.name!r} cannot be loaded as {shipment.source!r} in {where}: {error}"
        ) from None
    if pack.hash != shipment.hash:
        raise WorldBug(
            f"pack {shipment.source!r} in {where} is not the parent's: its content hash is "
            f"{pack.hash[:12]} there and {shipment.hash[:12]} in the parent (version "
            f"{pack.version} there, {shipment.version} in the parent); the pack changed on disk "
            "while the eval started: run it again"
        )
    return pack


def _run_in_turn(
    connection: Connection,
    setup: WorkerSetup,
    policy: Policy,
    user: UserSource | None,
    packs: dict[str, ScenarioSet],
    begun: BegunWriter,
) -> None:
    """Run each trial sent, one after another on this thread, until told to stop.

    No event loop and no thread to hand each trial to: a trial costs here what it
    costs in the parent. The trials come a batch at a time (``("trials", [...])``);
    each one's start goes to ``begun``; the results go back in batches
    (``("results", [...])``): a batch goes once its first result has waited
    ``RESULTS_WAIT`` seconds, after a trial that took as long, at ``RESULTS_BATCH``
    results, and always before this worker waits for more trials, so that a quick
    pack's trials do not wake the parent one by one. A worker that dies loses the
    results it had not sent, which the parent errors with the trial it ran. A stop
    comes between trials as a message; while a trial runs, the parent's SIGINT stops
    it where it is (``KeyboardInterrupt``), and its instance is destroyed on the way
    out. A SIGINT between trials is ignored: the stop message is there.
    """
    worlds: dict[str, World] = {}
    queued: deque[tuple[Any, ...]] = deque()
    done: list[tuple[int, TrialResult]] = []
    since = 0.0
    running = False

    def stop_the_trial(signum: int, frame: object) -> None:
        if running:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, stop_the_trial)
    try:
        while True:
            if not queued:
                # What is done goes back before waiting for more.
                _send_results(connection, setup, done)
                try:
                    message = connection.recv()
                except (EOFError, OSError):
                    return  # the parent closed its end, or died: stop, as it would have said
                if message[0] != "trials":
                    return
                queued.extend(message[1])
            index, spec = _trial_spec(packs, queued.popleft())
            begun.note(index)
            failure: Exception | None = None
            running = True
            try:
                result = run_trial(
                    spec,
                    policy,
                    world=_world(worlds, spec),
                    storage=setup.storage,
                    record=setup.record,
                    user=user,
                )
            except Exception as error:
                failure = error
            finally:
                running = False
            if failure is not None:
                # The trial could not start (a fixture that does not exist): the run stops.
                _send_results(connection, setup, done)
                _send(connection, ("failed", index, _described(failure)))
                continue
            now = time.monotonic()
            if not done:
                since = now
            done.append((index, result))
            if (
                len(done) >= RESULTS_BATCH
                or now - since >= RESULTS_WAIT
                or result.seconds >= RESULTS_WAIT
            ):
                _send_results(connection, setup, done)
    except KeyboardInterrupt:
        # The stop's interrupt may have landed before the trial's instance was handed to the
        # trial or while the trial let it go: whatever it left is destroyed here.
        destroy_live_instances()


def _send_results(
    connection: Connection, setup: WorkerSetup, done: list[tuple[int, TrialResult]]
) -> None:
    """Send the results in ``done`` in one message, and empty it."""
    if not done:
        return
    batch = list(done)
    done.clear()
    try:
        connection.send(("results", batch))
    except OSError:
        return  # the parent has gone
    except Exception:
        # A transcript that does not pickle: each result on its own, that one errored.
        for index, result in batch:
            _send_result(connection, setup, index, result)


def _trial_spec(packs: dict[str, ScenarioSet], trial: tuple[Any, ...]) -> tuple[int, TrialSpec]:
    """The index and the spec of a trial as sent: ``(index, pack key, scenario, trial, seed)``."""
    index, key, scenario_id, number, seed = trial
    pack = packs[key]
    return index, TrialSpec(pack, pack.get(scenario_id), number, seed)


def _world(worlds: dict[str, World], spec: TrialSpec) -> World:
    """The world ``spec``'s scenario plays in, resolved once a worker."""
    name = spec.scenario.world_name
    found = worlds.get(name)
    if found is None:
        found = worlds[name] = spec.scenario.resolve_world()
    return found


def _described(error: Exception) -> str:
    """A trial that could not start (a fixture that does not exist), in one line for the parent."""
    text = one_line(error, 2000)
    return text if isinstance(error, WorldBug) else f"{type(error).__name__}: {text}"


def _send_result(
    connection: Connection, setup: WorkerSetup, index: int, result: TrialResult
) -> None:
    """Send a trial's result; one whose transcript does not pickle goes back errored."""
    try:
        connection.send(("result", index, result))
    except OSError:
        return  # the parent has gone
    except Exception as error:
        # What the policy left on the transcript does not pickle: the trial ran, but its
        # result cannot reach the parent whole, so it is errored and runs again on resume.
        unsent = result.with_transcript(None).model_copy(
            update={
                "score": 0.0,
                "passed": False,
                "error": TrialError(
                    kind="runner",
                    message=(
                        f"{setup.name} could not send the trial's transcript back: "
                        f"{type(error).__name__}: {one_line(error)}"
                    ),
                ),
                "errored": True,
            }
        )
        _send(connection, ("result", index, unsent))


class _Worker:
    """The trials of one worker process, on its event loop."""

    def __init__(
        self,
        connection: Connection,
        setup: WorkerSetup,
        policy: Policy,
        user: UserSource | None,
        packs: dict[str, ScenarioSet],
    ) -> None:
        self._connection = connection
        self._setup = setup
        self._policy = policy
        self._user = user
        self._packs = packs
        self._worlds: dict[str, World] = {}

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

        def read() -> None:
            # The pipe is read on a thread of its own, so the loop never waits on it.
            try:
                while True:
                    message = self._connection.recv()
                    loop.call_soon_threadsafe(inbox.put_nowait, message)
                    if message[0] == "stop":
                        return
            except (EOFError, OSError):
                # The parent closed its end, or died: stop, as it would have said.
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(inbox.put_nowait, ("stop",))

        threading.Thread(target=read, name="seahaven-worker-inbox", daemon=True).start()
        setup = self._setup
        threads = None if is_async_policy(self._policy) else ThreadPoolExecutor(setup.concurrency)
        # The parent sends a trial or so more than the worker runs at once, so that the next
        # one is here when a slot frees; those wait for a slot in the order they came.
        slots = asyncio.Semaphore(setup.concurrency)
        running: set[asyncio.Task[None]] = set()
        try:
            while True:
                message = await inbox.get()
                if message[0] != "trial":
                    break
                task = asyncio.ensure_future(self._trial(message, slots, threads))
                running.add(task)
                task.add_done_callback(running.discard)
        finally:
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            await close_policy_async(self._policy)
            if self._user is not None:
                await close_user_async(self._user)
            if threads is not None:
                threads.shutdown(wait=False, cancel_futures=True)

    async def _trial(
        self,
        message: tuple[Any, ...],
        slots: asyncio.Semaphore,
        threads: ThreadPoolExecutor | None,
    ) -> None:
        index, spec = _trial_spec(self._packs, message[1:])
        setup = self._setup
        async with slots:
            # Said as it starts, so that the parent knows which trials a worker that dies
            # took down with it, and which it never began (those run elsewhere).
            _send(self._connection, ("started", index))
            try:
                world = _world(self._worlds, spec)
                result = await run_trial_async(
                    spec,
                    self._policy,
                    world=world,
                    runner="in process",
                    storage=setup.storage,
                    record=setup.record,
                    timeout=setup.trial_timeout,
                    executor=threads,
                    user=self._user,
                )
            except Exception as error:
                # The trial could not start (a fixture that does not exist): the run stops, as
                # it does in the parent.
                _send(self._connection, ("failed", index, _described(error)))
                return
        _send_result(self._connection, setup, index, result)
