"""Scenario packs as verifiers tasksets; imported as ``seahaven.verifiers``.

verifiers 0.4 loads a taskset by id: ``vf-eval seahaven-verifiers
--env.taskset.pack company -m MODEL`` imports this package (the id with ``-``
as ``_``), whose ``__all__`` exports one ``Taskset`` (``SeahavenTaskset``: a
task per scenario, rewarded by its grader) and one ``Harness``
(``SeahavenHarness``: the in-process loop that plays a scenario's episode),
which verifiers then uses as the taskset's default, and one ``Env``
(``SeahavenEnv``: one agent seat, on the local runtime).
"""

from __future__ import annotations

from seahaven_verifiers.env import SeahavenEnv, SeahavenEnvConfig
from seahaven_verifiers.harness import (
    SeahavenHarness,
    SeahavenHarnessConfig,
    find_task_scenario,
    live_trials,
)
from seahaven_verifiers.tasks import (
    SeahavenData,
    SeahavenState,
    SeahavenTask,
    SeahavenTaskset,
    SeahavenTasksetConfig,
    check_rewards,
    task_data,
)

__all__ = [
    "SeahavenData",
    "SeahavenEnv",
    "SeahavenEnvConfig",
    "SeahavenHarness",
    "SeahavenHarnessConfig",
    "SeahavenState",
    "SeahavenTask",
    "SeahavenTaskset",
    "SeahavenTasksetConfig",
    "check_rewards",
    "find_task_scenario",
    "live_trials",
    "task_data",
]
