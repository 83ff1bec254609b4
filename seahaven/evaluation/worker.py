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
reaches the parent only, which stops its workers; a worker ignores one anyway.

The messages, parent to worker: the ``WorkerSetup``, then ``("trial", index,
pack key, scenario id, trial, seed)`` and ``("stop",)``; worker to parent:
``("ready",)`` or ``("refused", text)``, then for each trial ``("started", index)``
and ``("result", index, result)``, or ``("failed", index, text)`` for a trial
that could not start.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import pickle
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.evaluation.policies import Policy, close_policy_async, is_async_policy, load_policy
from seahaven.evaluation.results import TrialError, TrialResult
from seahaven.evaluation.trials import TrialSpec, run_trial_async
from seahaven.evaluation.users import UserSource, close_user, close_user_async
from seahaven.scenarios.pack import ScenarioSet

__all__ = [
    "PackShipment",
    "WorkerSetup",
    "forked_main",
    "main",
    "one_line",
    "pack_shipment",
    "policy_shipment",
    "registered_name",
    "registered_world",
    "serve",
    "user_shipment",
]


@dataclass(frozen=True, slots=True)
class PackShipment:
    """How one pack reaches a worker: by ``source`` (loaded there), or ``pickled`` whole."""

    name: str
    version: str
    hash: str
    source: str | None
    pickled: bytes | None


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


def one_line(error: BaseException, limit: int = 500) -> str:
    """``error``'s text on one line, cut at ``limit`` characters."""
    return " ".join(str(error).split())[:limit]


def policy_shipment(policy: Policy, name: str) -> bytes:
    """``policy`` pickled for a worker; a ``WorldBug`` saying what to give when it cannot be."""
    try:
        return pickle.dumps(policy)
    except Exception as error:
        raise WorldBug(
            f"the policy {name} cannot be sent to worker processes: it does not pickle "
            f"({type(error).__name__}: {one_line(error)}); give a function defined at the top "
            "of a module, an object of a class a module defines, or 'module:function', or run "
            "the trials in this process only (workers=1, the default)"
        ) from None


def pack_shipment(pack: ScenarioSet) -> PackShipment:
    """How ``pack`` reaches the workers: pickled, else by its source (loaded there).

    Pickled first, as loading a pack again costs a worker far more (the company
    pack: 0.9 s of YAML and hashing, against 11 ms to unpickle).
    """
    try:
        pickled = _dump_pack(pack)
    except Exception as error:
        if pack.source is not None:
            return PackShipment(pack.name, pack.version, pack.hash, pack.source, None)
        if isinstance(error, WorldBug):
            raise
        raise WorldBug(
            f"pack {pack.name!r} was built in Python and cannot be sent to worker processes: it "
            f"does not pickle ({type(error).__name__}: {one_line(error)}); publish it under the "
            "seahaven.scenarios entry points, or load it with "
            "seahaven.scenarios.load_pack('module:attr'), so that each worker loads it itself, "
            "or run the trials in this process only (workers=1)"
        ) from None
    return PackShipment(pack.name, pack.version, pack.hash, None, pickled)


def _dump_pack(pack: ScenarioSet) -> bytes:
    """The pack pickled, each ``World`` in it by its registered name."""

    class PackPickler(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, World):
                return (registered_world, (registered_name(pack, obj),))
            return NotImplemented

    buffer = io.BytesIO()
    PackPickler(buffer).dump(pack)
    return buffer.getvalue()


def registered_name(
    pack: ScenarioSet,
    world: World,
    *,
    where: str = "worker processes",
    otherwise: str = "run the trials in this process only (workers=1)",
) -> str:
    """The name a ``World`` held by ``pack`` travels by to ``where``: its registered name.

    A world does not pickle; it travels as the name the registry loads it by on the
    other side (``registered_world``), so it must be the world registered under its
    name. Raises ``WorldBug`` naming the fixes otherwise, ``otherwise`` among them.
    """
    from seahaven.registry.worlds import registry

    try:
        registered: World | None = registry().load(world.name)
    except Exception:
        registered = None
    if registered is not world:
        raise WorldBug(
            f"pack {pack.name!r} holds the World {world.name!r} itself, which cannot be sent to "
            f"{where} (a world does not pickle) and is not the world registered under that "
            f"name; give its scenarios world={world.name!r} for an installed world, or "
            f"world='module:attr', or {otherwise}"
        )
    return world.name


def registered_world(name: str) -> World:
    """The world registered as ``name`` here: how a pickled pack's worlds are found again."""
    from seahaven.registry.worlds import registry

    return registry().load(name)


def user_shipment(user: UserSource, name: str) -> bytes:
    """``user`` pickled for a worker; a ``WorldBug`` saying what to give when it cannot be."""
    try:
        return pickle.dumps(user)
    except Exception as error:
        raise WorldBug(
            f"the users' source {name} cannot be sent to worker processes: it does not pickle "
            f"({type(error).__name__}: {one_line(error)}); give an object of a class a module "
            "defines, or run the trials in this process only (workers=1, the default)"
        ) from None


# --- in the worker -------------------------------------------------------------------------------


def main() -> None:
    """A spawned worker's entry: its end of the socket pair is the file descriptor in argv."""
    # A Ctrl-C is the parent's to act on (it stops its workers); this process is in a group
    # of its own, so none should come from the terminal, but one sent by hand is ignored too.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("seahaven's eval worker is started by seahaven.evaluation.processes")
    _begin(int(sys.argv[1]))


def forked_main(descriptor: int, parents: Sequence[int]) -> None:
    """A forked worker's entry: ``descriptor`` is its end, ``parents`` the parent's ends to close.

    It holds no other worker's socket open, so each worker sees its own parent go.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A group of its own, as a spawned worker's: a Ctrl-C at the terminal is the parent's.
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    for inherited in parents:
        with contextlib.suppress(OSError):
            os.close(inherited)
    _begin(descriptor)


def _begin(descriptor: int) -> None:
    connection = Connection(descriptor)
    try:
        setup = connection.recv()
    except (EOFError, OSError):
        _exit(0)  # the parent went before sending anything
    if not isinstance(setup, WorkerSetup):
        _exit(2)
    serve(connection, setup)


def serve(connection: Connection, setup: WorkerSetup) -> None:
    """A worker process's life: load, say ready, run the trials sent until told to stop."""
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
        _, index, key, scenario_id, number, seed = message
        pack = self._packs[key]
        spec = TrialSpec(pack, pack.get(scenario_id), number, seed)
        setup = self._setup
        async with slots:
            # Said as it starts, so that the parent knows which trials a worker that dies
            # took down with it, and which it never began (those run elsewhere).
            _send(self._connection, ("started", index))
            try:
                world = self._world(spec)
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
                text = one_line(error, 2000)
                if not isinstance(error, WorldBug):
                    text = f"{type(error).__name__}: {text}"
                described = text
                _send(self._connection, ("failed", index, described))
                return
        self._send_result(index, result)

    def _send_result(self, index: int, result: TrialResult) -> None:
        try:
            self._connection.send(("result", index, result))
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
                            f"{self._setup.name} could not send the trial's transcript back: "
                            f"{type(error).__name__}: {one_line(error)}"
                        ),
                    ),
                    "errored": True,
                }
            )
            _send(self._connection, ("result", index, unsent))

    def _world(self, spec: TrialSpec) -> World:
        name = spec.scenario.world_name
        found = self._worlds.get(name)
        if found is None:
            found = self._worlds[name] = spec.scenario.resolve_world()
        return found
