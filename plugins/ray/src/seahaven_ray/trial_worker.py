"""The trial side of a pool actor: what an eval's actors start with, and how they run a trial.

``TrialSetup`` is what every actor of a run is given once (the policy, the packs);
``TrialWorker`` holds them loaded on the actor and runs ``seahaven.evaluation.run_trial``;
``Refusal`` is its answer for a trial that could not run. ``seahaven_ray.trials`` builds the
setup in the driver, and ``seahaven_ray.cluster``'s actor hosts the worker.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from seahaven import World, WorldBug
from seahaven.evaluation import Policy, TrialResult, TrialSpec, UserSource, load_policy, run_trial
from seahaven.scenarios import ScenarioSet, load_pack

__all__ = ["PackRef", "Refusal", "TrialSetup", "TrialWorker", "one_line"]


@dataclass(frozen=True, slots=True)
class PackRef:
    """How one pack reaches the actors: by ``source`` (loaded there), or ``pickled`` whole."""

    name: str
    version: str
    hash: str
    source: str | None
    pickled: bytes | None


@dataclass(frozen=True, slots=True)
class TrialSetup:
    """What every actor of a trial run starts with: the policy and the packs, once."""

    # The pickled policy, or ``module:attr`` to import on the actor.
    policy: bytes | str
    policy_name: str
    # Each pack by the key trials name it with.
    packs: Mapping[str, PackRef]
    # The pack key and scenario id of the run's first trial, whose world an actor loads
    # as it starts.
    first: tuple[str, str] | None = None
    # Where each trial's instance keeps its stores; None: the actor's SEAHAVEN_STORAGE.
    storage: str | None = None
    # What plays the scenarios' users, pickled (``seahaven.evaluation.users``, such as a
    # model-played user); None: each scenario's own.
    user: bytes | None = None
    user_name: str | None = None


@dataclass(frozen=True, slots=True)
class Refusal:
    """An actor's answer for a trial that could not run: the run stops with this message."""

    message: str


class TrialWorker:
    """The trial side of one pool actor: the policy and packs loaded once, worlds kept warm.

    A problem loading the policy or a pack is kept, and every trial then
    answers it as a ``Refusal``, which stops the run with a ``WorldBug`` in the
    driver: it is the author's to fix, and no trial could run.
    """

    def __init__(self, setup: TrialSetup, where: str) -> None:
        self._where = where
        self._storage = setup.storage
        self._policy_name = setup.policy_name
        self._policy: Policy | None = None
        self._user: UserSource | None = None
        self._packs: dict[str, ScenarioSet] = {}
        self._worlds: dict[str, World] = {}
        self._lock = threading.Lock()
        self._problem: str | None = None
        try:
            self._policy = self._load_policy(setup.policy)
            if setup.user is not None:
                self._user = self._load_user(setup.user, setup.user_name or "the user source")
            for key, ref in setup.packs.items():
                self._packs[key] = self._load_pack(ref)
        except WorldBug as error:
            self._problem = str(error)
            return
        if setup.first is not None:
            pack, scenario = setup.first
            # A world that does not resolve is reported by the trial that needs it.
            with contextlib.suppress(Exception):
                self._world(self._packs[pack], scenario)

    def _load_policy(self, shipped: bytes | str) -> Policy:
        if isinstance(shipped, str):
            try:
                return load_policy(shipped)
            except WorldBug as error:
                raise WorldBug(f"on {self._where}: {error}") from None
        from ray import cloudpickle

        try:
            policy: Policy = cloudpickle.loads(shipped)
        except Exception as error:
            raise WorldBug(
                f"the policy {self._policy_name} cannot be loaded on {self._where}: "
                f"{type(error).__name__}: {one_line(error)}; a policy travels by reference to "
                "its module, so that module must be importable on every worker (install it "
                "there, or start Ray with runtime_env={'env_vars': {'PYTHONPATH': ...}} or "
                "py_modules)"
            ) from None
        return policy

    def _load_user(self, shipped: bytes, name: str) -> UserSource:
        from ray import cloudpickle

        try:
            user: UserSource = cloudpickle.loads(shipped)
        except Exception as error:
            raise WorldBug(
                f"the users' player {name} cannot be loaded on {self._where}: "
                f"{type(error).__name__}: {one_line(error)}; it travels by reference to its "
                "module (seahaven-agents for a model-played user), so install that on every "
                "worker"
            ) from None
        return user

    def _load_pack(self, ref: PackRef) -> ScenarioSet:
        if ref.pickled is not None:
            from ray import cloudpickle

            try:
                loaded: ScenarioSet = cloudpickle.loads(ref.pickled)
            except Exception as error:
                raise WorldBug(
                    f"pack {ref.name!r} cannot be loaded on {self._where}: "
                    f"{type(error).__name__}: {one_line(error)}; the modules of its graders "
                    "and worlds must be importable on every worker, or publish the pack so "
                    "that each worker loads it by name"
                ) from None
            return loaded
        assert ref.source is not None
        try:
            pack = load_pack(ref.source)
        except WorldBug as error:
            raise WorldBug(
                f"pack {ref.name!r} cannot be loaded as {ref.source!r} on {self._where}: {error}; "
                "install it on every worker"
            ) from None
        if pack.hash != ref.hash:
            raise WorldBug(
                f"pack {ref.source!r} on {self._where} is not the driver's: its content hash is "
                f"{pack.hash[:12]} there and {ref.hash[:12]} in the driver (version "
                f"{pack.version} there, {ref.version} in the driver); install the same version "
                "of the pack on every worker"
            )
        return pack

    def _world(self, pack: ScenarioSet, scenario_id: str) -> World:
        scenario = pack.get(scenario_id)
        with self._lock:
            found = self._worlds.get(scenario.world_name)
            if found is None:
                found = scenario.resolve_world()
                self._worlds[scenario.world_name] = found
            return found

    def run(self, pack_key: str, scenario_id: str, trial: int, seed: int) -> TrialResult | Refusal:
        """Run one trial here; a ``Refusal`` for what would raise out of ``run_trial``."""
        if self._problem is not None or self._policy is None:
            return Refusal(self._problem or "no policy")
        pack = self._packs[pack_key]
        spec = TrialSpec(pack, pack.get(scenario_id), trial, seed)
        try:
            world = self._world(pack, scenario_id)
            return run_trial(
                spec,
                self._policy,
                world=world,
                runner=self._where,
                storage=self._storage,
                user=self._user,
            )
        except Exception as error:
            text = one_line(error, 2000)
            described = text if isinstance(error, WorldBug) else f"{type(error).__name__}: {text}"
            return Refusal(f"trial {spec.episode_id} on {self._where}: {described}")


def one_line(error: BaseException, limit: int = 500) -> str:
    """``error``'s text on one line, cut at ``limit`` characters."""
    return " ".join(str(error).split())[:limit]
