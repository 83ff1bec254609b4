"""A pack as a verifiers taskset: one task per scenario, rewarded by the scenario's grader.

``SeahavenTaskset`` loads the pack its config names (``--env.taskset.pack``: an
installed pack's name, a folder holding ``pack.yaml``, or ``module:attr``) and
yields a ``SeahavenTask`` per scenario of the chosen split, in the pack's order.
A task's data is what an agent may know before it starts (the instructions as
the prompt, the pack's policy document as the system prompt) and what names the
scenario (``pack/id``, its hash, the pack's source); never the grader or the
solution.

The rollout is played by ``SeahavenHarness`` (``seahaven_verifiers.harness``),
which leaves the episode's outcome in the trace's state (``SeahavenState``).
The task's rewards read it: ``grade`` is the grade's score, with weight 1, so
the rollout's reward is the grade's score; ``checks`` records each check's
score under ``check: NAME`` with weight 0, a named component that adds nothing to the
sum; the metrics are ``passed``, ``calls`` and ``submitted``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

from seahaven.scenarios import Scenario, ScenarioSet, load_pack

__all__ = [
    "SeahavenData",
    "SeahavenState",
    "SeahavenTask",
    "SeahavenTaskset",
    "SeahavenTasksetConfig",
    "check_rewards",
]


class SeahavenTasksetConfig(vf.TasksetConfig):
    """Which pack, which of its scenarios, and where the rollouts' instances keep their stores."""

    pack: str = "company"
    """The pack: an installed pack's name, a folder holding pack.yaml, or module:attr."""
    split: str | None = None
    """The pack's split (every scenario when unset)."""
    scenarios: list[str] = Field(default_factory=list)
    """Only these scenario ids (every scenario of the split when empty)."""
    storage: str | None = None
    """memory or disk, for each rollout's instance (default: SEAHAVEN_STORAGE, else memory)."""


class SeahavenData(vf.TaskData):
    """One scenario, as a task carries it: the prompt, and what names the scenario."""

    scenario: str
    """The scenario as pack/id."""
    scenario_hash: str
    """The scenario's content hash: which version of the task this was."""
    pack_source: str | None
    """Where the harness loads the pack from (load_pack's argument)."""
    pack_version: str
    tags: list[str] = Field(default_factory=list)
    budget: int
    storage: str | None = None


class SeahavenState(vf.State):
    """What the harness leaves in the trace: the episode's outcome, read by the rewards."""

    graded: bool = False
    score: float = 0.0
    passed: bool = False
    checks: list[dict[str, Any]] = Field(default_factory=list)
    calls: int = 0
    ended_by: str | None = None
    answer: str | None = None
    seed: int | None = None
    state_sha256: str | None = None


def check_rewards(checks: list[dict[str, Any]]) -> dict[str, float]:
    """Each check's score under its name (``check: NAME``); a repeated name gets ``#2``, ..."""
    named: dict[str, float] = {}
    for check in checks:
        key = f"check: {check['name']}"
        if key in named:
            count = 2
            while f"{key} #{count}" in named:
                count += 1
            key = f"{key} #{count}"
        named[key] = float(check["score"]) if check.get("score") is not None else 0.0
    return named


class SeahavenTask(vf.Task[SeahavenData, SeahavenState, vf.TaskConfig]):
    """One scenario: its grade is the reward, its checks named components of it."""

    @property
    def key(self) -> str:
        """The scenario's hash: the same task in every run, whatever its position."""
        return str(self.data.scenario_hash)

    @vf.reward(weight=1.0)
    async def grade(self, trace: vf.Trace) -> float:
        """The grade's score."""
        return float(_graded(trace).score)

    @vf.reward(weight=0.0)
    async def checks(self, trace: vf.Trace) -> dict[str, float]:
        """Every check's score, by name; weight 0, so the reward stays the grade's score."""
        return check_rewards(_graded(trace).checks)

    @vf.metric
    async def passed(self, trace: vf.Trace) -> float:
        """1 when the grade passed."""
        return 1.0 if _graded(trace).passed else 0.0

    @vf.metric
    async def calls(self, trace: vf.Trace) -> float:
        """How many tool calls the episode made."""
        return float(_graded(trace).calls)

    @vf.metric
    async def submitted(self, trace: vf.Trace) -> float:
        """1 when the agent ended the episode with submit."""
        return 1.0 if _graded(trace).ended_by == "submit" else 0.0


def _graded(trace: vf.Trace) -> SeahavenState:
    state = trace.state
    if not isinstance(state, SeahavenState) or not state.graded:
        raise RuntimeError(
            "this rollout has no Seahaven grade: a seahaven-verifiers task is played by its "
            "own harness (the taskset's default); leave --env.agent.harness.id unset"
        )
    return state


class SeahavenTaskset(vf.Taskset[SeahavenTask, SeahavenTasksetConfig]):
    """A scenario pack, a task per scenario of the chosen split."""

    def load(self) -> Iterator[SeahavenTask]:
        """Load the pack and yield its scenarios' tasks, in the pack's order."""
        config: SeahavenTasksetConfig = self.config
        pack = load_pack(config.pack)
        chosen = pack.split(config.split)
        if config.scenarios:
            ids = {scenario.id for scenario in chosen}
            unknown = [name for name in config.scenarios if name not in ids]
            if unknown:
                raise ValueError(
                    f"pack {pack.name!r} has no scenario {', '.join(map(repr, unknown))} "
                    f"{'in split ' + repr(config.split) if config.split else ''}; its scenarios "
                    f"are {', '.join(sorted(ids))}"
                )
            chosen = [scenario for scenario in chosen if scenario.id in config.scenarios]
        for scenario in chosen:
            yield SeahavenTask(task_data(pack, scenario, config.storage), config.task)


def task_data(pack: ScenarioSet, scenario: Scenario, storage: str | None = None) -> SeahavenData:
    """The data of one scenario's task."""
    return SeahavenData(
        id=f"{pack.name}/{scenario.id}",
        name=scenario.id,
        prompt=scenario.instructions,
        system_prompt=pack.policy,
        scenario=f"{pack.name}/{scenario.id}",
        scenario_hash=scenario.hash,
        pack_source=pack.source,
        pack_version=pack.version,
        tags=list(scenario.tags),
        budget=scenario.budget,
        storage=storage,
    )
