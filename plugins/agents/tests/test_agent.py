"""``ChatAgent`` and its loop, against the scripted server through the real ``openai`` client."""

from __future__ import annotations

import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from seahaven_agents import AgentLoop, ChatAgent, ModelClient, function_schemas
from seahaven_agents.testing import (
    ChatRequest,
    Reply,
    ScriptedChatServer,
    answer,
    call,
    solution_script,
    tool_calls,
)

import seahaven
from seahaven.evaluation import evaluate, in_process, read_transcripts
from seahaven.scenarios import ScenarioSet

Start = Callable[..., ScriptedChatServer]
QUESTION = "outstanding-usd"  # list_invoices, then the answer 1600


def agent(server: ScriptedChatServer, **options: Any) -> ChatAgent:
    return ChatAgent("scripted", base_url=server.url, **options)


def run(
    pack: ScenarioSet, policy: Any, tmp_path: Path, **options: Any
) -> tuple[Any, list[Any], dict[tuple[str, str, int], dict[str, Any]]]:
    kept = tmp_path / "t.jsonl"
    summary, results = evaluate(pack, policy, transcripts=kept, **options)
    return summary, results, read_transcripts(kept)


def test_the_reference_solutions_played_by_a_model_score_1_on_the_whole_pack(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    # Several tool calls in one turn, and the answers through the submit tool.
    server = scripted(solution_script(company, calls_per_turn=3, submit_with_tool=True))
    summary, results, transcripts = run(
        company, agent(server), tmp_path, runner=in_process(concurrency=16)
    )
    assert summary.mean == 1.0 and summary.errored == 0 and len(results) == len(company)
    assert summary.usage["model_calls"] == len(server.requests)
    several = [
        event
        for line in transcripts.values()
        for event in line["events"]
        if event["type"] == "model" and len(event["reply"].get("tool_calls") or ()) > 1
    ]
    assert several, "no turn made several tool calls"


def test_the_model_sees_the_instructions_the_tools_and_the_policy_document(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(solution_script(company))
    company.policy = "Refunds above 10,000 need a second approver."  # type: ignore[attr-defined]
    try:
        evaluate(company, agent(server), scenarios=[QUESTION])
    finally:
        del company.policy  # type: ignore[attr-defined]
    first = server.requests[0]
    assert first.instructions == company.get(QUESTION).instructions
    assert first.system is not None and "Refunds above 10,000" in first.system
    assert first.tools[-1] == "submit" and "list_invoices" in first.tools
    evaluate(company, agent(server, system_prompt="Be brief."), scenarios=[QUESTION])
    assert server.requests[-1].system == "Be brief."


def recovering(request: ChatRequest) -> Reply:
    """Three invalid calls in one turn; then, told what was wrong, the right call and answer."""
    if request.turn == 0:
        return tool_calls(
            call("list_invoice", {"status": "payment_failed"}),  # no such tool
            call("list_invoices", '{"status": "payment_failed",'),  # not JSON
            call("list_invoices", "[1, 2]"),  # JSON, not an object
        )
    if request.turn == 1:
        errors = [result["error"]["message"] for result in request.tool_results]
        assert "did you mean list_invoices" in errors[0]
        assert "are not JSON" in errors[1] and "not an object" in errors[2]
        return tool_calls(call("list_invoices", {"status": "payment_failed", "currency": "usd"}))
    return answer("$1,600.00")


def test_calls_that_cannot_be_made_go_back_to_the_model_which_recovers(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(recovering)
    summary, results, transcripts = run(company, agent(server), tmp_path, scenarios=[QUESTION])
    assert summary.mean == 1.0 and results[0].calls == 1  # invalid calls spend no budget
    events = transcripts[("company", QUESTION, 0)]["events"]
    invalid = [event for event in events if event["type"] == "invalid_call"]
    assert [event["tool"] for event in invalid] == [
        "list_invoice",
        "list_invoices",
        "list_invoices",
    ]
    assert invalid[1]["arguments"] == '{"status": "payment_failed",'


def test_a_model_that_never_gets_it_right_fails_and_is_not_errored(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(lambda request: tool_calls(call("list_invoices", "{oops")))
    summary, results, _ = run(company, agent(server, max_turns=4), tmp_path, scenarios=[QUESTION])
    [result] = results
    assert not result.passed and not result.errored and result.error is None
    assert len(server.requests) == 4 and result.usage is not None
    assert result.usage["model_calls"] == 4 and summary.errored == 0


def test_a_refusal_goes_back_with_the_worlds_code_and_message(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    def script(request: ChatRequest) -> Reply:
        if request.turn == 0:
            return tool_calls(call("get_invoice", {"invoice_id": "inv_0000000000000000"}))
        return answer("no such invoice")

    server = scripted(script)
    _, results, transcripts = run(company, agent(server), tmp_path, scenarios=[QUESTION])
    [refusal] = server.requests[1].tool_results
    assert set(refusal["error"]) == {"code", "message", "details"}
    assert refusal["error"]["code"] and refusal["error"]["message"]
    events = transcripts[("company", QUESTION, 0)]["events"]
    tool = next(event for event in events if event["type"] == "tool")
    assert tool["refusal"]["code"] == refusal["error"]["code"]
    assert results[0].answer == "no such invoice" and not results[0].passed


def test_the_answer_in_plain_text_is_submitted_and_an_empty_one_is_not(
    company: ScenarioSet, scripted: Start
) -> None:
    server = scripted([answer("1600")])
    _, [result] = evaluate(company, agent(server), scenarios=[QUESTION])
    assert result.ended_by == "submit" and result.answer == "1600"
    quiet = scripted([answer("   ")])
    _, [silent] = evaluate(company, agent(quiet), scenarios=[QUESTION])
    assert silent.ended_by == "finish" and silent.answer is None


def test_at_max_turns_the_episode_is_graded_as_it_stands(
    company: ScenarioSet, scripted: Start
) -> None:
    server = scripted(lambda request: tool_calls(call("whoami")))
    _, [result] = evaluate(company, agent(server, max_turns=3), scenarios=[QUESTION])
    assert len(server.requests) == 3 and result.calls == 3 and result.ended_by == "finish"
    # The budget ends a trial before max_turns when it is spent first (6 calls here).
    spender = scripted(lambda request: tool_calls(*[call("whoami")] * 4))
    _, [spent] = evaluate(company, agent(spender), scenarios=[QUESTION])
    assert spent.ended_by == "budget" and len(spender.requests) == 2


def test_the_agent_names_its_model_and_host_and_never_its_key(scripted: Start) -> None:
    server = scripted([])
    secret = "sk-seahaven-agent-test-0123456789abcdef"
    named = agent(server, api_key=secret)
    assert named.describe() == "chat:scripted@127.0.0.1"
    assert secret not in repr(named) and secret not in repr(named.client)
    assert secret not in named.describe()
    assert named.client.scrub(f"Incorrect API key provided: {secret}.") == (
        "Incorrect API key provided: [API key]."
    )


def test_a_hosted_model_without_a_key_is_refused_before_any_trial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(seahaven.WorldBug, match="set the environment variable OPENAI_API_KEY"):
        ChatAgent("gpt-4.1-mini")
    # A server of one's own needs none; a variable named on purpose must be set.
    assert ChatAgent("local", base_url="http://127.0.0.1:8000/v1").describe()
    with pytest.raises(seahaven.WorldBug, match="MY_KEY"):
        ChatAgent("local", base_url="http://127.0.0.1:8000/v1", api_key_env="MY_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert ChatAgent("local").describe() == "chat:local@127.0.0.1"
    with pytest.raises(seahaven.WorldBug, match="not an http:// or https:// address"):
        ChatAgent("m", base_url="ftp://user:hunter2@example.com/v1")
    for bad in ({"max_turns": 0}, {"max_retries": -1}, {"timeout": 0}, {"temperature": "hot"}):
        with pytest.raises(seahaven.WorldBug):
            ChatAgent("m", base_url="http://127.0.0.1:9/v1", **bad)


def test_a_custom_loop_overrides_a_hook_and_keeps_the_rest(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    class NoLookups(AgentLoop):
        """Refuses list_* calls itself, before the world sees them."""

        async def run_tool(self, session: Any, tool: str, arguments: dict[str, Any]) -> str:
            if tool.startswith("list_"):
                return json.dumps({"error": {"code": "not_here", "message": "no listing"}})
            return await super().run_tool(session, tool, arguments)

    server = scripted(solution_script(company))
    model = ModelClient("scripted", base_url=server.url)

    async def play(session: Any) -> None:
        await NoLookups(model, max_turns=5).play(session)

    _, results, transcripts = run(company, play, tmp_path, scenarios=[QUESTION])
    assert results[0].calls == 0  # the world never saw the listing
    assert server.requests[1].tool_results[0]["error"]["code"] == "not_here"
    models = [e for e in transcripts[("company", QUESTION, 0)]["events"] if e["type"] == "model"]
    assert len(models) == 2 and models[1]["extends"] == 0


def test_tool_names_the_api_refuses_are_shown_cleaned_and_mapped_back() -> None:
    schemas, names = function_schemas(
        [
            {"name": "payments.create_charge", "description": "d", "input_schema": {}},
            {"name": "ok_name", "input_schema": {"type": "object"}},
        ]
    )
    assert [s["function"]["name"] for s in schemas] == ["payments_create_charge", "ok_name"]
    assert names.tool("payments_create_charge") == "payments.create_charge"
    assert names.tool("payments.create_charge") is None
    with pytest.raises(seahaven.WorldBug, match="would both be shown to the model"):
        function_schemas([{"name": "a.b"}, {"name": "a_b"}])


def test_the_agent_travels_to_another_process_without_its_connections(
    company: ScenarioSet, scripted: Start
) -> None:
    # A runner on a cluster pickles the policy; what is bound to an event loop stays behind.
    server = scripted(solution_script(company))
    original = agent(server)
    evaluate(company, original, scenarios=[QUESTION])
    copied = pickle.loads(pickle.dumps(original))
    assert copied.describe() == original.describe() and copied.loop.model is copied.client
    _, [result] = evaluate(company, copied, scenarios=[QUESTION])
    assert result.passed
