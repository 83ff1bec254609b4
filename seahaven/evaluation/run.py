"""Running trials: what a policy is handed, one trial in process, and a whole eval.

A **policy** is a plain callable, ``policy(session)``, that plays one episode:
it reads ``session.instructions`` and ``session.tools()``, calls tools with
``session.call(name, **arguments)`` (results come back as JSON data, and a
refusal raises ``seahaven.ToolError``), and ends with ``session.submit(answer)``
or by returning. The same callable runs in process, on Ray and against a served
world, because each runner hands it a session with this one interface
(``PolicySession``).

``plan`` lists the trials of a pack (scenarios times trials, each with a seed
derived from the pack, the scenario and the trial number), ``run_trial`` runs
one in this process, and ``evaluate`` runs a plan through a runner, appends
each result to a results file as it ends, and summarizes.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic_core import to_jsonable_python

from seahaven.errors import ToolError, WorldBug
from seahaven.evaluation.results import (
    ResultsFile,
    Summary,
    TrialError,
    TrialResult,
    check_resumable,
    summarize,
)
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario
from seahaven.scenarios.pack import ScenarioSet
from seahaven.scenarios.trial import Trial
from seahaven.storage import check_storage
from seahaven.targets import import_target
from seahaven.world import World

__all__ = [
    "LocalSession",
    "Policy",
    "PolicySession",
    "TrialRunner",
    "TrialSpec",
    "evaluate",
    "idle_policy",
    "in_process",
    "load_policy",
    "plan",
    "run_in_process",
    "run_trial",
    "solution_policy",
    "trial_seed",
]


def trial_seed(pack: str, scenario_id: str, trial: int) -> int:
    """The seed of one trial: the same for the same pack, scenario and trial, everywhere."""
    text = f"seahaven trial\x00{pack}\x00{scenario_id}\x00{trial}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "big")


@runtime_checkable
class PolicySession(Protocol):
    """What a policy is handed: one episode of one scenario, wherever it runs."""

    @property
    def scenario(self) -> Scenario:
        """The scenario being played (its solution too, for scripted policies)."""

    @property
    def instructions(self) -> str:
        """What the agent is asked to do."""

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""

    @property
    def calls_left(self) -> int:
        """How many tool calls the agent may still make."""

    def tools(self) -> list[dict[str, Any]]:
        """The tool list, ``submit`` last."""

    def call(self, tool: str, /, **arguments: Any) -> Any:
        """Call a tool; the result as JSON data. A refusal raises ``ToolError``."""

    def submit(self, answer: str) -> None:
        """End the episode with an answer."""


Policy = Callable[[PolicySession], Any]


class LocalSession:
    """A ``PolicySession`` on a trial in this process."""

    def __init__(self, trial: Trial) -> None:
        self._trial = trial

    @property
    def scenario(self) -> Scenario:
        """The scenario being played."""
        return self._trial.scenario

    @property
    def instructions(self) -> str:
        """What the agent is asked to do."""
        return self._trial.instructions

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self._trial.done

    @property
    def calls_left(self) -> int:
        """How many tool calls the agent may still make."""
        return self._trial.calls_left

    @property
    def seed(self) -> int | None:
        """The trial's seed."""
        return self._trial.seed

    def tools(self) -> list[dict[str, Any]]:
        """The tool list, ``submit`` last."""
        return self._trial.tools()

    def call(self, tool: str, /, **arguments: Any) -> Any:
        """Call a tool; the result as JSON data, exactly as the wire would carry it."""
        return to_jsonable_python(self._trial.call(tool, **arguments))

    def submit(self, answer: str) -> None:
        """End the episode with an answer."""
        self._trial.submit(answer)


def solution_policy(session: PolicySession) -> None:
    """A scripted policy: play the scenario's reference solution, refusals and all."""
    for step in session.scenario.solution or ():
        if session.done:
            return
        if step.tool == SUBMIT_TOOL:
            session.submit(step.arguments["answer"])
            return
        try:
            session.call(step.tool, **step.arguments)
        except ToolError:
            continue


def idle_policy(session: PolicySession) -> None:
    """A policy that does nothing: what ``scenarios check`` grades to show a task is not free."""


def load_policy(target: str) -> Policy:
    """The policy at ``module:attr``, imported now."""
    found = import_target(
        target, label=f"--policy {target!r}", what="a function", example="my_agent:policy"
    )
    if not callable(found):
        raise WorldBug(f"--policy {target!r} is a {type(found).__name__}, not a function")
    policy: Policy = found
    return policy


@dataclass(frozen=True, slots=True)
class TrialSpec:
    """One trial to run: the pack, the scenario, the trial number and its seed."""

    pack: ScenarioSet
    scenario: Scenario
    trial: int
    seed: int

    @property
    def key(self) -> tuple[str, int]:
        """The trial this is: the scenario and the trial number."""
        return (self.scenario.id, self.trial)

    @property
    def episode_id(self) -> str:
        """The episode id a runner gives the trial's state document: ``pack/scenario/trial``."""
        return f"{self.pack.name}/{self.scenario.id}/{self.trial}"

    def result(self, **outcome: Any) -> TrialResult:
        """This trial's result: the spec's pack, scenario, trial and seed, and ``outcome``.

        ``outcome`` is every other field of ``TrialResult`` (world, score, passed, ...); a
        runner fills in what it learned and the identifying fields come from here, once.
        """
        return TrialResult(
            pack=self.pack.name,
            pack_version=self.pack.version,
            scenario=self.scenario.id,
            scenario_hash=self.scenario.hash,
            trial=self.trial,
            seed=self.seed,
            **outcome,
        )


