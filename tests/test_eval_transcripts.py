"""Transcripts: each trial's exchange recorded by its session, written beside its result."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
from pathlib import Path
from typing import Any

import pytest
from grading_worlds import make_shop, shop_pack

import seahaven
from seahaven.evaluation import (
    LocalSession,
    PolicySession,
    Transcript,
    conversation,
    default_transcripts_path,
    evaluate,
    in_process,
    plan,
    read_transcripts,
    run_trial,
    solution_policy,
)


@pytest.fixture
def shop() -> seahaven.World:
    return make_shop()


def refused_then_solved(session: PolicySession) -> None:
    """A refused call first (an order that does not exist), then the reference solution."""
    with contextlib.suppress(seahaven.ToolError):
        session.call("set_status", order_id="nope", status="shipped")
    solution_policy(session)


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for text in path.read_text().splitlines()]


def test_each_trial_has_a_transcript_line_joined_to_its_result(
    shop: seahaven.World, tmp_path: Path
) -> None:
    out, kept = tmp_path / "r.jsonl", tmp_path / "t.jsonl"
    _, results = evaluate(shop_pack(shop), refused_then_solved, trials=2, out=out, transcripts=kept)
    recorded = {(line["scenario"], line["trial"]): line for line in lines(kept)}
    assert set(recorded) == {result.key for result in results}
    for result in results:
        line = recorded[result.key]
        assert line["pack"] == "shop" and line["seed"] == result.seed
        assert line["score"] == result.score and line["checks"] == result.checks
        assert line["policy"] == result.policy and line["errored"] is False
        refusal, *calls = line["events"]
        assert refusal["type"] == "tool" and refusal["tool"] == "set_status"
        assert refusal["refusal"]["code"] and "result" not in refusal
        assert [event["tool"] for event in calls if event["type"] == "tool"] == [
            step.tool
            for step in shop_pack(shop).get(result.scenario).solution or ()
            if step.tool != "submit"
        ]
    ship = recorded[("ship-ada", 0)]
    assert ship["tags"] == ["orders", "composed"]
    # The net change: one row per store the solution wrote, as the fold of the change log says.
    [spec] = plan(shop_pack(shop), scenarios=["ship-ada"])
    again = run_trial(spec, refused_then_solved, record=True)
    assert again.transcript is not None
    assert ship["changes"] == again.transcript.changes()
    assert {(c["world"], c["table"]) for c in ship["changes"]} == {
        ("main", "orders"),
        ("ledger", "entries"),
    }
    question = recorded[("ada-total", 0)]
    assert question["changes"] == [] and question["answer"] == "65.00"
    assert question["events"][-1] == {"type": "submit", "answer": "65.00"}
    # Only the owner may read a transcript: it holds whatever the agent and the tools said.
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


def test_the_transcripts_file_is_refused_like_the_results_file(
    shop: seahaven.World, tmp_path: Path
) -> None:
    out, kept = tmp_path / "r.jsonl", tmp_path / "t.jsonl"
    evaluate(shop_pack(shop), solution_policy, out=out, transcripts=kept)
    with pytest.raises(seahaven.WorldBug, match="already holds transcripts"):
        evaluate(shop_pack(shop), solution_policy, out=tmp_path / "other.jsonl", transcripts=kept)
    assert not (tmp_path / "other.jsonl").exists()
    with pytest.raises(seahaven.WorldBug, match="would both go to"):
        evaluate(shop_pack(shop), solution_policy, out=out, transcripts=out, resume=True)
    # A line cut short by a stop mid-write is dropped on resume, and the rest is appended.
    kept.write_text(kept.read_text() + '{"pack": "shop", "scen')
    evaluate(shop_pack(shop), solution_policy, trials=2, out=out, transcripts=kept, resume=True)
    assert len(lines(kept)) == 4
    assert default_transcripts_path("runs/r.jsonl") == Path("runs/r.transcripts.jsonl")


def test_a_runner_told_to_keep_none_writes_none(shop: seahaven.World, tmp_path: Path) -> None:
    kept = tmp_path / "t.jsonl"
    # An explicit in-process runner is told to record when transcripts are asked for.
    evaluate(shop_pack(shop), solution_policy, transcripts=kept, runner=in_process(concurrency=2))
    assert len(lines(kept)) == 2
    [spec, *_] = plan(shop_pack(shop))
    assert run_trial(spec, solution_policy).transcript is None


class ScriptedModel:
    """A policy that records model calls as a model-backed agent does, with token counts."""

    def __call__(self, session: PolicySession) -> None:
        assert isinstance(session, LocalSession)
        transcript = session.transcript
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "be careful"},
            {"role": "user", "content": session.instructions},
        ]
        for step in session.scenario.solution or ():
            reply = {"role": "assistant", "content": None, "tool_calls": [{"id": step.tool}]}
            transcript.model_call(
                messages,
                reply,
                model="m",
                usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                seconds=0.01,
                retries=[{"attempt": 1, "status": 429, "retry_after": 0.5, "wait": 0.5}],
            )
            messages = [*messages, reply]
            if step.tool == "submit":
                session.submit(step.arguments["answer"])
                return
            result = session.call(step.tool, **step.arguments)
            messages = [*messages, {"role": "tool", "content": json.dumps(result)}]


def test_model_calls_are_written_once_and_their_tokens_add_up(
    shop: seahaven.World, tmp_path: Path
) -> None:
    out, kept = tmp_path / "r.jsonl", tmp_path / "t.jsonl"
    summary, results = evaluate(shop_pack(shop), ScriptedModel(), out=out, transcripts=kept)
    ship = next(result for result in results if result.scenario == "ship-ada")
    assert ship.usage == {
        "prompt_tokens": 200,
        "completion_tokens": 20,
        "total_tokens": 220,
        "model_calls": 2,
        "retries": 2,
    }
    assert summary.usage["total_tokens"] == 220 + 220
    assert "tokens 440 (400 prompt, 40 completion) in 4 model calls, 4 retries" in summary.render()
    assert json.loads(out.read_text().splitlines()[0])["usage"]["model_calls"] == 2
    recorded = read_transcripts(kept)[("shop", "ship-ada", 0)]
    models = [(i, e) for i, e in enumerate(recorded["events"]) if e["type"] == "model"]
    (first_at, first), (second_at, second) = models
    assert first["extends"] is None and len(first["messages"]) == 2
    # The second request is the first's messages, its reply, and the tool's result: only that
    # last message is written, and the whole request is put back together from the reference.
    assert second["extends"] == first_at and [m["role"] for m in second["messages"]] == ["tool"]
    whole = conversation(recorded["events"], second_at)
    assert [m["role"] for m in whole] == ["system", "user", "assistant", "tool"]
    assert recorded["usage"]["retries"] == 2 and first["retries"][0]["retry_after"] == 0.5


def test_a_conversation_that_does_not_extend_the_last_is_written_whole() -> None:
    transcript = Transcript()
    transcript.model_call([{"role": "user", "content": "a"}], {"role": "assistant", "content": "b"})
    # A loop that rewrote its history (trimmed it, say): nothing to refer to.
    transcript.model_call([{"role": "user", "content": "c"}], {"role": "assistant", "content": "d"})
    assert transcript.events[1]["extends"] is None
    assert conversation(transcript.events, 1) == [{"role": "user", "content": "c"}]
    with pytest.raises(ValueError, match="not an earlier model call"):
        conversation([{"type": "model", "extends": 0, "messages": []}], 0)


def test_a_ctrl_c_between_a_result_and_its_transcript_waits_for_both(
    shop: seahaven.World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from seahaven.evaluation import ResultsFile

    written = ResultsFile.write

    def interrupted(self: ResultsFile, result: Any) -> None:
        written(self, result)
        # Ctrl-C, just after the result reached the disk and before its transcript did.
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(ResultsFile, "write", interrupted)
    out, kept = tmp_path / "r.jsonl", tmp_path / "t.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate(shop_pack(shop), solution_policy, trials=3, out=out, transcripts=kept)
    assert len(out.read_text().splitlines()) == 1 == len(kept.read_text().splitlines())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
