"""Graders about people: changes and calls by (or not by) an actor, what the agent told the user.

``changed``, ``deleted``, ``unchanged``, ``nothing_else_changed`` and ``called``
take ``by`` and ``not_by``; ``told_user`` checks the agent's messages for facts
(before a tool was called, when asked) and says which message carried which;
``user_ended`` checks that the user ended the conversation. Every one is data
too, and a mistake in it is a ``WorldBug`` naming the place.
"""

from __future__ import annotations

from typing import Any

import pytest
from people_worlds import SEED_ROWS, make_desk

import seahaven
from seahaven import grading
from seahaven.grading import Episode
from seahaven.grading.spec import as_grader


@pytest.fixture
def inst() -> Any:
    with make_desk().instance(setup_sql=SEED_ROWS, clock_mode="tick") as instance:
        yield instance


def verdict(grader: Any, episode: Episode) -> tuple[bool, str]:
    grade = as_grader(grader)(episode)
    [check] = grade.checks
    return check.passed, check.why


def test_changed_by_the_user_and_not_by_the_agent(inst: seahaven.Instance) -> None:
    with inst.acting_as("user"):
        inst.call("phone_set_roaming", on=True)
    episode = Episode.of(inst)
    roaming = {"table": "settings", "store": "handset", "to": {"value": "on"}}
    assert verdict({"changed": {**roaming, "by": "user", "not_by": "agent"}}, episode) == (
        True,
        "handset.settings (name='roaming') was updated by user as asked",
    )
    passed, why = verdict({"changed": {**roaming, "by": "agent"}}, episode)
    assert not passed
    assert why == (
        "handset.settings (name='roaming') was changed by user, and only changes by the agent count"
    )
    # The agent touching the row too makes not_by fail, whoever set it last.
    inst.call("phone_set_roaming", on=False)
    with inst.acting_as("user"):
        inst.call("phone_set_roaming", on=True)
    passed, why = verdict(
        {"changed": {**roaming, "by": "user", "not_by": "agent"}}, Episode.of(inst)
    )
    assert not passed
    assert "was changed by user and agent" in why


def test_event_stands_for_every_event(inst: seahaven.Instance) -> None:
    with inst.acting_as("event:outage"):
        inst.call("post_notice", text="outage")
    episode = Episode.of(inst)
    assert verdict(grading.changed("notices", by="event"), episode)[0]
    assert verdict(grading.changed("notices", by="event:outage"), episode)[0]
    assert not verdict(grading.changed("notices", by="event:other"), episode)[0]
    assert not verdict(grading.changed("notices", not_by=["event"]), episode)[0]


def test_unchanged_counts_only_the_named_actors_changes(inst: seahaven.Instance) -> None:
    with inst.acting_as("user"):
        inst.call("phone_set_roaming", on=True)
    episode = Episode.of(inst)
    settings = {"table": "settings", "store": "handset"}
    passed, why = verdict({"unchanged": {**settings, "by": "agent"}}, episode)
    assert passed and why == "the episode changed none of those rows"
    passed, why = verdict({"unchanged": settings}, episode)
    assert not passed
    assert why == "the episode changed handset.settings (name='roaming') update of value by user"
    grade = grading.unchanged("settings", store="handset", not_by="user")(episode)
    assert grade.passed
    assert (
        grade.checks[0].name == "left handset.settings as it was (counting changes not by the user)"
    )


def test_nothing_else_changed_holds_only_the_named_actors_to_it(inst: seahaven.Instance) -> None:
    with inst.acting_as("event:outage"):
        inst.call("post_notice", text="outage")
    inst.call("close_ticket", ticket_id="t1", note="done")
    episode = Episode.of(inst)
    assert verdict({"nothing_else_changed": {"allow": ["tickets"], "by": "agent"}}, episode) == (
        True,
        "all 1 row the episode changed are allowed",
    )
    passed, why = verdict({"nothing_else_changed": {"allow": ["tickets"]}}, episode)
    assert not passed
    assert why == "1 row changed beyond what is allowed: main.notices (n=1) insert by event:outage"


def test_deleted_by_an_actor() -> None:
    desk = make_desk()

    @desk.tool
    def drop_ticket(ctx: seahaven.Ctx, ticket_id: str) -> None:
        """Delete a ticket."""
        ctx.db.execute("DELETE FROM tickets WHERE id = ?", ticket_id)

    with desk.instance(setup_sql=SEED_ROWS) as inst:
        with inst.acting_as("user"):
            inst.call("drop_ticket", ticket_id="t1")
        episode = Episode.of(inst)
        assert verdict({"deleted": {"table": "tickets", "by": "user"}}, episode)[0]
        passed, why = verdict({"deleted": {"table": "tickets", "by": "agent"}}, episode)
        assert not passed
        assert (
            why == "main.tickets (id='t1') was changed by user, and only changes by the agent count"
        )


def test_called_by_an_actor(inst: seahaven.Instance) -> None:
    inst.call("line_status")
    with inst.acting_as("user"):
        inst.call("phone_set_roaming", on=True)
        inst.call("phone_set_roaming", on=True)
    episode = Episode.of(inst)
    assert verdict({"called": {"tool": "phone_set_roaming", "by": "user", "times": 2}}, episode)[0]
    grade = grading.called("phone_set_roaming", by="agent", times=0)(episode)
    assert grade.passed
    assert grade.checks[0].name == "phone_set_roaming called by the agent exactly 0 times"
    assert not verdict(grading.called("line_status", not_by="agent"), episode)[0]


