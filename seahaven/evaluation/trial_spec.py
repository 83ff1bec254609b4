"""``TrialSpec``: one trial an eval plans, the pack, the scenario, the trial number and its seed.

Apart from the runner (``seahaven.evaluation.trials``), so what makes a
trial's player (``seahaven.evaluation.users``) can name it without a loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seahaven.evaluation.results import TrialResult
from seahaven.scenarios.model import Scenario
from seahaven.scenarios.pack import ScenarioSet

__all__ = ["TrialSpec"]


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

    @property
    def policy_document(self) -> str | None:
        """The pack's policy document (the rules its agent works under), when it has one."""
        # Read tolerantly: a pack object of an older release has no such attribute.
        document = getattr(self.pack, "policy", None)
        return document if isinstance(document, str) and document.strip() else None

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
