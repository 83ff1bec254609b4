"""The pool of Ray actors behind ``run_episodes`` and ``trial_runner``, and ``run_episodes``.

A pool of actors (``PoolWorker``) runs the work of one run. Each actor loads a
world once, by the name the work gives, from the registry of the packages
installed where it runs, and makes a fresh instance for every episode or
trial, with the in-process code (``seahaven.episodes.run_episode``,
``seahaven.evaluation.run_trial``), so the answer is the same as in process.
The driver keeps every actor busy, hands out the next item as each result
comes back, and yields results in the order they finish.

The pool does not know what it runs: a ``Work`` says how to name an item, send
it to an actor, read the actor's answer, and make the result of an item that
could not run. Episodes (``run_episodes``, here) and a pack's trials
(``seahaven_ray.trials``) are its two kinds of work, with one pool between them.

A world error is data: it comes back as a result that says so. A dead actor
is not: every item it was running goes back in the queue, to run on another
actor, up to ``max_attempts`` starts in all, and the dead actor is replaced
while the replacements allowed last. Each item yields exactly one result, none
lost and none doubled, because an item is resubmitted only after Ray reports
its previous attempt lost, and Ray itself is told never to retry an actor task.

Ray is imported when a run starts, not when this module is imported, so the
``seahaven`` command line does not pay for it unless it runs on Ray.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from seahaven import WorldBug
from seahaven.episodes import (
    Episode,
    EpisodeError,
    EpisodeResult,
    Timings,
    WorldLoader,
    run_episode,
)
from seahaven_ray.connection import connect, first_line
from seahaven_ray.trial_worker import Refusal, TrialSetup, TrialWorker

if TYPE_CHECKING:
    from seahaven.evaluation import TrialResult

__all__ = [
    "ACTOR_NAME_PREFIX",
    "TRIAL_ACTOR_PREFIX",
    "EpisodeWorker",
    "FailureKind",
    "PoolWorker",
    "Unsendable",
    "Work",
    "check_pool_options",
    "run_episodes",
    "run_pool",
]

ACTOR_NAME_PREFIX = "seahaven-episodes"
"""Every actor of an episode run is named ``seahaven-episodes-<run>-<n>``, for operators."""

TRIAL_ACTOR_PREFIX = "seahaven-trials"
"""Every actor of an eval's run is named ``seahaven-trials-<run>-<n>``."""

FailureKind = Literal["worker", "timeout", "unsendable"]

# With a time limit, the seconds an actor may take to start when the limit is shorter: an
# actor that has not started by then (a cluster without the resources for it, say) is replaced
# as one that died, so a run never waits forever on one.
ACTOR_START_SECONDS = 120.0
"""Why the pool made an item's result itself: its worker died on every attempt allowed (or
none was left), it ran past its time limit, or it could not be sent to an actor."""


class PoolWorker:
    """The body of one pool actor: worlds loaded once, a fresh instance per episode or trial.

    ``preload`` names worlds to load as the actor starts. ``trials`` is what a
    run of trials needs on every actor (the packs and the policy,
    ``seahaven_ray.trials.TrialSetup``); an actor of an episode run has none.
    """

    def __init__(self, preload: list[str], trials: TrialSetup | None = None) -> None:
        self._worlds = WorldLoader()
        for name in preload:
            # A world that does not load is reported per episode, as data.
            with contextlib.suppress(WorldBug):
                self._worlds.load(name)
        import ray

        context = ray.get_runtime_context()
        self._where = (
            f"ray actor {context.get_actor_name() or context.get_actor_id()} "
            f"(node {context.get_node_id()[:12]}, pid {os.getpid()})"
        )
        self._trials = None
        if trials is not None:
            self._trials = TrialWorker(trials, self._where)

    def where(self) -> str:
        """How results name this actor."""
        return self._where

    def run(self, episode: Episode, attempt: int) -> EpisodeResult:
        """Run one episode here and return its result, marked with the attempt and the actor."""
        result = run_episode(episode, worlds=self._worlds, worker=self._where)
        return result.model_copy(update={"attempts": attempt})

    def trial(self, pack: str, scenario: str, trial: int, seed: int) -> TrialResult | Refusal:
        """Run one trial of a scenario of the run's pack ``pack`` here, with the run's policy."""
        if self._trials is None:
            raise WorldBug("this actor was started for episodes, not trials")
        return self._trials.run(pack, scenario, trial, seed)


