"""OpenEnv's validation of rewards, against ``seahaven serve --world company --scenarios company``.

What OpenEnv 0.10's ``openenv validate`` checks of rewards, and where each check runs:

- ``openenv validate --url`` (the command) probes only a running server's routes
  (openapi, health, metadata, schema, mcp, mode): no criterion reads a reward. It
  passes against the served company pack.
- ``runtime.reward_well_formed`` (every reward finite and in the declared range),
  ``runtime.observation_schema`` and ``runtime.state_contract`` run only in the
  package lane, after a provider builds an image (Docker by default; the command
  takes no other). Their graders read evidence from OpenEnv's own collector, which
  needs only a URL: here the collector plays every company scenario's reference
  solution, and an empty episode of each, over ``/ws``, and the graders pass.
- ``semantic.oracle_max`` (the reference solution earns at least the maximum less
  the declared tolerance) and ``semantic.floor_gap`` (the maximum less an empty
  episode's reward is at least the declared margin) are in the installed policy,
  but this build registers no grader for them: the runner reports them SKIPped,
  "grader not implemented in this build". They are measured here by their
  definitions, on the same collected evidence.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import company_world
import pytest
from openenv.validation import load_policy
from openenv.validation.graders.runtime.basic import (
    ObservationSchemaGrader,
    RewardWellFormedGrader,
    StateContractGrader,
)
from openenv.validation.manifest import RewardDeclaration
from openenv.validation.runner import default_grader_registry
from openenv.validation.runtime.collector import collect_runtime_evidence
from openenv.validation.runtime.contracts import RuntimeEvidence, RuntimePlan
from openenv.validation.types import CheckStatus

from seahaven.scenarios import ScenarioSet, load_pack

# OpenEnv's collector opens its WebSocket without a with block, which websockets deprecates.
pytestmark = pytest.mark.filterwarnings(
    "ignore:connect\\(\\) must be used as a context manager:DeprecationWarning"
)

# The reward contract a served pack keeps: a grade's score, from 0 to 1. Every reference
# solution earns 1 exactly, and doing nothing 0, so the tolerance is 0 and the margin 1.
REWARD = RewardDeclaration(range=(0.0, 1.0), oracle_tolerance=0.0, floor_margin=1.0)


def openenv_command() -> str:
    found = shutil.which("openenv", path=str(Path(sys.executable).parent))
    assert found is not None, "the openenv command is not installed beside this interpreter"
    return found


@pytest.fixture(scope="module")
def pack() -> ScenarioSet:
    return load_pack("company")


@pytest.fixture
def server(serving: Any, pack: ScenarioSet) -> Any:
    return serving(company_world.world, scenarios=[pack])


def plan(scenario: str, actions: list[dict[str, Any]], seed: int) -> RuntimePlan:
    return RuntimePlan.model_validate(
        {
            "plan_schema_version": "1",
            "reset": {
                "episode_id": f"validate-{seed}",
                "seed": seed,
                "options": {"scenario": scenario},
            },
            "actions": actions,
        }
    )


def solution_actions(steps: Any) -> list[dict[str, Any]]:
    actions = [
        {"type": "call_tool", "tool_name": step.tool, "arguments": dict(step.arguments)}
        for step in steps
    ]
    if not steps or steps[-1].tool != "submit":
        actions.append({"type": "finish"})  # graded where it stands, as a harness ends it
    return actions


def rewards(evidence: RuntimeEvidence) -> list[Any]:
    return [
        json.loads(row.response_json)["data"]["reward"]
        for row in evidence.exchanges
        if row.operation in ("reset", "step")
    ]


def graded(evidence: RuntimeEvidence) -> dict[str, Any]:
    """OpenEnv's runtime reward, observation and state graders on one collected episode."""
    subject = SimpleNamespace(runtime_evidence=evidence, manifest=SimpleNamespace(reward=REWARD))
    results = {}
    for grader in (RewardWellFormedGrader(), ObservationSchemaGrader(), StateContractGrader()):
        result = grader.run(subject)  # type: ignore[arg-type]
        results[grader.check_id] = (result.status, result.evidence)
    return results


def test_openenv_validate_url_passes_and_checks_no_reward(server: Any) -> None:
    done = subprocess.run(
        [openenv_command(), "validate", "--url", server.base_url, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["passed"] is True
    assert [criterion["id"] for criterion in report["criteria"]] == [
        "openapi_version_available",
        "health_endpoint",
        "metadata_endpoint",
        "schema_endpoint",
        "mcp_endpoint",
        "mode_endpoint_consistency",
    ]


def test_the_reward_checks_of_this_build_and_those_it_only_names() -> None:
    policy = load_policy("v2")
    named = {entry.check_id for entry in policy.entries}
    registry = default_grader_registry(policy)
    # Graded in this build (in the package lane, after an image build).
    assert registry.get("runtime.reward_well_formed") is not None
    # Named by the policy, with no grader: the runner SKIPs them in every lane.
    for check in ("semantic.oracle_max", "semantic.floor_gap", "semantic.canary_floor"):
        assert check in named and registry.get(check) is None, check
    assert policy.bounds.min_floor_margin <= REWARD.floor_margin
    assert REWARD.oracle_tolerance <= policy.bounds.max_oracle_tolerance


def test_every_reference_solution_earns_the_maximum_and_doing_nothing_the_floor(
    server: Any, pack: ScenarioSet
) -> None:
    low, high = REWARD.range
    episodes: list[RuntimeEvidence] = []
    for index, scenario in enumerate(pack):
        reference = f"{pack.name}/{scenario.id}"
        oracle = collect_runtime_evidence(
            server.base_url,
            plan(reference, solution_actions(scenario.solution), 2 * index),
            episode_timeout_s=60,
        )
        empty = collect_runtime_evidence(
            server.base_url,
            plan(reference, [{"type": "finish"}], 2 * index + 1),
            episode_timeout_s=60,
        )
        for evidence in (oracle, empty):
            assert evidence.failure_reason is None, (reference, evidence.failure_reason)
        paid = rewards(oracle)
        # semantic.oracle_max: reward(oracle) >= max - oracle_tolerance, on the last step.
        assert paid[0] is None and paid[-1] >= high - REWARD.oracle_tolerance, (reference, paid)
        assert all(reward == low for reward in paid[1:-1]), (reference, paid)
        # semantic.floor_gap: max - measured_floor >= floor_margin.
        floor = rewards(empty)[-1]
        assert floor == low and high - floor >= REWARD.floor_margin, (reference, floor)
        episodes.extend((oracle, empty))
    # OpenEnv's graders on all 104 episodes at once: each reads its exchanges one by one, and
    # the state contract starts again at every reset.
    together = RuntimeEvidence(
        exchanges=tuple(row for episode in episodes for row in episode.exchanges),
        observation_schema_json=episodes[0].observation_schema_json,
        reset_observation_schema_json=episodes[0].reset_observation_schema_json,
    )
    for check, (status, why) in graded(together).items():
        assert status is CheckStatus.PASS, (check, why)