def plan(
    pack: ScenarioSet,
    *,
    split: str | None = None,
    trials: int = 1,
    scenarios: Sequence[str] | None = None,
) -> list[TrialSpec]:
    """The trials of an eval, scenario by scenario: ``trials`` of each, each with its seed."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise WorldBug(f"trials is a whole number, 1 or more; got {trials!r}")
    chosen = pack.split(split)
    if scenarios:
        ids = {scenario.id for scenario in chosen}
        unknown = [name for name in scenarios if name not in ids]
        if unknown:
            where = f"split {split!r} of pack {pack.name!r}" if split else f"pack {pack.name!r}"
            raise WorldBug(f"{where} has no scenario {', '.join(map(repr, unknown))}")
        chosen = [scenario for scenario in chosen if scenario.id in scenarios]
    return [
        TrialSpec(pack, scenario, trial, trial_seed(pack.name, scenario.id, trial))
        for scenario in chosen
        for trial in range(trials)
    ]


def run_trial(
    spec: TrialSpec,
    policy: Policy,
    *,
    world: World | None = None,
    runner: str = "in process",
    storage: str | None = None,
) -> TrialResult:
    """Run one trial in this process: make its instance, hand the policy a session, grade.

    ``storage`` (``"memory"`` or ``"disk"``) is where the trial's instance keeps
    its stores; by default, ``SEAHAVEN_STORAGE`` or memory, as for every runner.
    """
    started = time.perf_counter()
    scenario = spec.scenario
    resolved = world if world is not None else scenario.resolve_world()
    error: TrialError | None = None
    with Trial(scenario, seed=spec.seed, world=resolved, storage=storage) as trial:
        try:
            policy(LocalSession(trial))
        except WorldBug as bug:
            error = TrialError(kind="world", message=str(bug))
        except ToolError as refused:
            # A policy that lets a refusal escape has ended its episode there.
            error = TrialError(kind="policy", message=f"{refused.code}: {refused.message}")
        except Exception as failure:
            error = TrialError(kind="policy", message=f"{type(failure).__name__}: {failure}")
        try:
            grade = trial.finish()
        except WorldBug as bug:
            error = TrialError(kind="world", message=str(bug))
            grade = None
        world_failed = error is not None and error.kind == "world"
        return spec.result(
            world=resolved.name,
            world_version=resolved.version,
            score=0.0 if grade is None or world_failed else grade.score,
            passed=False if grade is None or world_failed else grade.passed,
            checks=[] if grade is None else [check.to_dict() for check in grade.checks],
            calls=trial.calls_made,
            ended_by=trial.ended_by,
            answer=trial.answer,
            seconds=time.perf_counter() - started,
            state_sha256=trial.state_sha256(),
            runner=runner,
            error=error,
        )


TrialRunner = Callable[[Sequence[TrialSpec], Policy], Iterable[TrialResult]]
"""Runs trials and yields each result as it ends, in any order: in process, on Ray, remotely."""


def run_in_process(
    specs: Sequence[TrialSpec], policy: Policy, *, storage: str | None = None
) -> Iterator[TrialResult]:
    """The default runner: each trial in turn, in this process (``storage`` as ``run_trial``'s)."""
    worlds: dict[str, World] = {}
    for spec in specs:
        name = spec.scenario.world_name
        if name not in worlds:
            worlds[name] = spec.scenario.resolve_world()
        yield run_trial(spec, policy, world=worlds[name], storage=storage)


def in_process(*, storage: str | None = None) -> TrialRunner:
    """``run_in_process`` with the trials' instances keeping their stores in ``storage``.

    ``storage`` is ``"memory"`` or ``"disk"``, checked now; ``None`` leaves it to
    ``SEAHAVEN_STORAGE``, as ``run_in_process`` does.
    """
    where = None if storage is None else check_storage(storage)
    return functools.partial(run_in_process, storage=where)


def evaluate(
    pack: ScenarioSet,
    policy: Policy,
    *,
    split: str | None = None,
    trials: int = 1,
    scenarios: Sequence[str] | None = None,
    out: Path | str | None = None,
    resume: bool = False,
    runner: TrialRunner = run_in_process,
    progress: Callable[[TrialResult, int, int], None] | None = None,
) -> tuple[Summary, list[TrialResult]]:
    """Run an eval and summarize it; with ``out``, each result is appended as it ends.

    With ``resume``, trials the file already holds are not run again. A
    ``KeyboardInterrupt`` stops the eval after the trials that finished, which
    are in the file; run again with ``resume`` to finish. The runner's iterator
    is closed when the eval stops, early or not, so a runner on a cluster stops
    the work it has in flight.
    """
    specs = plan(pack, split=split, trials=trials, scenarios=scenarios)
    planned = [spec.key for spec in specs]
    results: list[TrialResult] = []
    file = ResultsFile(out) if out is not None else None
    if file is not None:
        kept = file.open(resume=resume)
        try:
            check_resumable(kept, {s.scenario.id: s.scenario.hash for s in specs}, file.path)
        except WorldBug:
            file.close()
            raise
        done = {result.key for result in kept if result.pack == pack.name}
        wanted = set(planned)
        results.extend(result for result in kept if result.key in wanted)
        specs = [spec for spec in specs if spec.key not in done]
    total = len(planned)
    stream: Iterable[TrialResult] = ()
    try:
        stream = runner(specs, policy)
        for result in stream:
            results.append(result)
            if file is not None:
                file.write(result)
            if progress is not None:
                progress(result, len(results), total)
    finally:
        # A runner's iterator that stops early (Ctrl-C, an error here) is closed now, not when
        # it is collected, so a runner on a cluster cancels what it has in flight at once.
        close = getattr(stream, "close", None)
        if callable(close):
            close()
        if file is not None:
            file.close()
    return summarize(pack.name, split, trials, planned, results), results