EpisodeWorker = PoolWorker
"""The pool actor's class under its first name, from when it ran only episodes."""

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


class Unsendable(Exception):
    """Raised by ``Work.send`` for an item that cannot travel to an actor; the message says why."""


class Work(ABC, Generic[ItemT, ResultT]):
    """One kind of work for the pool: how to name and send an item, and what its result is."""

    noun: str = "item"
    """How messages name one item: ``episode``, ``trial``."""
    actor_prefix: str = ACTOR_NAME_PREFIX
    """The start of the pool's actor names."""
    timeout_option: str = "timeout"
    """How messages name the time limit's option."""

    @abstractmethod
    def key(self, item: ItemT) -> str:
        """The item's id, unique in a run."""

    @abstractmethod
    def actor_args(self, ray: Any, first: ItemT) -> tuple[Any, ...]:
        """What ``PoolWorker(...)`` is started with; ``first`` is the run's first item."""

    @abstractmethod
    def send(self, handle: Any, item: ItemT, attempt: int) -> Any:
        """Start the item on the actor ``handle``; the reference to its answer.

        Raises ``Unsendable`` when the item cannot travel to an actor.
        """

    @abstractmethod
    def receive(self, answer: Any, item: ItemT) -> ResultT:
        """The item's result from what its actor answered; may raise to stop the run."""

    @abstractmethod
    def failed(self, item: ItemT, attempt: int, kind: FailureKind, message: str) -> ResultT:
        """The result of an item the pool gave up on, for the reason ``kind``."""


@dataclass
class _Slot:
    """One actor of the pool and the items in flight on it."""

    handle: Any
    name: str
    busy: int = 0
    # Whether items may be sent to it yet: with a time limit, only once it has started.
    ready: bool = True


@dataclass
class _Pending(Generic[ItemT]):
    item: ItemT
    attempt: int
    # The actor it failed on last, to be avoided when another is alive.
    avoid: str | None = None
    last_error: str | None = None


@dataclass
class _Pool:
    """The actors, their replacements, and who is running what."""

    remote_class: Any
    options: dict[str, Any]
    size: int
    per_actor: int
    actor_args: tuple[Any, ...]
    prefix: str
    run_id: str
    replacements_left: int
    # With a time limit, the seconds a new actor may take to start; items are sent to it only
    # once it has, so an item's clock never counts an actor's start.
    start_limit: float | None = None
    slots: dict[str, _Slot] = field(default_factory=dict)
    counter: itertools.count[int] = field(default_factory=itertools.count)
    # Each starting actor's readiness probe: its reference, and the actor and its deadline.
    probes: dict[Any, tuple[str, float]] = field(default_factory=dict)

    def start(self) -> None:
        for _ in range(self.size):
            self.add()

    def add(self) -> None:
        name = f"{self.prefix}-{self.run_id}-{next(self.counter)}"
        handle = self.remote_class.options(name=name, **self.options).remote(*self.actor_args)
        slot = self.slots[name] = _Slot(handle, name)
        if self.start_limit is not None:
            # An actor answers a call once its constructor has run: then it has started.
            slot.ready = False
            self.probes[handle.where.remote()] = (name, time.monotonic() + self.start_limit)

    def started(self, ray: Any, probe: Any) -> None:
        """The readiness probe ``probe`` came back: its actor takes items, or is lost."""
        from ray import exceptions as ray_errors

        name, _ = self.probes.pop(probe)
        slot = self.slots.get(name)
        if slot is None:
            return
        try:
            ray.get(probe)
        except ray_errors.RayError:
            self.lost(name)
            return
        slot.ready = True

    def stop_unstarted(self, ray: Any) -> None:
        """Stop each actor past its start limit, as one that died (its replacement counts)."""
        now = time.monotonic()
        for probe, (name, deadline) in list(self.probes.items()):
            if deadline <= now:
                del self.probes[probe]
                slot = self.slots.get(name)
                if slot is not None:
                    with contextlib.suppress(Exception):  # already gone
                        ray.kill(slot.handle, no_restart=True)
                    self.lost(name)

    def lost(self, name: str) -> None:
        """The actor ``name`` died: drop it and start another while replacements last."""
        if self.slots.pop(name, None) is None:
            return
        if self.replacements_left > 0:
            self.replacements_left -= 1
            self.add()

    def stop(self, ray: Any, name: str) -> None:
        """Kill the actor ``name`` for running too long, and start another in its place.

        A stop is the pool's own decision, not a crash, so it uses none of the
        replacements kept for actors that die.
        """
        slot = self.slots.pop(name, None)
        if slot is None:
            return
        with contextlib.suppress(Exception):  # already gone
            ray.kill(slot.handle, no_restart=True)
        self.add()

    def free_slot(self, avoid: str | None) -> _Slot | None:
        """The least busy actor with room, preferring any but ``avoid``."""
        open_slots = [
            slot for slot in self.slots.values() if slot.ready and slot.busy < self.per_actor
        ]
        if not open_slots:
            return None
        others = [slot for slot in open_slots if slot.name != avoid]
        if others:
            return min(others, key=lambda slot: slot.busy)
        # Only the actor to avoid has room: use it when it is the only one alive.
        return open_slots[0] if len(self.slots) == 1 else None

    def kill_all(self, ray: Any) -> None:
        for slot in self.slots.values():
            with contextlib.suppress(Exception):  # already gone
                ray.kill(slot.handle, no_restart=True)
        self.slots.clear()
        self.probes.clear()


