"""A session bound to a scenario over OpenEnv's production MCP: ``POST /mcp``, as a client posts it.

``openenv/session/create`` with a scenario starts the session's episode as
that scenario's trial. The session then answers as ``seahaven mcp --scenario``
does: ``initialize`` carries the scenario's instructions, the prompt
``scenario`` carries them too, ``tools/list`` ends with ``submit``, the budget
holds, ``submit``'s result is the grade, and the resource ``seahaven://trial``
holds the report, the grade among it, once the episode has ended.
"""

from __future__ import annotations

import json
from typing import Any

import company_world
from conftest import post_mcp

from seahaven.scenarios import SUBMIT_TOOL, find_scenario

REFERENCE = "company/refund-duplicate"


def rpc(server: Any, method: str, **params: Any) -> dict[str, Any]:
    return post_mcp(
        server.host, server.port, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    )


def result(server: Any, method: str, **params: Any) -> Any:
    answer = rpc(server, method, **params)
    assert "result" in answer, answer
    return answer["result"]


def test_a_bound_http_session_is_told_the_task_and_ends_with_its_grade(serving) -> None:
    server = serving(company_world.world)
    _, scenario = find_scenario(REFERENCE)
    session_id = result(server, "openenv/session/create", scenario=REFERENCE, seed=7)["session_id"]

    hello = result(server, "initialize", session_id=session_id)
    assert hello["instructions"] == scenario.instructions
    assert {"tools", "prompts", "resources"} <= set(hello["capabilities"])
    prompts = result(server, "prompts/list", session_id=session_id)["prompts"]
    assert [prompt["name"] for prompt in prompts] == ["scenario"]
    prompt = result(server, "prompts/get", session_id=session_id, name="scenario")
    assert prompt["messages"] == [
        {"role": "user", "content": {"type": "text", "text": scenario.instructions}}
    ]
    missing = rpc(server, "prompts/get", session_id=session_id, name="other")
    assert missing["error"]["code"] == -32602

    tools = result(server, "tools/list", session_id=session_id)["tools"]
    assert tools[-1]["name"] == SUBMIT_TOOL

    for step in scenario.solution or ():
        called = result(
            server, "tools/call", session_id=session_id, name=step.tool, arguments=step.arguments
        )
        assert called["isError"] is False and called["_meta"]["done"] is False

    submitted = result(
        server,
        "tools/call",
        session_id=session_id,
        name=SUBMIT_TOOL,
        arguments={"answer": "refunded"},
    )
    assert submitted["isError"] is False
    grade = submitted["structuredContent"]["grade"]
    assert grade["score"] == 1.0 and grade["passed"] is True
    assert all(check["why"] for check in grade["checks"])
    assert submitted["data"]["grade"] == grade  # where OpenEnv's MCPToolClient reads a result
    assert submitted["_meta"]["reward"] == 1.0 and submitted["_meta"]["ended_by"] == "submit"

    listed = result(server, "resources/list", session_id=session_id)["resources"]
    assert [entry["uri"] for entry in listed] == ["seahaven://trial"]
    read = result(server, "resources/read", session_id=session_id, uri="seahaven://trial")
    [contents] = read["contents"]
    report = json.loads(contents["text"])
    assert report["scenario"] == REFERENCE and report["seed"] == 7
    assert report["ended_by"] == "submit" and report["grade"] == grade

    late = result(
        server, "tools/call", session_id=session_id, name="pay_list_charges", arguments={}
    )
    assert late["isError"] is True and late["structuredContent"]["code"] == "episode_over"
    assert result(server, "openenv/session/close", session_id=session_id)["closed"] is True


def test_the_budget_ends_a_bound_http_session(serving) -> None:
    server = serving(company_world.world)
    _, scenario = find_scenario(REFERENCE)
    session_id = result(server, "openenv/session/create", scenario=REFERENCE)["session_id"]
    calls = [
        result(server, "tools/call", session_id=session_id, name="pay_list_charges", arguments={})
        for _ in range(scenario.budget)
    ]
    last = calls[-1]["_meta"]
    assert last["done"] is True and last["ended_by"] == "budget" and last["calls_left"] == 0
    assert last["grade"]["passed"] is False
    refused = result(
        server, "tools/call", session_id=session_id, name=SUBMIT_TOOL, arguments={"answer": "x"}
    )
    assert refused["isError"] is True and refused["structuredContent"]["code"] == "episode_over"
    read = result(server, "resources/read", session_id=session_id, uri="seahaven://trial")
    assert json.loads(read["contents"][0]["text"])["ended_by"] == "budget"


def test_an_unbound_session_keeps_the_dialect_it_had(serving) -> None:
    server = serving(company_world.world)
    session_id = result(server, "openenv/session/create")["session_id"]
    hello = result(server, "initialize", session_id=session_id)
    assert set(hello["capabilities"]) == {"tools"}
    assert rpc(server, "prompts/list", session_id=session_id)["error"]["code"] == -32601
    assert rpc(server, "resources/list", session_id=session_id)["error"]["code"] == -32601
