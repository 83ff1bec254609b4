"""A scenario's simulated user: scripted turns, Python players, dual control, the conversation.

The agent reaches the user with ``message_user``; the user's own tools are
never offered to it, and every call the user makes is the ``user`` actor's. A
scripted user answers with the first unused turn whose ``when`` holds, after its
calls; ``stop`` ends the episode. The conversation is the trial's record, and a
trial with a scripted user replays exactly.
"""

from __future__ import annotations

from typing import Any

import pytest
from people_worlds import CUSTOMER, SOLUTION, make_desk, scenario

import seahaven
from seahaven.evaluation import check_scenario
from seahaven.scenarios import (
    MESSAGE_USER_TOOL,
    Scenario,
    ScriptedUser,
    Trial,
    User,
    UserContext,
    UserReply,
)


@pytest.fixture
def desk() -> seahaven.World:
    return make_desk()


def play(trial: Trial, steps: list[dict[str, Any]]) -> list[Any]:
    """Play steps as the agent; a refusal is kept as its code."""
    results: list[Any] = []
    for step in steps:
        try:
            results.append(trial.call(step["tool"], **step["arguments"]))
        except seahaven.ToolError as error:
            results.append(error.code)
    return results


def test_the_agent_sees_message_user_and_never_the_users_tools(desk: seahaven.World) -> None:
    with Trial(scenario(desk), seed=1) as trial:
        names = [tool["name"] for tool in trial.tools()]
        assert names[-2:] == [MESSAGE_USER_TOOL, "submit"]
        assert "phone_set_roaming" not in names and "phone_read_settings" not in names
        assert "line_status" in names
        # The user's tool is one the agent does not have; the call is counted all the same.
        with pytest.raises(seahaven.UnknownTool):
            trial.call("phone_set_roaming", on=True)
        assert trial.calls_made == 1
        assert trial.instance.call_count == 0, "never dispatched"


def test_the_reference_conversation_plays_to_a_pass(desk: seahaven.World) -> None:
    with Trial(scenario(desk), seed=1) as trial:
        results = play(trial, SOLUTION)
        assert results[0] == {"reply": "It's maya@example.test.", "ended": False}
        assert results[4] == {"reply": "Done, roaming is on now.", "ended": False}
        assert results[6] == {"reply": "Great, thank you!", "ended": True}
        assert trial.done and trial.ended_by == "user"
        grade = trial.grade
        assert grade is not None and grade.passed, grade.summary()
        assert [call.actor for call in trial.instance.call_log()] == [
            "agent",
            "agent",
            "user",
            "agent",
        ]
        conversation = trial.conversation
        assert [message["speaker"] for message in conversation] == ["agent", "user"] * 4
        assert conversation[5] == {
            "speaker": "user",
            "text": "Done, roaming is on now.",
            "at_call": 3,
            "calls": [2],
            "stop": False,
            "tokens": None,
        }
        assert conversation[4] == {
            "speaker": "agent",
            "text": "Please turn roaming on for me.",
            "at_call": 2,
        }
        with pytest.raises(seahaven.ToolError, match="the user ended the conversation"):
            trial.call("line_status")
        report = trial.report()
        assert report["conversation"] == conversation
        assert (report["user_tokens"], report["events"]) == (None, [])


def test_a_rude_agent_that_never_asks_fails(desk: seahaven.World) -> None:
    rude = [step for step in SOLUTION if step["tool"] != MESSAGE_USER_TOOL]
    with Trial(scenario(desk), seed=1) as trial:
        play(trial, rude)
        grade = trial.finish()
    assert not grade.passed
    failed = {check.name for check in grade.failed}
    assert "the user ended the conversation" in failed
    assert any(name.startswith("changed handset.settings") for name in failed)


def test_turns_answer_by_condition_then_in_order_and_fall_back(desk: seahaven.World) -> None:
    user = User.model_validate(
        {
            "instructions": "A patient customer.",
            "script": [
                {"when": {"contains": ["order", "number"]}, "reply": "It's 77."},
                {"reply": "First."},
                {"reply": "Second."},
                {"when": {"pattern": "^bye"}, "reply": "Bye.", "stop": True},
            ],
            "fallback": "Hm?",
        }
    )
    with Trial(scenario(desk, user=user, grader="user_ended", solution=None), seed=1) as trial:
        replies = [
            trial.call(MESSAGE_USER_TOOL, text=text)["reply"]
            for text in ("hello", "your ORDER number?", "again", "and?", "what number?")
        ]
        assert replies == ["First.", "It's 77.", "Second.", "Hm?", "Hm?"]
        assert trial.call(MESSAGE_USER_TOOL, text="Bye now")["ended"] is True
        assert trial.grade is not None and trial.grade.passed