def check_pool_options(
    noun: str,
    *,
    workers: int | None,
    per_worker: int,
    per_worker_option: str,
    max_attempts: int,
    timeout: float | None,
    timeout_option: str,
) -> None:
    """Refuse pool options that cannot work with a ``WorldBug`` naming the option."""
    one = f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise WorldBug(f"workers={workers!r}: give a number of actors of 1 or more, or None")
    if isinstance(per_worker, bool) or per_worker < 1:
        raise WorldBug(
            f"{per_worker_option}={per_worker!r}: each actor runs 1 or more {noun}s at once"
        )
    if isinstance(max_attempts, bool) or max_attempts < 1:
        raise WorldBug(f"max_attempts={max_attempts!r}: {one} is started at least once")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise WorldBug(
            f"{timeout_option}={timeout!r}: give the seconds {one} may run, more "
            "than 0, or None for no limit"
        )


def run_episodes(
    episodes: Iterable[Episode],
    *,
    address: str | None = None,
    workers: int | None = None,
    instances_per_worker: int = 1,
    max_attempts: int = 3,
    episode_timeout: float | None = None,
    init: Mapping[str, Any] | None = None,
) -> Generator[EpisodeResult, None, None]:
    """Run ``episodes`` on Ray and yield each result as soon as it is back.

    ``address`` is the cluster: ``None`` or ``"local"`` starts a local one for
    this run (shut down when the iterator ends), anything else is passed to
    ``ray.init(address=...)`` (``"auto"``, ``"ray://head:10001"``). When Ray is
    already initialised in this process, that connection is used and left
    open. ``workers`` is the number of actors, the cluster's CPU count by
    default; each runs up to ``instances_per_worker`` episodes at once, each in
    an instance of its own. An episode whose actor dies is started again on
    another, ``max_attempts`` starts in all, after which its result has
    ``status="failed"`` and an error of kind ``worker``. An episode still
    running ``episode_timeout`` seconds after it was sent to its actor is
    given up (with a time limit, an episode is sent only to an actor that has
    started, and an actor that has not started in two minutes, or the limit
    if longer, is replaced as one that died):
    the actor is stopped (a thread cannot be), the episode's result has an
    error of kind ``timeout`` and is not retried, and whatever else that actor
    was running starts again elsewhere. ``init`` holds extra keywords for
    ``ray.init`` when this call starts or connects to Ray.

    The episodes are read lazily, so a generator over a large file is fine.
    Every episode yields exactly one result; results come in the order they
    finish, not the order given. Closing the iterator early stops the actors.
    """
    check_pool_options(
        "episode",
        workers=workers,
        per_worker=instances_per_worker,
        per_worker_option="instances_per_worker",
        max_attempts=max_attempts,
        timeout=episode_timeout,
        timeout_option="episode_timeout",
    )
    return run_pool(
        _EpisodeWork(),
        iter(episodes),
        address=address,
        workers=workers,
        per_actor=instances_per_worker,
        max_attempts=max_attempts,
        timeout=float(episode_timeout) if episode_timeout is not None else None,
        init=dict(init or {}),
    )


