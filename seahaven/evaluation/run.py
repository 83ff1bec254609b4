"""Running trials: one trial in process, a plan of them, and a whole eval.

``plan`` lists the trials of a pack (scenarios times trials, each with a seed
derived from the pack, the scenario and the trial number), ``run_trial`` runs
one in this process (``run_trial_async`` in asynchronous code), and
``evaluate`` runs a plan through a runner, appends each result to a results
file as it ends, and summarizes. What a policy is, and how a runner plays one,
is ``seahaven.evaluation.policies``.

A trial that is **errored** (its failure is not the agent's: see
``TrialResult.errored``) is written like any other and left out of the scores;
``evaluate`` stops after ``max_consecutive_errors`` of them in a row, since
something is broken that more trials will not fix.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from seahaven.errors import SeahavenError, WorldBug
from seahaven.evaluation.policies import (
    LocalSession,
    Policy,
    check_policy,
    describe_policy,
    load_policy,
    play_policy,
    play_policy_async,
)
from seahaven.evaluation.results import (
    ResultsFile,
    TrialError,
    TrialResult,
    check_resumable,
    latest,
)
from seahaven.evaluation.summary import Summary, summarize
from seahaven.scenarios.model import Scenario
from seahaven.scenarios.pack import ScenarioSet
from seahaven.scenarios.trial import Trial
from seahaven.storage import check_storage
from seahaven.world import World

__all__ = [
    "DEFAULT_MAX_CONSECUTIVE_ERRORS",
    "EvalStopped",
    "TrialRunner",
    "TrialSpec",
    "evaluate",
    "in_process",
    "plan",
    "run_in_process",
    "run_trial",
    "run_trial_async",
    "trial_seed",
]

# How many errored trials in a row stop an eval: enough that a one-off failure does not,
# few enough that a dead server or a broken world does not burn through the whole plan.
DEFAULT_MAX_CONSECUTIVE_ERRORS = 5
# How many of a pack's scenario ids an unknown --scenario lists.
_IDS_SHOWN = 30


class EvalStopped(SeahavenError):
    """An eval stopped because too many trials in a row errored; ``last`` is the last of them.

    Every trial that ended is in the results file; the errored ones run again
    with ``resume`` once the cause is fixed.
    """

    def __init__(self, count: int, last: TrialResult, out: Path | None) -> None:
        error = last.error
        cause = f"{error.kind}: {' '.join(error.message.split())}" if error else "unknown"
        where = (
            f"the finished trials are in {out}; fix the cause and run again with --resume"
            if out is not None
            else "fix the cause and run again"
        )
        super().__init__(
            f"stopped after {count} errored trials in a row, the last "
            f"{last.scenario} #{last.trial} ({cause}); {where}"
        )
        self.count = count
        self.last = last


def trial_seed(pack: str, scenario_id: str, trial: int) -> int:
    """The seed of one trial: the same for the same pack, scenario and trial, everywhere."""
    text = f"seahaven trial\x00{pack}\x00{scenario_id}\x00{trial}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "big")


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
            known = [scenario.id for scenario in chosen]
            listed = ", ".join(known[:_IDS_SHOWN])
            if len(known) > _IDS_SHOWN:
                listed += f", and {len(known) - _IDS_SHOWN} more"
            raise WorldBug(
                f"{where} has no scenario {', '.join(map(repr, unknown))}; its scenarios are "
                f"{listed or 'none'}"
            )
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

    An ``async`` policy is run to its end here (see ``play_policy``).
    ``storage`` (``"memory"`` or ``"disk"``) is where the trial's instance keeps
    its stores; by default, ``SEAHAVEN_STORAGE`` or memory, as for every runner.
    """
    started = time.perf_counter()
    resolved = world if world is not None else spec.scenario.resolve_world()
    with Trial(spec.scenario, seed=spec.seed, world=resolved, storage=storage) as trial:
        session = LocalSession(trial)
        error = play_policy(policy, session)
        return _graded(spec, trial, resolved, error, runner=runner, started=started)


async def run_trial_async(
    spec: TrialSpec,
    policy: Policy,
    *,
    world: World | None = None,
    runner: str = "in process",
    storage: str | None = None,
) -> TrialResult:
    """``run_trial`` in asynchronous code: an ``async`` policy is awaited on the running loop.

    The same trial gives the same result either way. The world's calls run on
    this thread, as they are quick (a world's tool is a few SQLite statements).
    """
    started = time.perf_counter()
    resolved = world if world is not None else spec.scenario.resolve_world()
    with Trial(spec.scenario, seed=spec.seed, world=resolved, storage=storage) as trial:
        session = LocalSession(trial)
        error = await play_policy_async(policy, session)
        return _graded(spec, trial, resolved, error, runner=runner, started=started)


