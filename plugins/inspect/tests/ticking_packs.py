"""The company pack on a ticking clock, for runs whose state hashes must match to the bit.

Every company scenario starts on a running clock, which stamps rows with the
time of the run, so two runs of the same calls hash differently. The same
scenarios with ``clock_mode: tick`` advance the clock by call, not by time:
the same calls from the same start give the same state, in any runner.
"""

from __future__ import annotations

from seahaven.scenarios import Scenario, ScenarioSet, load_pack


def _ticking(scenario: Scenario) -> Scenario:
    start = scenario.start.model_copy(update={"clock_mode": "tick"})
    return scenario.model_copy(update={"start": start})


def company_tick() -> ScenarioSet:
    """The company pack, every scenario on a ticking clock."""
    company = load_pack("company")
    return ScenarioSet(
        "company-tick",
        company.version,
        [_ticking(scenario) for scenario in company],
        splits={name: list(ids) for name, ids in company.splits.items()},
        description="The company pack on a ticking clock.",
        policy=company.policy,
    )