class _EpisodeWork(Work[Episode, EpisodeResult]):
    """Episodes, each sent whole to an actor's ``run``."""

    noun = "episode"
    actor_prefix = ACTOR_NAME_PREFIX
    timeout_option = "episode_timeout"

    def key(self, item: Episode) -> str:
        return item.episode_id

    def actor_args(self, ray: Any, first: Episode) -> tuple[Any, ...]:
        return ([first.world],)

    def send(self, handle: Any, item: Episode, attempt: int) -> Any:
        from ray import cloudpickle

        try:
            if item.policy is not None:
                # Ray would say the same when sending, after a page of diagnostics.
                cloudpickle.dumps(item.policy)
            return handle.run.remote(item, attempt)
        except Exception as error:
            # Sending failed in this process: the episode (its policy) does not pickle.
            raise Unsendable(
                f"episode {item.episode_id!r} cannot be sent to a worker: "
                f"{type(error).__name__}: {' '.join(str(error).split())[:500]}; give "
                "a picklable policy (a module-level function or class)"
            ) from None

    def receive(self, answer: Any, item: Episode) -> EpisodeResult:
        result: EpisodeResult = answer
        return result

    def failed(self, item: Episode, attempt: int, kind: FailureKind, message: str) -> EpisodeResult:
        from datetime import UTC, datetime

        started_at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        error_kind = "policy" if kind == "unsendable" else kind
        return EpisodeResult(
            episode_id=item.episode_id,
            status="failed",
            error=EpisodeError.model_validate({"kind": error_kind, "message": message}),
            timings=Timings(started_at=started_at),
            attempts=attempt,
            worker="none",
            episode=item,
        )


