"""A model API that fails: tried again as it says, recorded, and errored when it never answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from seahaven_agents import ChatAgent
from seahaven_agents.testing import (
    ScriptedChatServer,
    answer,
    call,
    drop,
    error,
    flaky,
    hang,
    solution_script,
    tool_calls,
)

from seahaven.evaluation import EvalStopped, evaluate, in_process, read_transcripts
from seahaven.scenarios import ScenarioSet

Start = Callable[..., ScriptedChatServer]
QUESTION = "outstanding-usd"


def model_events(path: Path) -> list[dict[str, Any]]:
    [line] = read_transcripts(path).values()
    return [event for event in line["events"] if event["type"] in ("model", "model_failure")]


def test_a_429_is_tried_again_after_its_retry_after(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(
        [
            error(429, "rate limited", retry_after=0.05),
            tool_calls(call("list_invoices", {"status": "payment_failed", "currency": "usd"})),
            answer("1600"),
        ]
    )
    kept = tmp_path / "t.jsonl"
    summary, [result] = evaluate(
        company,
        ChatAgent("scripted", base_url=server.url),
        scenarios=[QUESTION],
        transcripts=kept,
    )
    assert result.passed and not result.errored
    assert result.usage is not None and result.usage["retries"] == 1
    [retry] = model_events(kept)[0]["retries"]
    # The wait is the server's Retry-After, as recorded: not measured.
    assert retry["status"] == 429 and retry["retry_after"] == 0.05 and retry["wait"] == 0.05
    assert "rate limited" in retry["error"]
    assert len(server.requests) == 3 and summary.usage["retries"] == 1


def test_5xx_and_dropped_connections_are_tried_again_with_backoff(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(
        [
            error(500),
            drop(),
            error(503, headers={"x-should-retry": "true"}),
            answer("1600"),
        ]
    )
    kept = tmp_path / "t.jsonl"
    agent = ChatAgent("scripted", base_url=server.url, retry_backoff=0.01)
    _, [result] = evaluate(company, agent, scenarios=[QUESTION], transcripts=kept)
    assert result.answer == "1600" and not result.errored
    retries = model_events(kept)[0]["retries"]
    assert [retry.get("status") for retry in retries] == [500, None, 503]
    assert "connection to the model failed" in retries[1]["error"]
    assert all(0 < retry["wait"] <= 0.04 for retry in retries)  # doubling from 0.01, jittered


def test_a_request_the_server_refuses_is_not_tried_again_and_the_trial_is_errored(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted([error(404, "the model 'scripted' does not exist")])
    kept = tmp_path / "t.jsonl"
    summary, [result] = evaluate(
        company,
        ChatAgent("scripted", base_url=server.url),
        scenarios=[QUESTION],
        transcripts=kept,
    )
    assert result.errored and result.error is not None and result.error.kind == "model"
    assert "failed after 1 attempt: 404" in result.error.message
    assert "does not exist" in result.error.message
    assert len(server.requests) == 1 and summary.errored == 1
    [failure] = model_events(kept)
    assert failure["type"] == "model_failure" and len(failure["retries"]) == 1


def test_a_model_that_never_answers_is_errored_not_failed(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(lambda request: hang())
    agent = ChatAgent("scripted", base_url=server.url, timeout=0.3, max_retries=1)
    out, kept = tmp_path / "r.jsonl", tmp_path / "t.jsonl"
    with pytest.raises(EvalStopped, match=r"model: the model scripted@127\.0\.0\.1 failed after 2"):
        evaluate(
            company,
            agent,
            scenarios=["outstanding-usd", "outstanding-eur", "paid-invoice-count"],
            out=out,
            transcripts=kept,
            max_consecutive_errors=2,
            runner=in_process(concurrency=1),
        )
    results = out.read_text().splitlines()
    assert len(results) == 2  # stopped after two errored trials in a row
    for line in read_transcripts(kept).values():
        assert line["errored"] is True and line["score"] == 0.0
        failure = line["events"][-1]
        assert failure["type"] == "model_failure"
        assert [r["error"] for r in failure["retries"]] == ["the model did not answer in time"] * 2


def test_a_retry_after_longer_than_the_limit_is_not_waited_for(
    company: ScenarioSet, scripted: Start
) -> None:
    server = scripted([error(429, retry_after=3600)])
    _, [result] = evaluate(
        company, ChatAgent("scripted", base_url=server.url), scenarios=[QUESTION]
    )
    assert result.errored and "failed after 1 attempt: 429" in (result.error.message or "")
    assert len(server.requests) == 1


def test_a_flaky_server_costs_retries_and_not_a_single_score(
    company: ScenarioSet, scripted: Start
) -> None:
    server = scripted(flaky(solution_script(company), every=4, status=429, retry_after=0.01))
    summary, results = evaluate(
        company,
        ChatAgent("scripted", base_url=server.url),
        split="test",
        runner=in_process(concurrency=8),
    )
    assert summary.mean == 1.0 and summary.errored == 0
    assert summary.usage["retries"] > 0
    assert sum((r.usage or {}).get("retries", 0) for r in results) == summary.usage["retries"]