def _graded(
    spec: TrialSpec,
    trial: Trial,
    world: World,
    error: TrialError | None,
    *,
    runner: str,
    started: float,
) -> TrialResult:
    """End the trial's episode where it stands, grade it, and make its result."""
    try:
        grade = trial.finish()
    except WorldBug as bug:
        error = TrialError(kind="world", message=str(bug))
        grade = None
    unscored = error is not None and error.errored
    seconds = time.perf_counter() - started
    return spec.result(
        world=world.name,
        world_version=world.version,
        score=0.0 if grade is None or unscored else grade.score,
        passed=False if grade is None or unscored else grade.passed,
        checks=[] if grade is None else [check.to_dict() for check in grade.checks],
        calls=trial.calls_made,
        ended_by=trial.ended_by,
        answer=trial.answer,
        seconds=seconds,
        episode_seconds=max(0.0, seconds - trial.grade_seconds),
        grade_seconds=trial.grade_seconds,
        state_sha256=trial.state_sha256(),
        runner=runner,
        error=error,
        conversation=trial.conversation,
        user_tokens=None if trial.cast is None else trial.cast.user_tokens,
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
    policy: Policy | str,
    *,
    split: str | None = None,
    trials: int = 1,
    scenarios: Sequence[str] | None = None,
    out: Path | str | None = None,
    resume: bool = False,
    runner: TrialRunner = run_in_process,
    progress: Callable[[TrialResult, int, int], None] | None = None,
    max_consecutive_errors: int | None = DEFAULT_MAX_CONSECUTIVE_ERRORS,
) -> tuple[Summary, list[TrialResult]]:
    """Run an eval and summarize it; with ``out``, each result is appended as it ends.

    ``policy`` is a function of the session (``async`` too) or ``"module:attr"``;
    anything else is refused before a trial runs, and every result records its
    name (``describe_policy``). With ``resume``, the trials the file holds are not
    run again, except errored ones, whose new line supersedes the old; a file of
    another policy's trials is refused. After ``max_consecutive_errors`` errored
    trials in a row (``None``: never) the eval stops with ``EvalStopped``.

    A ``KeyboardInterrupt`` stops the eval after the trials that finished, which
    are in the file; run again with ``resume`` to finish. The runner's iterator
    is closed when the eval stops, early or not, so a runner on a cluster stops
    the work it has in flight. The file is created with the first result, so an
    eval refused before its first trial leaves none.
    """
    chosen = load_policy(policy) if isinstance(policy, str) else check_policy(policy)
    name = describe_policy(chosen)
    if max_consecutive_errors is not None and (
        isinstance(max_consecutive_errors, bool)
        or not isinstance(max_consecutive_errors, int)
        or max_consecutive_errors < 1
    ):
        raise WorldBug(
            "max_consecutive_errors is a whole number, 1 or more (or None never to stop); "
            f"got {max_consecutive_errors!r}"
        )
    specs = plan(pack, split=split, trials=trials, scenarios=scenarios)
    planned = [spec.key for spec in specs]
    wanted = set(planned)
    results: list[TrialResult] = []
    file = ResultsFile(out) if out is not None else None
    if file is not None:
        kept = file.open(resume=resume)
        hashes = {s.scenario.id: s.scenario.hash for s in specs}
        check_resumable(kept, hashes, file.path, pack=pack.name, policy=name)
        finished = {
            key: result
            for key, result in latest(r for r in kept if r.pack == pack.name).items()
            if key in wanted and not result.errored
        }
        results.extend(finished.values())
        specs = [spec for spec in specs if spec.key not in finished]
    total = len(planned)
    stream: Iterable[TrialResult] = ()
    in_a_row = 0
    try:
        stream = runner(specs, chosen)
        for result in stream:
            if result.policy is None:
                result = result.model_copy(update={"policy": name})
            results.append(result)
            if file is not None:
                file.write(result)
            if progress is not None:
                progress(result, len(results), total)
            in_a_row = in_a_row + 1 if result.errored else 0
            if max_consecutive_errors is not None and in_a_row >= max_consecutive_errors:
                raise EvalStopped(in_a_row, result, file.path if file is not None else None)
    finally:
        # A runner's iterator that stops early (Ctrl-C, an error here) is closed now, not when
        # it is collected, so a runner on a cluster cancels what it has in flight at once.
        close = getattr(stream, "close", None)
        if callable(close):
            close()
        if file is not None:
            file.close()
    return summarize(pack.name, split, trials, planned, results), results