def run_pool(
    work: Work[ItemT, ResultT],
    source: Iterator[ItemT],
    *,
    address: str | None,
    workers: int | None,
    per_actor: int,
    max_attempts: int,
    timeout: float | None,
    init: dict[str, Any],
) -> Generator[ResultT, None, None]:
    """Run the items ``source`` gives on a pool of actors; each result as it comes back.

    The options are ``run_episodes``'s, checked by ``check_pool_options``.
    Ray is started or joined when the iterator is first advanced, and a
    cluster it started is shut down when the iterator ends, fails or is
    closed; the pool's actors are killed then, which stops what they run.
    """
    import ray
    from ray import exceptions as ray_errors

    started = connect(ray, address, init)
    pool: _Pool | None = None
    try:
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        size = workers if workers is not None else max(1, int(cpus))
        # One CPU per actor, unless more actors than CPUs were asked for: then they share,
        # rather than wait for CPUs the cluster does not have.
        actor_cpus = 1.0 if size <= cpus else max(cpus / size, 0.01)
        first = next(source, None)
        if first is None:
            return
        pool = _Pool(
            remote_class=ray.remote(PoolWorker),
            options={
                "num_cpus": actor_cpus,
                "max_concurrency": per_actor,
                # Replacing a dead actor is the pool's job, and so is retrying its items:
                # Ray retrying them too could run an item twice.
                "max_restarts": 0,
                "max_task_retries": 0,
            },
            size=size,
            # One item waits on each actor beyond those it runs, so that an actor never
            # idles while a result travels back and the next item travels out; not with
            # a time limit, whose clock starts when an item is sent.
            per_actor=per_actor + (1 if timeout is None else 0),
            actor_args=work.actor_args(ray, first),
            prefix=work.actor_prefix,
            run_id=secrets.token_hex(4),
            replacements_left=size * max_attempts,
            start_limit=None if timeout is None else max(timeout, ACTOR_START_SECONDS),
        )
        pool.start()
        queue: deque[_Pending[ItemT]] = deque()
        seen: set[str] = set()
        _check_unique(work, first, seen)
        queue.append(_Pending(first, 1))
        exhausted = False
        in_flight: dict[Any, tuple[_Pending[ItemT], str]] = {}
        # When each item in flight is given up, with a time limit.
        deadlines: dict[Any, float] = {}
        while True:
            # Hand out work while an actor has room and there is work to hand out.
            while True:
                if not queue and not exhausted:
                    following = next(source, None)
                    if following is None:
                        exhausted = True
                    else:
                        _check_unique(work, following, seen)
                        queue.append(_Pending(following, 1))
                if not queue:
                    break
                slot = pool.free_slot(queue[0].avoid)
                if slot is None:
                    break
                pending = queue.popleft()
                try:
                    ref = work.send(slot.handle, pending.item, pending.attempt)
                except Unsendable as error:
                    yield work.failed(pending.item, pending.attempt, "unsendable", str(error))
                    continue
                slot.busy += 1
                in_flight[ref] = (pending, slot.name)
                if timeout is not None:
                    deadlines[ref] = time.monotonic() + timeout
            if not in_flight and not pool.probes:
                if not queue:
                    return
                # Work is left and no actor is alive to take it.
                while queue:
                    pending = queue.popleft()
                    yield work.failed(
                        pending.item,
                        pending.attempt,
                        "worker",
                        f"no worker is left to run it: every actor died and the "
                        f"{size * max_attempts} replacements allowed are used up"
                        + (f"; last: {pending.last_error}" if pending.last_error else ""),
                    )
                continue
            limits = [*deadlines.values(), *(limit for _, limit in pool.probes.values())]
            wait = None if not limits else max(0.0, min(limits) - time.monotonic())
            ready, _ = ray.wait([*in_flight, *pool.probes], num_returns=1, timeout=wait)
            for ref in ready:
                if ref in pool.probes:
                    pool.started(ray, ref)
                    continue
                deadlines.pop(ref, None)
                pending, name = in_flight.pop(ref)
                slot_or_none = pool.slots.get(name)
                if slot_or_none is not None:
                    slot_or_none.busy -= 1
                try:
                    answer = ray.get(ref)
                except ray_errors.RayError as error:
                    message = f"{type(error).__name__} on {name}: {first_line(error)}"
                    if isinstance(error, ray_errors.RayActorError):
                        pool.lost(name)
                    if pending.attempt >= max_attempts:
                        yield work.failed(
                            pending.item,
                            pending.attempt,
                            "worker",
                            f"the worker died on each of {pending.attempt} attempts; last: "
                            f"{message}",
                        )
                    else:
                        queue.append(_Pending(pending.item, pending.attempt + 1, name, message))
                    continue
                yield work.receive(answer, pending.item)
            if deadlines:
                yield from _give_up_overdue(ray, work, pool, in_flight, deadlines, timeout)
            pool.stop_unstarted(ray)
    finally:
        if pool is not None:
            pool.kill_all(ray)
        if started:
            ray.shutdown()


def _check_unique(work: Work[ItemT, Any], item: ItemT, seen: set[str]) -> None:
    key = work.key(item)
    if key in seen:
        raise WorldBug(
            f"{work.noun} id {key!r} is given twice; every {work.noun} needs an id of its own, "
            "since each yields exactly one result"
        )
    seen.add(key)


def _give_up_overdue(
    ray: Any,
    work: Work[ItemT, ResultT],
    pool: _Pool,
    in_flight: dict[Any, tuple[_Pending[ItemT], str]],
    deadlines: dict[Any, float],
    timeout: float | None,
) -> Iterator[ResultT]:
    """Fail each item past its deadline, and stop the actor running it."""
    now = time.monotonic()
    for ref in [ref for ref, deadline in deadlines.items() if deadline <= now]:
        del deadlines[ref]
        pending, name = in_flight.pop(ref)
        # The items it was running beside this one come back as a dead actor's.
        pool.stop(ray, name)
        yield work.failed(
            pending.item,
            pending.attempt,
            "timeout",
            f"{work.noun} {work.key(pending.item)!r} ran longer than the {timeout:g} seconds "
            f"allowed ({work.timeout_option}) on {name}, which was stopped; it is not run again",
        )
