"""Who plays the users in an eval: user sources, the user's side of a transcript, replays.

``evaluate(..., user=SOURCE)`` gives each trial whose scenario has a user a
player of the source's; every result names the source. The user's own calls go
in the transcript as the ``user``'s, whoever plays the user, so that a trial
replays exactly from its transcript line (``RecordedUser``, ``RecordedAgent``,
``replay_transcripts``): the same state hash and the same grade. A player's
failure that is not the world's keeps its kind, and its trial is errored.
(The model-played user itself is the agents plugin's; its tests are there.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from people_worlds import SOLUTION, make_desk, scenario

import seahaven
from seahaven.evaluation import (
    RecordedAgent,
    RecordedUser,
    RecordedUsers,
    TrialFailure,
    TrialResult,
    evaluate,
    read_transcripts,
    replay_transcripts,
    solution_policy,
)
from seahaven.evaluation.report import load_run
from seahaven.scenarios import MESSAGE_USER_TOOL, ScenarioSet, Trial, UserContext, UserReply


@pytest.fixture
def pack() -> ScenarioSet:
    """The help desk's refund-and-roam scenario (a scripted customer with a phone)."""
    return ScenarioSet("desk", "1.0.0", [scenario(make_desk())])


def comparable(result: TrialResult) -> dict[str, Any]:
    """What a replay must give again: the episode, the grade, the conversation."""
    return {
        "state_sha256": result.state_sha256,
        "score": result.score,
        "passed": result.passed,
        "checks": result.checks,
        "calls": result.calls,
        "ended_by": result.ended_by,
        "answer": result.answer,
        "conversation": [
            {key: value for key, value in message.items() if key != "tokens"}
            for message in result.conversation
        ],
    }


def test_the_users_own_calls_are_in_the_transcript_as_the_users(
    pack: ScenarioSet, tmp_path: Path
) -> None:
    kept = tmp_path / "t.jsonl"
    evaluate(pack, solution_policy, transcripts=kept)
    [line] = read_transcripts(kept).values()
    calls = [
        (event["speaker"], event["tool"]) for event in line["events"] if event["type"] == "tool"
    ]
    assert calls == [
        ("agent", "message_user"),
        ("agent", "find_account"),
        ("agent", "message_user"),
        ("agent", "refund"),
        ("user", "phone_set_roaming"),  # made during the agent's message, before its reply
        ("agent", "message_user"),
        ("agent", "line_status"),
        ("agent", "message_user"),
    ]
    [roaming] = [event for event in line["events"] if event.get("speaker") == "user"]
    assert roaming["arguments"] == {"on": True} and roaming["result"] == {"roaming": "on"}
    speakers = [message["speaker"] for message in line["conversation"]]
    assert speakers == ["agent", "user"] * 4
    # The instance's third call (message_user is the trial's, not the world's).
    assert line["conversation"][5]["calls"] == [2]
    assert line["user"] is None and line["user_tokens"] is None and line["user_usage"] is None
    assert line["state_sha256"] and line["passed"] is True


def test_a_trial_replays_exactly_from_its_transcript(pack: ScenarioSet, tmp_path: Path) -> None:
    kept = tmp_path / "t.jsonl"
    _, first = evaluate(pack, solution_policy, trials=2, transcripts=kept)
    summary, again = replay_transcripts(pack, kept, out=tmp_path / "again.jsonl")
    assert [comparable(result) for result in again] == [comparable(result) for result in first]
    assert summary.mean == 1.0
    assert {result.policy for result in again} == {
        "replay:seahaven.evaluation.policies:solution_policy"
    }
    assert {result.user for result in again} == {"replay"}


def test_a_recorded_user_plays_in_a_trial_of_its_own(pack: ScenarioSet, tmp_path: Path) -> None:
    kept = tmp_path / "t.jsonl"
    _, [result] = evaluate(pack, solution_policy, transcripts=kept)
    player = RecordedUser.from_transcripts(kept, "desk", "refund-and-roam", 0)
    with Trial(pack.get("refund-and-roam"), seed=result.seed, user_player=player) as trial:
        for step in SOLUTION:
            if trial.done:
                break
            trial.call(step["tool"], **step["arguments"])
        assert trial.state_sha256() == result.state_sha256
        assert trial.grade is not None and trial.grade.passed
    with pytest.raises(seahaven.WorldBug, match="no transcript of desk/refund-and-roam #3"):
        RecordedUser.from_transcripts(kept, "desk", "refund-and-roam", 3)


def test_a_replay_that_leaves_the_record_is_errored(pack: ScenarioSet, tmp_path: Path) -> None:
    kept = tmp_path / "t.jsonl"
    evaluate(pack, solution_policy, transcripts=kept)

    def other_words(session: Any) -> None:
        session.call(MESSAGE_USER_TOOL, text="Hi! Which email is your account under?")

    _, [result] = evaluate(pack, other_words, user=RecordedUsers(kept))
    assert result.errored and result.error is not None and result.error.kind == "replay"
    assert "not the one the transcript of desk/refund-and-roam #0 recorded" in result.error.message

    # The agent recorded, asked for more than the record holds: the record ends there.
    lines = list(read_transcripts(kept).values())
    lines[0]["conversation"] = lines[0]["conversation"][:2]
    _, [cut] = evaluate(pack, RecordedAgent(lines), user=RecordedUsers(lines))
    assert cut.errored and cut.error is not None and cut.error.kind == "replay"
    assert "holds 1 user replies" in cut.error.message


