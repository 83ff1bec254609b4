"""``seahaven mcp WORLD --scenario PACK/ID``, driven by the ``mcp`` SDK's own client.

A bound episode gives the client the scenario's instructions (the handshake's
and a prompt's), the world's tools and ``submit`` (``Trial.tools()``), and its
budget. ``submit``'s result is the grade, readable afterwards as the resource
``seahaven://trial``; the call that spends the budget ends the episode with its
grade too, and every call after the end is refused with ``episode_over``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from conftest import BOUND_SECONDS, Server, connected, run_command
from mcp import types
from pydantic import AnyUrl

from seahaven.scenarios import SUBMIT_TOOL, Trial, find_scenario

REFERENCE = "company/refund-duplicate"


def payload(result: types.CallToolResult) -> Any:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)


async def report(session: Any) -> dict[str, Any]:
    read = await session.read_resource(AnyUrl("seahaven://trial"))
    [contents] = read.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.mimeType == "application/json"
    found: dict[str, Any] = json.loads(contents.text)
    return found


def test_a_client_plays_a_bound_scenario_to_its_grade(server_dirs: Callable[[], Server]) -> None:
    server = server_dirs()
    _, scenario = find_scenario(REFERENCE)
    with Trial(scenario, seed=7) as trial:
        expected_tools = trial.tools()

    async def play() -> None:
        async with connected(server, ["company", "--scenario", REFERENCE, "--seed", "7"]) as (
            session,
            handshake,
        ):
            with anyio.fail_after(BOUND_SECONDS):
                assert handshake.instructions == scenario.instructions
                assert handshake.capabilities.prompts is not None
                assert handshake.capabilities.resources is not None
                assert len(server.instance_dirs()) >= 1

                listed = (await session.list_tools()).tools
                assert [tool.name for tool in listed] == [t["name"] for t in expected_tools]
                assert listed[-1].name == SUBMIT_TOOL

                prompts = (await session.list_prompts()).prompts
                assert [prompt.name for prompt in prompts] == ["scenario"]
                prompt = await session.get_prompt("scenario")
                [message] = prompt.messages
                assert message.role == "user"
                assert isinstance(message.content, types.TextContent)
                assert message.content.text == scenario.instructions

                before = await report(session)
                assert before["scenario"] == REFERENCE and before["seed"] == 7
                assert before["grade"] is None and before["calls_left"] == scenario.budget

                for step in scenario.solution or ():
                    result = await session.call_tool(step.tool, dict(step.arguments))
                    assert result.isError is False, payload(result)
                    assert result.meta == {
                        "calls_left": before["calls_left"]
                        - 1
                        - list(scenario.solution or ()).index(step),
                        "done": False,
                    }

                submitted = await session.call_tool(
                    SUBMIT_TOOL, {"answer": "refunded the duplicate"}
                )
                assert submitted.isError is False
                answer = payload(submitted)
                assert answer["submitted"] is True
                grade = answer["grade"]
                assert grade["score"] == 1.0 and grade["passed"] is True
                assert grade["checks"] and all(check["why"] for check in grade["checks"])
                assert submitted.meta is not None
                assert submitted.meta["ended_by"] == "submit"
                assert submitted.meta["reward"] == 1.0
                assert submitted.meta["grade"] == grade

                after = await report(session)
                assert after["ended_by"] == "submit" and after["done"] is True
                assert after["grade"] == grade
                assert after["answer"] == "refunded the duplicate"

                late = await session.call_tool("pay_list_charges", {})
                assert late.isError is True
                assert payload(late)["code"] == "episode_over"

    anyio.run(play)
    assert server.instance_dirs() == []
    assert "seed" not in server.stderr  # the seed was given, so none was drawn


def test_the_call_that_spends_the_budget_ends_the_episode_with_its_grade(
    server_dirs: Callable[[], Server],
) -> None:
    server = server_dirs()
    _, scenario = find_scenario(REFERENCE)

    async def play() -> None:
        async with connected(server, ["--scenario", REFERENCE]) as (session, _):
            with anyio.fail_after(BOUND_SECONDS):
                results = [
                    await session.call_tool("pay_list_charges", {}) for _ in range(scenario.budget)
                ]
                assert all(result.isError is False for result in results)
                last = results[-1]
                assert last.meta is not None
                assert last.meta["done"] is True and last.meta["ended_by"] == "budget"
                assert last.meta["calls_left"] == 0
                assert last.meta["reward"] == 0.0 and last.meta["grade"]["passed"] is False

                refused = await session.call_tool(SUBMIT_TOOL, {"answer": "too late"})
                assert refused.isError is True
                assert payload(refused)["code"] == "episode_over"
                assert "budget" in payload(refused)["message"]

                ended = await report(session)
                assert ended["ended_by"] == "budget"
                assert ended["calls_made"] == scenario.budget
                assert ended["grade"] == last.meta["grade"]

    anyio.run(play)
    assert server.instance_dirs() == []
    assert "seahaven mcp: seed" in server.stderr  # none was given: one was drawn and said


def test_a_scenario_refuses_the_start_options_and_names_the_clash(
    server_dirs: Callable[[], Server],
) -> None:
    server = server_dirs()
    clash = run_command(["company", "--scenario", REFERENCE, "--fixture", "acme"], server)
    assert clash.returncode == 2
    assert "--scenario is not taken with --fixture" in " ".join(clash.stderr.split())

    unknown = run_command(["company", "--scenario", "company/no-such-task"], server)
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("error: ") and unknown.stderr.count("\n") == 1
    assert "no-such-task" in unknown.stderr

    other = run_command(["payments", "--scenario", REFERENCE], server)
    assert other.returncode == 1
    assert "runs on world 'company', not 'payments'" in other.stderr
    assert server.instance_dirs() == []
