"""Evals: trials of a pack's scenarios run by a policy, their results, and what they add up to.

``evaluate(pack, policy, trials=K)`` plans every trial (seeds derived from the
pack, the scenario and the trial number), runs them through a runner (in
process by default; ``seahaven.ray`` and ``seahaven.openenv`` provide runners
on a cluster and against a served world), appends each ``TrialResult`` to a
results file as it ends, and returns a ``Summary``: the mean score with a
bootstrap interval, and pass@k and pass^k for k up to K. ``check_pack`` is
``seahaven scenarios check``.
"""

from __future__ import annotations

from seahaven.evaluation.checking import ScenarioReport, check_pack, check_scenario
from seahaven.evaluation.results import ResultsFile, Summary, TrialError, TrialResult, summarize
from seahaven.evaluation.run import (
    LocalSession,
    Policy,
    PolicySession,
    TrialRunner,
    TrialSpec,
    evaluate,
    idle_policy,
    in_process,
    load_policy,
    plan,
    run_in_process,
    run_trial,
    solution_policy,
    trial_seed,
)
from seahaven.evaluation.stats import bootstrap_interval, pass_at_k, pass_hat_k

__all__ = [
    "LocalSession",
    "Policy",
    "PolicySession",
    "ResultsFile",
    "ScenarioReport",
    "Summary",
    "TrialError",
    "TrialResult",
    "TrialRunner",
    "TrialSpec",
    "bootstrap_interval",
    "check_pack",
    "check_scenario",
    "evaluate",
    "idle_policy",
    "in_process",
    "load_policy",
    "pass_at_k",
    "pass_hat_k",
    "plan",
    "run_in_process",
    "run_trial",
    "solution_policy",
    "summarize",
    "trial_seed",
]