def test_a_refusal_the_user_meets_is_in_the_call_log_and_the_reply_still_comes(
    desk: seahaven.World,
) -> None:
    user = {
        "instructions": "Forgets the phone's code.",
        "tools": ["phone_unlock"],
        "script": [{"calls": [{"tool": "phone_unlock", "arguments": {"code": "1234"}}],
                    "reply": "It will not unlock."}],
    }  # fmt: skip
    with Trial(scenario(desk, user=user, grader="user_ended", solution=None), seed=1) as trial:
        assert trial.call(MESSAGE_USER_TOOL, text="hi")["reply"] == "It will not unlock."
        [call] = trial.instance.call_log()
        assert (call.tool, call.actor, call.error) == (
            "phone_unlock",
            "user",
            "that is not the phone's code",
        )
        assert trial.conversation[1]["calls"] == [0]


def test_a_scripted_call_with_wrong_arguments_is_the_authors_bug(desk: seahaven.World) -> None:
    user = {
        "instructions": "x",
        "tools": ["phone_set_roaming"],
        "script": [{"calls": [{"tool": "phone_set_roaming", "arguments": {"on": "sideways"}}],
                    "reply": "ok"}],
    }  # fmt: skip
    with (
        Trial(scenario(desk, user=user, grader="user_ended", solution=None), seed=1) as trial,
        pytest.raises(seahaven.WorldBug, match=r"refund-and-roam.*script\[0\] calls "),
    ):
        trial.call(MESSAGE_USER_TOOL, text="hi")


@pytest.mark.parametrize(
    ("arguments", "loc"),
    [({}, "text"), ({"text": 3}, "text"), ({"text": "  "}, "text"), ({"text": "x", "to": 1}, "to")],
)
def test_message_user_refuses_what_is_not_a_message(
    desk: seahaven.World, arguments: dict[str, Any], loc: str
) -> None:
    with Trial(scenario(desk), seed=1) as trial:
        with pytest.raises(seahaven.ArgumentError) as raised:
            trial.call(MESSAGE_USER_TOOL, **arguments)
        assert [violation["loc"][0] for violation in raised.value.violations] == [loc]
        assert trial.calls_made == 1 and trial.conversation == []


def test_a_python_user_and_the_stop_marker(desk: seahaven.World) -> None:
    user = {"instructions": "An echo.", "python": "people_worlds:echo_user"}
    with Trial(scenario(desk, user=user, grader="user_ended", solution=None), seed=1) as trial:
        assert trial.call(MESSAGE_USER_TOOL, text="hello")["reply"] == (
            "You said: hello (1 messages so far)"
        )
        assert trial.call(MESSAGE_USER_TOOL, text="Goodbye") == {"reply": "Bye!", "ended": True}
        assert trial.grade is not None and trial.grade.passed


def test_an_async_player_is_awaited_and_its_tokens_kept_apart(desk: seahaven.World) -> None:
    user = {
        "instructions": "x",
        "tools": ["phone_set_roaming"],
        "python": "people_worlds:async_user",
    }
    with Trial(scenario(desk, user=user, grader="user_ended", solution=None), seed=1) as trial:
        trial.call(MESSAGE_USER_TOOL, text="roaming please")
        trial.call(MESSAGE_USER_TOOL, text="bye")
        report = trial.report()
    assert report["user_tokens"] == {"prompt_tokens": 14, "total_tokens": 18}
    assert report["conversation"][1]["tokens"] == {"prompt_tokens": 7, "total_tokens": 9}
    assert report["conversation"][1]["calls"] == [0]
    assert report["ended_by"] == "user"


def test_a_player_given_to_the_trial_plays_instead(desk: seahaven.World) -> None:
    class Polite:
        def __init__(self) -> None:
            self.seen: list[str] = []
            self.tools: list[dict[str, Any]] = []

        def respond(self, turn: UserContext) -> UserReply:
            self.seen.append(turn.instructions)
            self.tools = turn.tools
            assert [tool["name"] for tool in turn.tools] == [
                "phone_set_roaming",
                "phone_read_settings",
            ]  # the user's own, in the world's order
            return UserReply("Thank you kindly.", stop=True)

    player = Polite()
    with Trial(scenario(desk), seed=1, user_player=player) as trial:
        assert trial.call(MESSAGE_USER_TOOL, text="hello")["ended"] is True
        # The listings are the instance's own, as its tool list shows them.
        assert player.tools == [
            tool for tool in trial.instance.tools() if tool["name"] in CUSTOMER["tools"]
        ]
    assert player.seen == [CUSTOMER["instructions"]]


