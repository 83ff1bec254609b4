"""``trial_runner``: an eval's trials on a Ray cluster, for ``seahaven eval --ray``.

``trial_runner(address, workers=...)`` is a ``seahaven.evaluation.TrialRunner``:
``evaluate(pack, policy, runner=trial_runner("auto"))`` runs the pack's trials
on the pool of actors that ``run_episodes`` uses (``seahaven_ray.cluster``),
each actor calling ``seahaven.evaluation.run_trial``, the in-process code, so a
trial gives the same score, checks and ``state_sha256`` as in process.

What travels, and how:

- **The policy** is pickled once in the driver (by cloudpickle: a module-level
  function or an object of an importable class goes by reference, a lambda or
  closure by value) and loaded once per actor; ``"module:attr"`` is imported
  on each actor instead. A policy that does not pickle is a ``WorldBug`` before
  anything runs, and one that does not load on an actor (its module is not
  installed there) is a ``WorldBug`` at the first trial.
- **The pack** goes by name when it has one (``ScenarioSet.source``, which
  ``load_pack`` sets: an installed pack's registered name, or ``module:attr``):
  each actor loads it itself, from the packages installed where it runs, and
  checks that the pack's content hash is the driver's. A pack built in Python
  (no source) is pickled once and sent whole; a ``World`` object in one of its
  scenarios goes by its registered name, and a world that is not registered
  cannot travel (a ``WorldBug`` saying to name it by ``module:attr`` instead).
- **The users' player**, when the run has one (``evaluate(..., user=...)``, such
  as ``seahaven.agents.ModelUser``: ``seahaven eval --user-model``), is pickled
  once like the policy and loaded once per actor; each trial of a scenario with
  a user gets a player of its own from it there. One that does not pickle is a
  ``WorldBug`` before anything runs.
- **A trial** is then its pack, scenario id, trial number and seed: a few
  bytes. Each actor keeps the worlds it resolved, and the solution replays that
  ``matches_solution`` graders need, for the whole run.

Results come back as each trial ends, in no particular order. A trial whose
actor dies is started again on another, as an episode is; one that fails on
every attempt is a ``TrialResult`` with an error of kind ``runner`` (errored: not
the agent's failure, left out of the scores), and one that runs past
``trial_timeout`` one of kind ``timeout`` (the agent's, scored 0). A bug in the
world or the grader during a trial is an errored result of kind ``world``, as in
process; a trial that cannot start at all (a fixture that does not exist) stops
the eval with a ``WorldBug``, as it does in process.
Closing the iterator (``evaluate`` does when it stops, Ctrl-C included) kills
the actors, so nothing runs on after it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from seahaven import World, WorldBug
from seahaven.evaluation import (
    Policy,
    TrialError,
    TrialResult,
    TrialSpec,
    UserSource,
    check_policy,
    describe_policy,
    describe_user,
    load_policy,
    registered_name,
    registered_world,
)
from seahaven.scenarios import ScenarioSet
from seahaven.stores.storage import check_storage
from seahaven_ray.cluster import (
    TRIAL_ACTOR_PREFIX,
    FailureKind,
    Work,
    check_pool_options,
    run_pool,
)
from seahaven_ray.trial_worker import PackRef, Refusal, TrialSetup, TrialWorker, one_line

__all__ = [
    "PackRef",
    "RayTrialRunner",
    "Refusal",
    "TrialSetup",
    "TrialWorker",
    "trial_runner",
]


def trial_runner(
    address: str | None = None,
    workers: int | None = None,
    *,
    trials_per_worker: int = 1,
    max_attempts: int = 3,
    trial_timeout: float | None = None,
    init: Mapping[str, Any] | None = None,
    storage: str | None = None,
) -> RayTrialRunner:
    """A ``TrialRunner`` that runs trials on a Ray cluster's actors.

    ``address`` is ``run_episodes``'s: ``None`` (or ``"local"``) starts a local
    cluster for each run and shuts it down after, anything else is passed to
    ``ray.init`` (``"auto"``, ``"ray://head:10001"``), and a process that is
    already connected to Ray keeps its connection. ``workers`` is the number of
    actors (the cluster's CPU count by default), each running
    ``trials_per_worker`` trials at once; ``max_attempts`` is how often a trial
    whose actor died is started; ``trial_timeout`` gives up a trial that runs
    longer (its actor is replaced); ``init`` holds extra ``ray.init`` keywords;
    ``storage`` (``"memory"`` or ``"disk"``) is where each trial's instance keeps
    its stores on the actor (by default the actor's ``SEAHAVEN_STORAGE``, else
    memory). Nothing starts until the runner is called.
    """
    check_pool_options(
        "trial",
        workers=workers,
        per_worker=trials_per_worker,
        per_worker_option="trials_per_worker",
        max_attempts=max_attempts,
        timeout=trial_timeout,
        timeout_option="trial_timeout",
    )
    return RayTrialRunner(
        address=address,
        workers=workers,
        trials_per_worker=trials_per_worker,
        max_attempts=max_attempts,
        trial_timeout=float(trial_timeout) if trial_timeout is not None else None,
        init=dict(init or {}),
        storage=None if storage is None else check_storage(storage),
    )


@dataclass(frozen=True)
class RayTrialRunner:
    """A ``TrialRunner`` on Ray; ``trial_runner`` makes one."""

    address: str | None
    workers: int | None
    trials_per_worker: int
    max_attempts: int
    trial_timeout: float | None
    init: dict[str, Any]
    storage: str | None = None
    # What plays the scenarios' users (``seahaven.evaluation.users``); None: their own.
    user: UserSource | None = None

    def with_user(self, user: UserSource | None) -> RayTrialRunner:
        """This runner, its trials' users played by ``user`` (pickled to the actors)."""
        return replace(self, user=user)

    def __call__(self, specs: Sequence[TrialSpec], policy: Policy | str) -> Iterator[TrialResult]:
        """Run ``specs`` with ``policy`` and yield each result as its trial ends.

        The policy and the packs are checked here, before Ray starts: one that
        cannot travel to the actors is a ``WorldBug`` now.
        """
        specs = list(specs)
        if not specs:
            return iter(())
        setup, keys = _setup(specs, policy)
        if self.user is not None:
            setup = replace(
                setup, user=_pickled_user(self.user), user_name=describe_user(self.user)
            )
        work = _TrialWork(replace(setup, storage=self.storage), keys)
        return run_pool(
            work,
            iter(specs),
            address=None if self.address == "local" else self.address,
            workers=self.workers,
            per_actor=self.trials_per_worker,
            max_attempts=self.max_attempts,
            timeout=self.trial_timeout,
            init=dict(self.init),
        )


def _setup(specs: Sequence[TrialSpec], policy: Policy | str) -> tuple[TrialSetup, dict[int, str]]:
    """The run's ``TrialSetup`` (the policy pickled or named, each pack's ``PackRef``), and
    each pack's key, by the pack object's id."""
    from ray import cloudpickle

    shipped: bytes | str
    if isinstance(policy, str):
        load_policy(policy)  # a WorldBug here, rather than on every actor
        name = policy
        shipped = policy
    else:
        name = describe_policy(check_policy(policy))
        try:
            shipped = cloudpickle.dumps(policy)
        except Exception as error:
            raise WorldBug(
                f"the policy {name} cannot be sent to Ray workers: it does not pickle "
                f"({type(error).__name__}: {one_line(error)}); give a module-level function "
                "or an object of a class the workers can import, or 'module:function'"
            ) from None
    packs: dict[str, PackRef] = {}
    keys: dict[int, str] = {}
    for spec in specs:
        if id(spec.pack) not in keys:
            key = str(len(keys))
            keys[id(spec.pack)] = key
            packs[key] = _pack_ref(spec.pack)
        held = spec.pack.get(spec.scenario.id) if spec.scenario.id in spec.pack else None
        if held is not spec.scenario and (held is None or held.hash != spec.scenario.hash):
            raise WorldBug(
                f"trial {spec.episode_id}: scenario {spec.scenario.id!r} is not the one pack "
                f"{spec.pack.name!r} holds; make trials with seahaven.evaluation.plan(pack)"
            )
    return TrialSetup(policy=shipped, policy_name=name, packs=packs), keys


def _pickled_user(user: UserSource) -> bytes:
    """The users' player pickled for the actors; a ``WorldBug`` if it does not pickle."""
    from ray import cloudpickle

    try:
        pickled: bytes = cloudpickle.dumps(user)
    except Exception as error:
        raise WorldBug(
            f"the users' player {describe_user(user)} cannot be sent to Ray workers: it does "
            f"not pickle ({type(error).__name__}: {one_line(error)}); give an object of a class "
            "the workers can import (seahaven.agents.ModelUser pickles)"
        ) from None
    return pickled


def _pack_ref(pack: ScenarioSet) -> PackRef:
    if pack.source is not None:
        return PackRef(pack.name, pack.version, pack.hash, pack.source, None)
    try:
        pickled = _dump_pack(pack)
    except WorldBug:
        raise
    except Exception as error:
        raise WorldBug(
            f"pack {pack.name!r} was built in Python and cannot be sent to Ray workers: it does "
            f"not pickle ({type(error).__name__}: {one_line(error)}); publish it under the "
            "seahaven.scenarios entry points, or load it with "
            "seahaven.scenarios.load_pack('module:attr'), so that each worker loads it itself"
        ) from None
    return PackRef(pack.name, pack.version, pack.hash, None, pickled)


# The last fix a pack holding an unregistered World is told: a pack loaded by its source is
# loaded again by each worker, its worlds with it.
_OTHERWISE = (
    "load the pack with seahaven.scenarios.load_pack('module:attr') so that each worker imports it"
)


def _dump_pack(pack: ScenarioSet) -> bytes:
    """The pack pickled, each ``World`` in it by its registered name."""
    from ray import cloudpickle

    class PackPickler(cloudpickle.CloudPickler):  # type: ignore[misc]
        def reducer_override(self, obj: Any) -> Any:
            if isinstance(obj, World):
                name = registered_name(pack, obj, where="Ray workers", otherwise=_OTHERWISE)
                return (registered_world, (name,))
            return super().reducer_override(obj)

    buffer = io.BytesIO()
    PackPickler(buffer).dump(pack)
    return buffer.getvalue()


class _TrialWork(Work[TrialSpec, TrialResult]):
    """Trials, sent as their pack's key, scenario id, trial number and seed."""

    noun = "trial"
    actor_prefix = TRIAL_ACTOR_PREFIX
    timeout_option = "trial_timeout"

    def __init__(self, setup: TrialSetup, keys: dict[int, str]) -> None:
        self._setup = setup
        self._keys = keys
        self._worlds: dict[str, tuple[str, str]] = {}

    def key(self, item: TrialSpec) -> str:
        return item.episode_id

    def actor_args(self, ray: Any, first: TrialSpec) -> tuple[Any, ...]:
        setup = replace(self._setup, first=(self._keys[id(first.pack)], first.scenario.id))
        # Put once: every actor, replacements too, starts from the same object.
        return ([], ray.put(setup))

    def send(self, handle: Any, item: TrialSpec, attempt: int) -> Any:
        return handle.trial.remote(
            self._keys[id(item.pack)], item.scenario.id, item.trial, item.seed
        )

    def receive(self, answer: Any, item: TrialSpec) -> TrialResult:
        if isinstance(answer, Refusal):
            raise WorldBug(answer.message)
        result: TrialResult = answer
        return result

    def failed(self, item: TrialSpec, attempt: int, kind: FailureKind, message: str) -> TrialResult:
        world, version = self._world_of(item)
        return item.result(
            world=world,
            world_version=version,
            score=0.0,
            passed=False,
            runner="ray",
            error=TrialError(kind="timeout" if kind == "timeout" else "runner", message=message),
        )

    def _world_of(self, item: TrialSpec) -> tuple[str, str]:
        """The world's name and version as a result names them (those of the world resolved)."""
        reference = item.scenario.world_name
        if reference not in self._worlds:
            try:
                resolved = item.scenario.resolve_world()
                self._worlds[reference] = (resolved.name, resolved.version)
            except Exception:
                self._worlds[reference] = (reference, "unknown")
        return self._worlds[reference]
