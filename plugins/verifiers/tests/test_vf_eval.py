"""``vf-eval seahaven-verifiers`` as a user types it, against the scripted Chat Completions server.

The server (``seahaven_agents.testing``) plays every scenario's reference
solution, submitting its answer with ``submit``; every rollout is graded, its
reward is the grade's score (1 for every reference solution, as ``seahaven
eval`` gives) and each check is a named component of weight 0. One scenario's
model calls fail with a 500: that rollout fails, unscored, and its instance is
gone like every other's.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import BOUND_SECONDS, instances_left, offline_env, verifiers_venv

from seahaven.evaluation import evaluate, solution_policy
from seahaven.scenarios import load_pack

try:
    from seahaven_agents.testing import (
        ChatRequest,
        Reply,
        ScriptedChatServer,
        error,
        solution_script,
    )
except ModuleNotFoundError:  # pragma: no cover - the agents plugin is part of every checkout
    if os.environ.get("CI", "").lower() == "true":
        raise
    pytest.skip("the agents plugin (its scripted server) is not installed", allow_module_level=True)

FAILING = "usd-processing-fees"


def traces(out: Path) -> list[dict[str, Any]]:
    [written] = sorted(out.glob("*/traces.jsonl"))
    found = []
    for line in written.read_text(encoding="utf-8").splitlines():
        episode = json.loads(line)
        found.extend(episode["traces"])
    return found


def test_vf_eval_grades_every_rollout_of_the_company_pack(tmp_path: Path) -> None:
    pack = load_pack("company")
    play = solution_script(pack, submit_with_tool=True)
    failing = pack.get(FAILING).instructions

    def script(request: ChatRequest) -> Reply:
        if request.instructions == failing:
            return error(500, "the model's server failed")
        return play(request)

    out = tmp_path / "outputs"
    with ScriptedChatServer(script) as server:
        done = subprocess.run(
            [
                str(verifiers_venv() / "bin" / "vf-eval"),
                "seahaven-verifiers",
                "--env.taskset.pack",
                "company",
                "--env.taskset.split",
                "test",
                "-m",
                "scripted",
                "--client.base-url",
                server.url,
                "--client.api-key-var",
                "SCRIPTED_API_KEY",
                "--no-push",
                "--no-rich",
                "-c",
                "4",
                "-o",
                str(out),
            ],
            cwd=tmp_path,
            env=offline_env(tmp_path, SCRIPTED_API_KEY="not-a-secret"),
            capture_output=True,
            text=True,
            timeout=BOUND_SECONDS,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-4000:]
    assert server.script_errors == []
    found = {trace["task"]["data"]["name"]: trace for trace in traces(out)}
    test = pack.split("test")
    assert sorted(found) == sorted(scenario.id for scenario in test)

    _, expected = evaluate(pack, solution_policy, split="test")
    for result in expected:
        trace = found[result.scenario]
        if result.scenario == FAILING:
            # The model's server failed under this rollout: it is not scored.
            assert trace["errors"], trace["rewards"]
            assert "500" in json.dumps(trace["errors"])
            assert trace["rewards"].get("grade") is None
            continue
        assert trace["errors"] == [], trace["errors"]
        rewards = trace["rewards"]
        assert rewards["grade"] == {"score": result.score, "weight": 1.0}, result.scenario
        assert result.score == 1.0
        checks = {name: value for name, value in rewards.items() if name.startswith("check: ")}
        assert len(checks) == len(result.checks)
        assert {name.removeprefix("check: ").split(" #")[0] for name in checks} == {
            check["name"] for check in result.checks
        }
        assert all(value["weight"] == 0.0 for value in checks.values())
        assert trace["metrics"]["passed"] == 1.0
        summary = trace["info"]["seahaven"]
        assert summary["seed"] == result.seed and summary["score"] == result.score
        # The script submits with the tool, unless the scenario's user ends the conversation.
        ended_by = "user" if result.ended_by == "user" else "submit"
        assert summary["ended_by"] == ended_by, result.scenario
        assert trace["metrics"]["submitted"] == (1.0 if ended_by == "submit" else 0.0)
    # Every rollout's instance is gone, the one that failed included.
    assert instances_left(tmp_path) == []