class Spending:
    """A user source whose players spend tokens, and fail when told to."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.made = 0

    def describe(self) -> str:
        return "spending"

    def player(self, trial: Any = None, transcript: Any = None) -> Any:
        self.made += 1
        return SpendingPlayer(self.fail_on)


class SpendingPlayer:
    def __init__(self, fail_on: str | None) -> None:
        self.fail_on = fail_on

    def respond(self, turn: UserContext) -> UserReply:
        if self.fail_on is not None and self.fail_on in turn.message:
            raise TrialFailure("user_model", "the user's model is down")
        if "roaming" in turn.message:
            turn.call("phone_set_roaming", on=True)
        stop = "sorted" in turn.message
        reply = {"email": "It's maya@example.test.", "pin": "My PIN is 4321."}
        text = next((said for word, said in reply.items() if word in turn.message.lower()), "ok")
        return UserReply(text, stop=stop, tokens={"prompt_tokens": 10, "total_tokens": 12})


def test_a_user_source_plays_every_trials_user_and_its_tokens_are_apart(
    pack: ScenarioSet, tmp_path: Path
) -> None:
    source = Spending()
    out = tmp_path / "r.jsonl"
    summary, results = evaluate(pack, solution_policy, trials=2, out=out, user=source)
    assert source.made == 2
    assert {result.user for result in results} == {"spending"}
    assert all(result.passed for result in results)
    assert results[0].user_tokens == {"prompt_tokens": 40, "total_tokens": 48}
    assert results[0].usage is None  # the agent (a scripted policy) spent nothing
    assert summary.user_usage == {"prompt_tokens": 80, "total_tokens": 96}
    assert "the simulated users: tokens 96 (80 prompt" in summary.render()
    report = load_run(out)
    assert report.users == ("spending",)
    assert "users played by spending" in report.render()
    with pytest.raises(
        seahaven.WorldBug,
        match="users were played by 'spending', and this run's are played by the scenarios' own",
    ):
        evaluate(pack, solution_policy, trials=3, out=out, resume=True)

    class Other(Spending):
        def describe(self) -> str:
            return "other"

    with pytest.raises(seahaven.WorldBug, match="this run's are played by 'other'"):
        evaluate(pack, solution_policy, trials=3, out=out, resume=True, user=Other())
    summary, results = evaluate(pack, solution_policy, trials=3, out=out, resume=True, user=source)
    assert len(results) == 3 and source.made == 3  # the same source resumes: one trial more


def test_a_players_failure_that_is_not_the_worlds_keeps_its_kind(
    pack: ScenarioSet, tmp_path: Path
) -> None:
    kept = tmp_path / "t.jsonl"
    _, [result] = evaluate(pack, solution_policy, user=Spending(fail_on="PIN"), transcripts=kept)
    assert result.errored and result.error is not None
    assert (result.error.kind, result.error.message) == ("user_model", "the user's model is down")
    [line] = read_transcripts(kept).values()
    failed = [event for event in line["events"] if "failure" in event]
    assert [event["tool"] for event in failed] == [MESSAGE_USER_TOOL]


def test_what_is_not_a_user_source_and_a_runner_that_cannot_have_one_are_refused(
    pack: ScenarioSet,
) -> None:
    with pytest.raises(seahaven.WorldBug, match="is not a user source"):
        evaluate(pack, solution_policy, user=object())  # type: ignore[arg-type]

    def served(specs: Any, policy: Any) -> Any:
        raise AssertionError("no trial may start")

    with pytest.raises(seahaven.WorldBug, match="a served world plays each scenario's user"):
        evaluate(pack, solution_policy, user=Spending(), runner=served)


def test_transcript_events_say_whose_they_are(tmp_path: Path) -> None:
    from seahaven.evaluation import Transcript

    transcript = Transcript()
    first = [{"role": "system", "content": "agent"}, {"role": "user", "content": "task"}]
    agent = transcript.model_call(
        first, {"role": "assistant", "content": "a"}, usage={"total_tokens": 5}
    )
    asked = [{"role": "system", "content": "user"}, {"role": "user", "content": "hi"}]
    user = transcript.model_call(
        asked, {"role": "assistant", "content": "b"}, usage={"total_tokens": 3}, speaker="user"
    )
    again = transcript.model_call(
        [*asked, {"role": "assistant", "content": "b"}, {"role": "user", "content": "more"}],
        {"role": "assistant", "content": "c"},
        usage={"total_tokens": 4},
        speaker="user",
    )
    assert [transcript.events[i]["speaker"] for i in (agent, user, again)] == [
        "agent",
        "user",
        "user",
    ]
    assert transcript.events[again]["extends"] == user  # a user request extends the user's
    assert transcript.usage == {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 5,
        "model_calls": 1,
    }
    assert transcript.user_usage["total_tokens"] == 7 and transcript.user_usage["model_calls"] == 2
    with pytest.raises(seahaven.WorldBug, match="speaker is one of agent, user"):
        transcript.tool_call("x", {}, speaker="event")
    json.dumps(transcript.events)
