"""``seahaven eval airline --model A --user-model U --trials 4``: tau2-bench run as its authors do.

An agent model and a user model, both answered by the scripted server: the
agent plays each task's gold actions (``solution_script``) and the user model
plays the task's customer (``user_script``), so every trial passes, graded by
the pack's own grader (the gold actions' end state, the facts to tell). The
agent is given the domain's policy document; the user model the task's
instructions, never the agent's tools.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from seahaven_agents.testing import ScriptedChatServer, for_roles, solution_script, user_script

from seahaven.scenarios import SUBMIT_TOOL, load_pack

Start = Callable[..., ScriptedChatServer]
# A cancellation (writes: a refund per payment and the status) and a look-up that writes nothing.
SCENARIOS = ["task-7", "task-1"]


def test_eval_of_the_airline_pack_with_an_agent_and_a_user_model(
    scripted: Start, tmp_path: Path
) -> None:
    pack = load_pack("airline")
    server = scripted(for_roles(agent=solution_script(pack), user=user_script(pack)))
    picked = [option for scenario in SCENARIOS for option in ("--scenario", scenario)]
    ran = subprocess.run(
        [
            sys.executable, "-m", "seahaven.cli", "eval", "airline",
            "--model", "scripted", "--base-url", server.url, "--user-model", "scripted-user",
            *picked, "--trials", "4", "-j", "4", "--out", "r.jsonl",
        ],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env=dict(os.environ),
        check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    results = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert sorted((result["scenario"], result["trial"]) for result in results) == sorted(
        (scenario, trial) for scenario in SCENARIOS for trial in range(4)
    )
    assert all(result["passed"] and result["score"] == 1.0 for result in results), results
    assert {result["user"] for result in results} == {"chat:scripted-user@127.0.0.1"}
    assert all(result["user_tokens"]["model_calls"] >= 2 for result in results)
    agents = [request for request in server.requests if SUBMIT_TOOL in request.tools]
    users = [request for request in server.requests if SUBMIT_TOOL not in request.tools]
    assert agents and users
    # The agent works under the domain's policy; the customer never sees the agent's tools.
    assert all("# Airline Agent Policy" in (request.system or "") for request in agents)
    assert not any("cancel_reservation" in request.tools for request in users)
