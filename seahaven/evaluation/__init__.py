"""Evals: trials of a pack's scenarios run by a policy, their results, and what they add up to.

``evaluate(pack, policy, trials=K)`` plans every trial (seeds derived from the
pack, the scenario and the trial number), runs them through a runner (in
process by default, several at once for an async policy; ``seahaven.ray`` and
``seahaven.openenv`` provide runners on a cluster and against a served world),
appends each ``TrialResult`` to a results file as it ends (and its transcript
to a transcripts file), and returns a ``Summary``: the mean score with a
bootstrap interval, pass@k and pass^k for k up to K, and a row per scenario.
A trial whose failure is not the agent's is errored and left out of every
score. ``evaluate(..., user=SOURCE)`` has the scenarios' users played by
another player (a model: ``seahaven.agents.ModelUser``; a transcript:
``RecordedUsers``), and ``replay_transcripts`` runs recorded trials again.
``check_pack`` is ``seahaven scenarios check``: each scenario's grader
attacked by mutants of its own solution, every blind spot a ``Finding``;
``check_simulator`` checks a model-played user against the scripted one.
"""

from __future__ import annotations

from seahaven.evaluation.checking import (
    ScenarioReport,
    check_pack,
    check_scenario,
    surviving_kinds,
)
from seahaven.evaluation.findings import Finding
from seahaven.evaluation.policies import (
    LocalSession,
    Policy,
    PolicySession,
    TrialFailure,
    check_policy,
    close_policy_async,
    describe_policy,
    idle_policy,
    is_async_policy,
    load_policy,
    play_policy,
    play_policy_async,
    run_to_completion,
    solution_policy,
)
from seahaven.evaluation.pool import run_concurrently
from seahaven.evaluation.processes import run_in_processes
from seahaven.evaluation.replay import (
    RecordedAgent,
    RecordedUser,
    RecordedUsers,
    ReplayDiverged,
    replay_transcripts,
)
from seahaven.evaluation.results import AGENT_KINDS, ResultsFile, TrialError, TrialResult
from seahaven.evaluation.run import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_CONSECUTIVE_ERRORS,
    EvalStopped,
    InProcessRunner,
    TrialRunner,
    evaluate,
    in_process,
    run_in_process,
)
from seahaven.evaluation.shipments import registered_name, registered_world
from seahaven.evaluation.simulator import Departure, SimulatorReport, check_simulator
from seahaven.evaluation.stats import bootstrap_interval, pass_at_k, pass_hat_k
from seahaven.evaluation.summary import ScenarioSummary, Summary, summarize
from seahaven.evaluation.transcripts import (
    Transcript,
    conversation,
    default_transcripts_path,
    read_transcripts,
)
from seahaven.evaluation.trials import TrialSpec, plan, run_trial, run_trial_async, trial_seed
from seahaven.evaluation.users import UserSource, check_user_source, describe_user

__all__ = [
    "AGENT_KINDS",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MAX_CONSECUTIVE_ERRORS",
    "Departure",
    "EvalStopped",
    "Finding",
    "InProcessRunner",
    "LocalSession",
    "Policy",
    "PolicySession",
    "RecordedAgent",
    "RecordedUser",
    "RecordedUsers",
    "ReplayDiverged",
    "ResultsFile",
    "ScenarioReport",
    "ScenarioSummary",
    "SimulatorReport",
    "Summary",
    "Transcript",
    "TrialError",
    "TrialFailure",
    "TrialResult",
    "TrialRunner",
    "TrialSpec",
    "UserSource",
    "bootstrap_interval",
    "check_pack",
    "check_policy",
    "check_scenario",
    "check_simulator",
    "check_user_source",
    "close_policy_async",
    "conversation",
    "default_transcripts_path",
    "describe_policy",
    "describe_user",
    "evaluate",
    "idle_policy",
    "in_process",
    "is_async_policy",
    "load_policy",
    "pass_at_k",
    "pass_hat_k",
    "plan",
    "play_policy",
    "play_policy_async",
    "read_transcripts",
    "registered_name",
    "registered_world",
    "replay_transcripts",
    "run_concurrently",
    "run_in_process",
    "run_in_processes",
    "run_to_completion",
    "run_trial",
    "run_trial_async",
    "solution_policy",
    "summarize",
    "surviving_kinds",
    "trial_seed",
]