def test_actor_filters_are_data_and_round_trip() -> None:
    specs = [
        {"changed": {"table": "t", "by": "user", "not_by": ["agent", "event"]}},
        {"unchanged": {"table": "t", "store": "s", "by": "agent"}},
        {"deleted": {"table": "t", "not_by": "setup"}},
        {"nothing_else_changed": {"allow": ["t"], "by": "agent"}},
        {"called": {"tool": "x", "by": "event:outage"}},
        {"told_user": {"contains": ["25.00"], "pattern": "refund", "before": "refund"}},
        "user_ended",
    ]
    for spec in specs:
        assert grading.grader_from_spec(spec).spec() == spec
    assert {"told_user", "user_ended"} <= set(grading.KINDS)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"changed": {"table": "t", "by": "users"}}, "changed: by: actor 'users' is none of"),
        ({"changed": {"table": "t", "by": []}}, "changed: by is an actor or a list of actors"),
        ({"called": {"tool": "x", "by": "user", "not_by": "user"}}, "user is in both by"),
        ({"exists": {"table": "t", "by": "user"}}, "exists does not take by"),
        ({"told_user": {}}, "told_user needs contains"),
        ({"told_user": {"contains": [""]}}, "told_user: contains holds text only"),
        ({"told_user": {"pattern": "("}}, "is not a regular expression"),
        ({"told_user": {"contains": "x", "when": 1}}, "told_user does not take when"),
        ({"user_ended": {"x": 1}}, "user_ended does not take x"),
    ],
)
def test_a_mistake_in_a_people_check_names_it(spec: Any, message: str) -> None:
    with pytest.raises(seahaven.WorldBug, match=message.replace("(", "\\(")):
        grading.grader_from_spec(spec, "scenario 'x': grader")


def conversation(*messages: tuple[str, str, int]) -> list[dict[str, Any]]:
    return [
        {"speaker": speaker, "text": text, "at_call": at_call}
        for speaker, text, at_call in messages
    ]


def test_told_user_names_the_message_that_carried_each_fact() -> None:
    episode = Episode(
        log=[],
        conversation=conversation(
            ("agent", "What is your email?", 0),
            ("user", "maya@example.test, and I want 1,250 back", 0),
            ("agent", "Refunded: 1,250.00 is on its way.", 2),
        ),
    )
    assert verdict({"told_user": {"contains": ["refunded", "1250.00"]}}, episode) == (
        True,
        '"refunded" in message 3; "1250.00" in message 3',
    )
    passed, why = verdict(grading.told_user(["email", "ticket number"]), episode)
    assert not passed
    assert why == (
        'no message carried "ticket number" (found: "email" in message 1); the agent\'s '
        'messages were message 1: "What is your email?"; message 3: "Refunded: 1,250.00 is '
        'on its way."'
    )
    # The user's words are never the agent's: "want" only the user said.
    assert not verdict(grading.told_user("want"), episode)[0]


def test_told_user_before_a_tool_counts_only_messages_sent_before_it() -> None:
    calls = [
        {"tool": "find_account", "arguments": {}, "error": None, "actor": "agent"},
        {"tool": "refund", "arguments": {}, "error": None, "actor": "user"},  # not the agent's
        {"tool": "refund", "arguments": {}, "error": None, "actor": "agent"},
    ]
    asked_late = Episode(
        log=[], calls=calls, conversation=conversation(("agent", "What is your PIN?", 3))
    )
    passed, why = verdict(grading.told_user(pattern=r"\bpin\b", before="refund"), asked_late)
    assert not passed
    assert why.startswith(
        "no message before the agent's first call to refund (call 2) carried /\\bpin\\b/; "
        "the agent sent the user no message"
    )
    asked_first = Episode(
        log=[], calls=calls, conversation=conversation(("agent", "What is your PIN?", 1))
    )
    assert verdict(grading.told_user(pattern=r"\bpin\b", before="refund"), asked_first)[0]
    # An agent that never called the tool is judged on every message.
    never = Episode(log=[], conversation=conversation(("agent", "Your PIN, please", 0)))
    assert verdict(grading.told_user(pattern="pin", before="refund"), never)[0]


def test_user_ended_says_how_the_episode_ended_instead() -> None:
    assert verdict("user_ended", Episode(log=[], ended_by="user")) == (
        True,
        "the user ended the conversation",
    )
    assert verdict("user_ended", Episode(log=[], ended_by="submit")) == (
        False,
        "the agent never wrote to the user",
    )
    talked = Episode(log=[], ended_by="budget", conversation=conversation(("agent", "hi", 0)))
    assert verdict("user_ended", talked) == (
        False,
        "the budget of calls ran out, and the user never said it was done",
    )


def test_a_saved_document_grades_its_conversation() -> None:
    document = {
        "state": {"db": {"log": []}},
        "composition": {"main": {}},
        "scenario": {
            "ended_by": "user",
            "conversation": conversation(("agent", "refunded 25.00", 0)),
        },
    }
    episode = Episode.from_document(document)
    assert verdict(grading.told_user("25.00"), episode)[0]
    assert verdict("user_ended", episode)[0]
