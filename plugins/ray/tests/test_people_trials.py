"""Trials with a scripted (or Python-played) user on Ray: byte for byte what they are in process.

The state hash (every change-log record, its actor included, and every call) and
the conversation of each trial are the same on the cluster's actors as in this
process, for the reference conversation and for an agent that does nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from seahaven_ray import trial_runner

from seahaven.evaluation import Policy, TrialResult, evaluate, idle_policy, solution_policy
from seahaven.scenarios import load_pack

pytestmark = pytest.mark.usefixtures("ray_cluster")


def comparable(result: TrialResult) -> dict[str, Any]:
    return result.model_dump(
        exclude={"runner", "seconds", "episode_seconds", "grade_seconds", "policy"}
    )


@pytest.mark.parametrize("policy", [solution_policy, idle_policy], ids=["solution", "idle"])
def test_trials_with_people_on_ray_are_the_trials_in_process(policy: Policy) -> None:
    pack = load_pack("people_cases:pack")
    _, here = evaluate(pack, policy, trials=2)
    _, there = evaluate(pack, policy, trials=2, runner=trial_runner(None, workers=2))
    assert {r.key: comparable(r) for r in there} == {r.key: comparable(r) for r in here}
    if policy is solution_policy:
        assert {r.score for r in there} == {1.0}
        top_ups = [r for r in there if r.scenario == "top-up"]
        assert [len(r.conversation) for r in top_ups] == [6, 6]
        assert len({r.state_sha256 for r in top_ups}) == 2, "each trial's seed mints its receipt"
        echoes = [r for r in there if r.scenario == "echo"]
        assert {r.conversation[1]["text"] for r in echoes} == {
            f"1 messages; seed {r.seed}" for r in echoes
        }
    else:
        assert {r.score for r in there} == {0.0}
        assert all(r.conversation == [] for r in there)


def test_a_model_played_user_travels_to_the_workers_and_plays_as_in_process() -> None:
    # The user's model is the agents plugin's scripted server, playing the scenario's script.
    from seahaven_agents import ModelUser
    from seahaven_agents.testing import ScriptedChatServer, user_script

    pack = load_pack("people_cases:pack")
    with ScriptedChatServer(user_script(pack)) as server:
        user = ModelUser("scripted-user", base_url=server.url)
        options: dict[str, Any] = {"scenarios": ["top-up"], "trials": 2, "user": user}
        _, here = evaluate(pack, solution_policy, **options)
        _, there = evaluate(pack, solution_policy, runner=trial_runner(None, workers=2), **options)
        asked = [request for request in server.requests if request.system]
    assert {r.key: comparable(r) for r in there} == {r.key: comparable(r) for r in here}
    assert all(r.passed and r.user == "chat:scripted-user@127.0.0.1" for r in there)
    assert all(r.user_tokens is not None and r.user_tokens["model_calls"] == 4 for r in there)
    assert len(asked) == 16  # four calls a trial, two trials, in process and on Ray