def test_a_user_that_only_acts_through_allowed_tools(desk: seahaven.World) -> None:
    def sneaky(turn: UserContext) -> str:
        turn.call("refund", account_id="a1", cents=1, pin="4321")
        return "done"

    with (
        Trial(scenario(desk), seed=1, user_player=_Fn(sneaky)) as trial,
        pytest.raises(seahaven.WorldBug, match="the user's player raised UnknownTool"),
    ):
        trial.call(MESSAGE_USER_TOOL, text="hello")


class _Fn:
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def respond(self, turn: UserContext) -> Any:
        return self.fn(turn)


def test_a_player_answering_something_else_is_the_authors_bug(desk: seahaven.World) -> None:
    with (
        Trial(scenario(desk), seed=1, user_player=_Fn(lambda turn: 42)) as trial,
        pytest.raises(seahaven.WorldBug, match="answered int; it answers a UserReply"),
    ):
        trial.call(MESSAGE_USER_TOOL, text="hello")


def test_a_scripted_user_replays_exactly(desk: seahaven.World) -> None:
    def episode() -> tuple[str, list[dict[str, Any]]]:
        with Trial(scenario(desk), seed=5) as trial:
            play(trial, SOLUTION)
            return trial.state_sha256(), trial.conversation

    first, again = episode(), episode()
    assert first == again
    assert len(first[1]) == 8


def test_scenarios_check_plays_the_reference_conversation(desk: seahaven.World) -> None:
    report = check_scenario(scenario(desk))
    assert report.problems == []
    assert report.solution_grade is not None and report.solution_grade.passed
    assert report.idle_grade is not None and not report.idle_grade.passed


def test_scenarios_check_names_what_the_agent_cannot_call(desk: seahaven.World) -> None:
    calls_users_tool = [{"tool": "phone_set_roaming", "arguments": {"on": True}}]
    report = check_scenario(scenario(desk, solution=calls_users_tool))
    assert report.problems == [
        "solution[0] calls 'phone_set_roaming', which is the user's own tool, never the agent's"
    ]
    bad_user = {**CUSTOMER, "tools": ["phone_fly"], "script": [{"reply": "x"}]}
    report = check_scenario(scenario(desk, user=bad_user, solution=None))
    assert "user.tools names 'phone_fly', which the world does not serve" in report.problems


def test_a_solution_messaging_a_user_needs_one(desk: seahaven.World) -> None:
    with pytest.raises(ValueError, match="message_user talks to the scenario's user"):
        scenario(desk, user=None)


@pytest.mark.parametrize(
    ("user", "message"),
    [
        ({"instructions": "x"}, "played by a script"),
        ({"instructions": "x", "script": []}, "at least one turn"),
        ({"instructions": "x", "script": [{"reply": "a"}], "python": "m:f"}, "played by a script"),
        ({"instructions": "x", "tools": "phone_x", "script": [{"reply": "a"}]}, "not one string"),
        (
            {"instructions": "x", "script": [{"calls": [{"tool": "t"}], "reply": "a"}]},
            "not among the user's tools",
        ),
        ({"instructions": "x", "script": [{"reply": "a", "when": {"pattern": "("}}]}, "regular"),
        ({"instructions": "x", "python": "nocolon"}, "module:function"),
        ({"instructions": "", "script": [{"reply": "a"}]}, "instructions"),
    ],
)
def test_a_user_that_cannot_be_played_is_refused(
    desk: seahaven.World, user: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", "\\(")):
        scenario(desk, user=user, solution=None, grader="user_ended")


def test_a_world_with_a_tool_named_message_user_cannot_have_a_user() -> None:
    desk = make_desk()

    @desk.tool
    def message_user(ctx: seahaven.Ctx, text: str) -> None:
        """The world's own."""

    with pytest.raises(seahaven.WorldBug, match="has a tool named 'message_user'"):
        Trial(scenario(desk), seed=1)


def test_an_unknown_user_tool_is_refused_as_the_trial_starts(desk: seahaven.World) -> None:
    user = {"instructions": "x", "tools": ["phone_fly"], "script": [{"reply": "a"}]}
    with pytest.raises(seahaven.WorldBug, match=r"user\.tools names 'phone_fly'"):
        Trial(scenario(desk, user=user, solution=None, grader="user_ended"), seed=1)


def test_the_user_is_part_of_the_hash(desk: seahaven.World) -> None:
    plain = scenario(desk)
    other = scenario(desk, user={**CUSTOMER, "fallback": "What?"})
    assert plain.hash != other.hash
    assert plain.to_data()["user"]["tools"] == ["phone_set_roaming", "phone_read_settings"]
    again = Scenario.model_validate({**plain.to_data(), "world": desk})
    assert again.hash == plain.hash


def test_a_scripted_user_needs_a_script() -> None:
    with pytest.raises(seahaven.WorldBug, match="needs a user with a script"):
        ScriptedUser(User(instructions="x", python="a:b"))
