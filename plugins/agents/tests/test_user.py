"""``ModelUser``: a model plays the scenarios' users, against the scripted server.

One scripted server answers both sides (``for_roles``): the agent's requests
from the reference solutions (``solution_script``), the user's from each
scenario's own script (``user_script``), as a model would that kept to it. So
the company pack's conversations play to a pass with a model-played user, its
tokens counted apart from the agent's, and each trial replays exactly from its
transcript.
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from seahaven_agents import ChatAgent, ModelUser, ModelUserPlayer
from seahaven_agents.testing import (
    ChatRequest,
    Reply,
    ScriptedChatServer,
    answer,
    call,
    error,
    for_roles,
    hang,
    instructions_of,
    solution_script,
    tool_calls,
    user_script,
)

import seahaven
from seahaven.evaluation import (
    TrialResult,
    conversation,
    evaluate,
    in_process,
    read_transcripts,
    replay_transcripts,
)
from seahaven.evaluation.report import load_run
from seahaven.scenarios import MESSAGE_USER_TOOL, ScenarioSet, Trial

Start = Callable[..., ScriptedChatServer]
REFUND = "verify-then-refund-globex"  # a scripted customer, asked for their email and invoice
PORTAL = "hooli-card-in-portal"  # dual control: the customer adds a card in the portal


def conversations(pack: ScenarioSet) -> list[str]:
    return [scenario.id for scenario in pack if scenario.user is not None]


def both(pack: ScenarioSet) -> Callable[[ChatRequest], Reply]:
    return for_roles(agent=solution_script(pack), user=user_script(pack))


def user(server: ScriptedChatServer, **options: Any) -> ModelUser:
    return ModelUser("scripted-user", base_url=server.url, **options)


def agent(server: ScriptedChatServer) -> ChatAgent:
    return ChatAgent("scripted", base_url=server.url)


def test_a_model_played_user_answers_and_its_tokens_are_apart_from_the_agents(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(both(company))
    out, kept = tmp_path / "r.jsonl", tmp_path / "r.transcripts.jsonl"
    summary, [result] = evaluate(
        company, agent(server), scenarios=[REFUND], out=out, transcripts=kept, user=user(server)
    )
    assert result.passed and result.user == "chat:scripted-user@127.0.0.1"
    users = [request for request in server.requests if "submit" not in request.tools]
    agents = [request for request in server.requests if "submit" in request.tools]
    assert len(users) == 3 and len(agents) == 5  # three messages to the user, five agent turns
    instructions = company.get(REFUND).user.instructions  # type: ignore[union-attr]
    # The user's model sees the user's instructions and the agent's words; the agent never
    # sees the instructions.
    assert instructions_of(users[0]) == instructions.strip()
    assert users[0].messages[-1] == {
        "role": "user",
        "content": company.get(REFUND).solution[0].arguments["text"],  # type: ignore[index]
    }
    assert not any(instructions in str(request.body) for request in agents)
    # Tokens: the agent's in usage, the user's in user_tokens, each its own model calls.
    assert result.usage is not None and result.user_tokens is not None
    assert result.usage["model_calls"] == 5 and result.user_tokens["model_calls"] == 3
    assert result.user_tokens["total_tokens"] == sum(
        int(message["tokens"]["total_tokens"])
        for message in result.conversation
        if message["speaker"] == "user"
    )
    assert summary.user_usage["model_calls"] == 3 and summary.usage["model_calls"] == 5
    line = read_transcripts(kept)[("company", REFUND, 0)]
    speakers = [event["speaker"] for event in line["events"] if event["type"] == "model"]
    assert speakers == ["agent", "user", "agent", "user", "agent", "agent", "agent", "user"]
    assert line["usage"]["model_calls"] == 5 and line["user_usage"]["model_calls"] == 3
    # A user request extends the user's earlier one, never the agent's.
    last_user = max(i for i, event in enumerate(line["events"]) if event.get("speaker") == "user")
    rebuilt = conversation(line["events"], last_user)
    assert rebuilt[0]["content"] == users[-1].messages[0]["content"]
    assert [m["role"] for m in rebuilt] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    text = load_run(out).render()
    assert "the simulated users: tokens" in text and "on the simulated users' model" in text


def test_agent_and_user_models_play_every_company_conversation_to_a_pass(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(both(company))
    kept = tmp_path / "t.jsonl"
    summary, results = evaluate(
        company,
        agent(server),
        scenarios=conversations(company),
        trials=2,
        transcripts=kept,
        user=user(server),
        runner=in_process(concurrency=4),
    )
    assert len(results) == 20 and summary.mean == 1.0 and summary.errored == 0
    assert all(result.user_tokens and result.user_tokens["model_calls"] for result in results)
    # Dual control: the model-played customer added the card in the portal, as the user.
    line = read_transcripts(kept)[("company", PORTAL, 0)]
    [added] = [
        event
        for event in line["events"]
        if event.get("speaker") == "user" and event["type"] == "tool"
    ]
    assert added["tool"] == "portal_add_card" and added["result"]["last4"] == "4444"
    portal = next(result for result in results if result.scenario == PORTAL)
    first_reply = next(m for m in portal.conversation if m["speaker"] == "user")
    assert first_reply["calls"] == [0]  # the card added before the first reply, as call 0


def test_a_user_model_failing_past_its_retries_is_errored_not_the_agents(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    def down(request: ChatRequest) -> Reply:
        if "submit" in request.tools:
            return solution_script(company)(request)
        return error(500, "the user's model is down")

    server = scripted(down)
    kept = tmp_path / "t.jsonl"
    summary, [result] = evaluate(
        company,
        agent(server),
        scenarios=[REFUND],
        transcripts=kept,
        user=user(server, max_retries=2, retry_backoff=0.01),
    )
    assert result.errored and not result.passed and result.error is not None
    assert result.error.kind == "user_model"
    assert "failed after 3 attempts" in result.error.message and "500" in result.error.message
    assert summary.errored == 1 and summary.mean == 0.0
    line = read_transcripts(kept)[("company", REFUND, 0)]
    [failure] = [event for event in line["events"] if event["type"] == "model_failure"]
    assert failure["speaker"] == "user" and len(failure["retries"]) == 3
    assert line["usage"].get("retries") is None  # the agent's model never failed
    assert line["user_usage"]["retries"] == 3


def test_a_trial_with_a_model_played_user_replays_exactly_from_its_transcript(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(both(company))
    kept = tmp_path / "t.jsonl"
    scenarios = [REFUND, PORTAL, "manager-changes-mind"]
    _, first = evaluate(
        company, agent(server), scenarios=scenarios, trials=2, transcripts=kept, user=user(server)
    )
    asked = len(server.requests)
    _, again = replay_transcripts(company, kept, out=tmp_path / "again.jsonl")
    assert len(server.requests) == asked  # no model was asked
    assert len(again) == 6 and all(result.passed for result in again)

    def same(result: TrialResult) -> tuple[Any, ...]:
        texts = [
            (m["speaker"], m["text"], m.get("calls"), m.get("stop")) for m in result.conversation
        ]
        return (result.key, result.state_sha256, result.score, result.checks, texts)

    assert [same(result) for result in again] == [same(result) for result in first]
    assert {result.user for result in again} == {"replay:chat:scripted-user@127.0.0.1"}
    assert {result.policy for result in again} == {"replay:chat:scripted@127.0.0.1"}


def test_a_live_agent_against_the_recorded_user_replays_too(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    # The agent's model asked again, the user's words from the transcript: the same episode.
    server = scripted(both(company))
    kept = tmp_path / "t.jsonl"
    _, [first] = evaluate(
        company, agent(server), scenarios=[PORTAL], transcripts=kept, user=user(server)
    )
    from seahaven.evaluation import RecordedUsers

    only_agent = scripted(solution_script(company))
    _, [again] = evaluate(company, agent(only_agent), scenarios=[PORTAL], user=RecordedUsers(kept))
    assert again.state_sha256 == first.state_sha256 and again.passed


def test_user_turns_wait_off_the_event_loop_so_trials_go_on_beside_them(
    company: ScenarioSet, scripted: Start
) -> None:
    # Each of four trials' first user turn waits until all four are waiting at once: only
    # trials whose user turns do not hold the event loop get there.
    gate = threading.Barrier(4, timeout=60)
    plays = user_script(company)

    def together(request: ChatRequest) -> Reply:
        if len([m for m in request.messages if m.get("role") == "user"]) == 1:
            try:
                gate.wait()
            except threading.BrokenBarrierError:
                return error(400, "the user turns did not wait side by side")
        return plays(request)

    server = scripted(for_roles(agent=solution_script(company), user=together))
    summary, results = evaluate(
        company,
        agent(server),
        scenarios=[REFUND],
        trials=4,
        user=user(server, max_retries=0),
        runner=in_process(concurrency=4),
    )
    assert summary.errored == 0 and all(result.passed for result in results)


def test_a_trial_given_up_while_its_user_waits_is_a_timeout(
    company: ScenarioSet, scripted: Start
) -> None:
    def stuck(request: ChatRequest) -> Reply:
        return solution_script(company)(request) if "submit" in request.tools else hang()

    server = scripted(stuck)
    _, [result] = evaluate(
        company,
        agent(server),
        scenarios=[REFUND],
        user=user(server, timeout=5, max_retries=3, retry_backoff=0.01),
        runner=in_process(trial_timeout=1),
    )
    assert result.error is not None and result.error.kind == "timeout" and not result.errored
    # The user's model call was given up with the trial: it was not tried again.
    assert len([request for request in server.requests if "submit" not in request.tools]) == 1


def test_a_model_user_plays_in_a_trial_of_its_own_and_travels_pickled(
    company: ScenarioSet, scripted: Start
) -> None:
    server = scripted(user_script(company))
    original = user(server)
    scenario = company.get(REFUND)
    copied = pickle.loads(pickle.dumps(original))
    assert copied.describe() == original.describe() == "chat:scripted-user@127.0.0.1"
    for source in (original, copied):
        player = source.player()
        assert isinstance(player, ModelUserPlayer) and player.waits is True
        with Trial(scenario, seed=1, user_player=player) as trial:
            for step in scenario.solution or ():
                trial.call(step.tool, **step.arguments)
            assert trial.grade is not None and trial.grade.passed
            assert trial.conversation[1]["text"] == "Sure, it's ap@globex.test."
            assert trial.cast is not None and trial.cast.user_tokens is not None
        assert [m["role"] for m in player.messages][:3] == ["system", "user", "assistant"]
        source.close()
    original.close()  # twice is nothing


def test_the_user_models_own_tools_go_through_the_turn_and_mistakes_go_back_to_it(
    company: ScenarioSet, scripted: Start
) -> None:
    scenario = company.get(PORTAL)

    def clumsy(request: ChatRequest) -> Reply:
        results = request.tool_results
        if not results:
            return tool_calls(
                call("list_invoices", {}),  # the agent's tool, not the user's
                call("portal_add_card", "{oops"),
            )
        if len(results) == 2:
            assert results[0]["error"]["code"] == "invalid_tool_call"
            return tool_calls(call("portal_list_cards", {"customer_email": "ap@hooli.test"}))
        return answer("I looked at my cards. ###STOP###")

    server = scripted(clumsy)
    with Trial(scenario, seed=1, user_player=user(server).player()) as trial:
        replied = trial.call(MESSAGE_USER_TOOL, text="Could you look at your cards?")
        assert replied == {"reply": "I looked at my cards.", "ended": True}
        calls = [(c.tool, c.actor) for c in trial.instance.call_log()]
        assert calls == [("portal_list_cards", "user")]


def test_bad_options_are_refused(scripted: Start) -> None:
    server = scripted([])
    for bad in ({"max_steps": 0}, {"max_retries": -1}, {"temperature": "warm"}, {"timeout": 0}):
        with pytest.raises(seahaven.WorldBug):
            ModelUser("m", base_url=server.url, **bad)
    secret = "sk-seahaven-user-test-0123456789abcdef"
    named = ModelUser("m", base_url=server.url, api_key=secret)
    assert secret not in repr(named) and secret not in named.describe()


def test_the_report_page_shows_the_users_model_calls_as_the_users(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    from seahaven.evaluation.report_html import run_page

    plays = user_script(company)

    def never_leaves(request: ChatRequest) -> Reply:
        reply = plays(request)
        return answer(reply.content.replace("###STOP###", "")) if reply.content else reply

    server = scripted(for_roles(agent=solution_script(company), user=never_leaves))
    out = tmp_path / "r.jsonl"
    evaluate(
        company,
        agent(server),
        scenarios=[PORTAL],
        out=out,
        transcripts=tmp_path / "r.transcripts.jsonl",
        user=user(server),
    )
    report = load_run(out)
    [failed] = report.failed()  # the user never ended the conversation
    assert [c["name"] for c in failed.checks if not c["passed"]] == [
        "the user ended the conversation"
    ]
    page = run_page(report)
    assert "simulated users&#x27; tokens" in page  # the card of the users' tokens, escaped
    assert '<span class="role">user (model)</span>' in page
    assert "<code>user: portal_add_card</code>" in page
    assert "agent, to the user" in page
