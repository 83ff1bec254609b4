"""A scenario with a scripted user and an event, played over ``/ws`` as in process.

``seahaven serve`` runs as its own process; OpenEnv's stock ``GenericEnvClient``
resets to the scenario (the reset says a user is there), lists the tools
(``message_user`` among them, the user's own tools not), plays the reference
conversation and reads the reward. The served trial's conversation and state
hash are the in-process trial's, byte for byte, and ``seahaven eval --url``
records the same conversation in each result.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import helpdesk
import pytest
from openenv import GenericEnvClient

import seahaven.openenv
from seahaven.evaluation import evaluate, solution_policy
from seahaven.scenarios import Trial

SERVE = (sys.executable, "-m", "seahaven.cli", "serve")
SERVED = re.compile(r"Serving world 'helpdesk' at (http://127\.0\.0\.1:\d+)")
SEED = 11


@contextmanager
def helpdesk_server(log: Path) -> Iterator[str]:
    """``seahaven serve`` of the help desk and its pack, as its own process."""
    with log.open("w") as out:
        process = subprocess.Popen(
            [*SERVE, "--world", "helpdesk:world", "--scenarios", "helpdesk:pack", "--port", "0"],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=Path(helpdesk.__file__).parent,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        deadline = time.monotonic() + 90
        while not (found := SERVED.search(log.read_text())):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield found.group(1)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def in_process(steps: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]], float | None]:
    """The state hash, conversation and reward of the same steps played in process."""
    scenario = helpdesk.pack.get("refund-and-roam")
    with Trial(scenario, seed=SEED, world=helpdesk.world) as trial:
        for step in steps:
            trial.call(step["tool"], **step["arguments"])
        trial.finish()
        return trial.state_sha256(), trial.conversation, trial.reward


def test_a_stock_client_plays_a_scripted_user_to_a_reward(tmp_path: Path) -> None:
    with (
        helpdesk_server(tmp_path / "serve.log") as base,
        GenericEnvClient(base_url=base).sync() as env,
    ):
        reset = env.reset(scenario="helpdesk/refund-and-roam", seed=SEED)
        metadata = reset.observation["metadata"]
        assert metadata["user"] is True
        listed = env.step({"type": "list_tools"})
        names = [tool["name"] for tool in listed.observation["tools"]]
        assert names == ["refund", "line_status", "post_notice", "message_user", "submit"]
        rewards, replies = [], []
        for step in helpdesk.SOLUTION:
            result = env.step(
                {"type": "call_tool", "tool_name": step["tool"], "arguments": step["arguments"]}
            )
            rewards.append(result.reward)
            if step["tool"] == "message_user":
                replies.append(result.observation["result"])
        assert rewards == [0.0, 0.0, 0.0, 0.0, 1.0]
        assert result.done is True
        assert result.metadata["ended_by"] == "user"
        assert replies[-1] == {"reply": "Thanks!", "ended": True}
        state = env.state()
    report = state["scenario"]
    assert report["ended_by"] == "user"
    assert report["events"] == [{"name": "outage", "at_call": 1, "error": None}]
    log = state["state"]["db"]["log"]
    assert [entry["actor"] for entry in log] == ["agent", "agent", "event:outage", "user"]
    here = in_process(helpdesk.SOLUTION)
    assert (report["state_sha256"], report["conversation"], 1.0) == here


def test_the_users_tool_is_refused_to_the_agent_over_the_wire(tmp_path: Path) -> None:
    with (
        helpdesk_server(tmp_path / "serve.log") as base,
        GenericEnvClient(base_url=base).sync() as env,
    ):
        env.reset(scenario="helpdesk/refund-and-roam", seed=SEED)
        refused = env.step(
            {"type": "call_tool", "tool_name": "phone_set_roaming", "arguments": {"on": True}}
        )
        assert refused.observation["error"] is not None
        assert refused.observation["metadata"]["seahaven_error"]["code"] == "unknown_tool"
        assert refused.observation["metadata"]["calls_left"] == 9
        # A rude agent refunds without asking: it never learns the PIN, and scores nothing.
        rude = env.step(
            {
                "type": "call_tool",
                "tool_name": "refund",
                "arguments": {"account_id": "a1", "cents": 2500, "pin": "0000"},
            }
        )
        assert rude.observation["metadata"]["seahaven_error"]["code"] == "NOT_VERIFIED"
        ended = env.step({"type": "finish"})
        assert (ended.reward, ended.done) == (0.0, True)


@pytest.fixture
def url(serving: Any) -> str:
    server: Any = serving(helpdesk.world, scenarios=[helpdesk.pack])
    return str(server.base_url)


def test_eval_against_the_served_world_records_the_same_conversation(url: str) -> None:
    _, local = evaluate(helpdesk.pack, solution_policy, trials=2)
    _, remote = evaluate(
        helpdesk.pack, solution_policy, trials=2, runner=seahaven.openenv.trial_runner(url)
    )
    assert [result.score for result in local + remote] == [1.0] * 4
    for here, there in zip(local, remote, strict=True):
        assert there.conversation == here.conversation
        assert there.state_sha256 == here.state_sha256
        assert there.ended_by == here.ended_by == "user"
        assert len(here.conversation) == 6
        assert here.user_tokens is None and there.user_tokens is None


def test_openenvs_harness_offers_a_task_the_tools_of_its_bound_session(url: str) -> None:
    from seahaven.openenv import ScenarioSessions

    sessions = ScenarioSessions(url)
    names = [tool.name for tool in sessions.tools_for("helpdesk/refund-and-roam")]
    assert names == ["refund", "line_status", "post_notice", "message_user", "submit"]
    # The world's own list, for a session bound to nothing, still has the customer's tool.
    assert "phone_set_roaming" in [tool.name for tool in sessions.tools()]
