"""Trials: what an eval plans, and one trial run in this process.

``plan`` lists the trials of a pack (scenarios times trials, each with a seed
derived from the pack, the scenario and the trial number); ``run_trial`` runs
one in this process, and ``run_trial_async`` does in asynchronous code, where
several run at once on one event loop (``seahaven.evaluation.pool``). Both
hand the policy a ``LocalSession`` whose ``transcript`` records the exchange,
and grade the episode where the policy left it. Given a user source
(``seahaven.evaluation.users``), each trial whose scenario has a user gets a
player of its own from it.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from typing import Any

from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.evaluation.policies import (
    LocalSession,
    Policy,
    is_async_policy,
    play_policy,
    play_policy_async,
)
from seahaven.evaluation.results import TrialError, TrialResult
from seahaven.evaluation.transcripts import Transcript
from seahaven.evaluation.trial_spec import TrialSpec
from seahaven.evaluation.users import UserSource, describe_user
from seahaven.scenarios.pack import ScenarioSet
from seahaven.scenarios.trial import Trial

__all__ = ["TrialSpec", "plan", "run_trial", "run_trial_async", "trial_seed"]

# How many of a pack's scenario ids an unknown --scenario lists.
_IDS_SHOWN = 30


def trial_seed(pack: str, scenario_id: str, trial: int) -> int:
    """The seed of one trial: the same for the same pack, scenario and trial, everywhere."""
    text = f"seahaven trial\x00{pack}\x00{scenario_id}\x00{trial}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "big")


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
    record: bool = False,
    user: UserSource | None = None,
) -> TrialResult:
    """Run one trial in this process: make its instance, hand the policy a session, grade.

    An ``async`` policy is run to its end here (see ``play_policy``).
    ``storage`` (``"memory"`` or ``"disk"``) is where the trial's instance keeps
    its stores; by default, ``SEAHAVEN_STORAGE`` or memory, as for any instance.
    With ``record``, the result carries the trial's transcript
    (``result.transcript``) for ``evaluate`` to write. ``user`` plays the
    scenario's user, when it has one, instead of its script or function.
    """
    started = time.perf_counter()
    resolved = world if world is not None else spec.scenario.resolve_world()
    transcript = Transcript()
    player = _player(spec, user, transcript)
    with Trial(
        spec.scenario, seed=spec.seed, world=resolved, storage=storage, user_player=player
    ) as trial:
        session = LocalSession(trial, transcript=transcript, policy_document=spec.policy_document)
        error = play_policy(policy, session)
        return _graded(spec, trial, resolved, session, error, runner, started, record, user)


async def run_trial_async(
    spec: TrialSpec,
    policy: Policy,
    *,
    world: World | None = None,
    runner: str = "in process",
    storage: str | None = None,
    record: bool = False,
    timeout: float | None = None,
    executor: Executor | None = None,
    user: UserSource | None = None,
) -> TrialResult:
    """``run_trial`` in asynchronous code: an ``async`` policy is awaited on the running loop.

    The same trial gives the same result either way. The world's calls run on
    this thread, as they are quick (a world's tool is a few SQLite statements). A
    plain (not ``async``) policy runs on ``executor``'s threads when one is given,
    so that trials beside it go on, and on this thread otherwise.

    ``timeout`` (seconds) limits the policy's play: past it, the policy is
    stopped (an ``async`` one is cancelled; a plain one in a thread is refused
    every call after the episode ends, so it stops at its next call) and the trial
    ends as the agent's failure, of kind ``timeout``, scored 0.
    """
    started = time.perf_counter()
    resolved = world if world is not None else spec.scenario.resolve_world()
    transcript = Transcript()
    player = _player(spec, user, transcript)
    with Trial(
        spec.scenario, seed=spec.seed, world=resolved, storage=storage, user_player=player
    ) as trial:
        session = LocalSession(trial, transcript=transcript, policy_document=spec.policy_document)
        if executor is not None and not is_async_policy(policy):
            loop = asyncio.get_running_loop()
            playing = loop.run_in_executor(executor, play_policy, policy, session)
        else:
            playing = asyncio.ensure_future(play_policy_async(policy, session))
        error: TrialError | None
        try:
            error = await asyncio.wait_for(playing, timeout)
        except TimeoutError:
            error = TrialError(
                kind="timeout",
                message=f"the trial ran past its time limit of {timeout:g} seconds",
            )
        return _graded(spec, trial, resolved, session, error, runner, started, record, user)


def _player(spec: TrialSpec, user: UserSource | None, transcript: Transcript) -> Any:
    """The trial's user player from ``user``; ``None``: the scenario's own (or it has no user)."""
    if user is None or spec.scenario.user is None:
        return None
    return user.player(spec, transcript)


def _graded(
    spec: TrialSpec,
    trial: Trial,
    world: World,
    session: LocalSession,
    error: TrialError | None,
    runner: str,
    started: float,
    record: bool,
    user: UserSource | None = None,
) -> TrialResult:
    """End the trial's episode where it stands, grade it, and make its result."""
    try:
        grade = trial.finish()
    except WorldBug as bug:
        error = TrialError(kind="world", message=str(bug))
        grade = None
    # An errored trial says nothing of the agent, and one that ran out of time failed.
    unscored = error is not None and (error.errored or error.kind == "timeout")
    seconds = time.perf_counter() - started
    transcript: Transcript = session.transcript
    result = spec.result(
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
        usage=dict(transcript.usage) if transcript.usage else None,
        conversation=trial.conversation,
        user_tokens=None if trial.cast is None else trial.cast.user_tokens,
        user=None if user is None else describe_user(user),
    )
    if not record:
        return result
    transcript.keep_changes(trial.instance.change_log())
    return result.with_transcript(transcript)
