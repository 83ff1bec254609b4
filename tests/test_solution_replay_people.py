"""A reference solution's replay beside a user and events: every change kept as its actor's.

A replay is recorded as one net change per row (``record_net()``) only when
every change is the agent's: no events, and a user who only talks (a user's
messages are the conversation's, never rows). A user with tools, or events,
make their own changes (an event may even write in a ``bulk()`` block), so the
replay then records call by call, as a trial does, and each row keeps who
touched it. Either way the replay's net changes are the ones a trial playing the
same calls ends with, and the grade is the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from people_worlds import GRADER, SOLUTION, make_desk, scenario

import seahaven
from seahaven.grading import Changes, fold
from seahaven.scenarios import Scenario, Trial, replay_solution

# The reference conversation of people_worlds without its roaming turn: a user who only talks.
TALKING_SOLUTION = [step for step in SOLUTION if "roaming" not in json.dumps(step)]
TALKING_USER = {
    "instructions": "You are Maya. You were charged 25.00 twice. Give your details when asked.",
    "script": [
        {"when": {"contains": "email"}, "reply": "It's maya@example.test."},
        {"when": {"pattern": r"\bpin\b"}, "reply": "My PIN is 4321."},
        {"when": {"contains": "sorted"}, "reply": "Great, thank you!", "stop": True},
    ],
    "fallback": "I was charged twice. Can you help?",
}
OUTAGE = {"name": "outage", "after_call": 1, "python": "people_worlds:post_outage"}


@pytest.fixture
def desk() -> seahaven.World:
    return make_desk()


@pytest.fixture
def net_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts the ``record_net()`` blocks opened, so a test sees which way a replay went."""
    opened: list[int] = []
    original = seahaven.Instance.record_net

    def counting(self: seahaven.Instance) -> Any:
        opened.append(1)
        return original(self)

    monkeypatch.setattr(seahaven.Instance, "record_net", counting)
    yield opened


def played(scenario: Scenario, steps: list[dict[str, Any]]) -> tuple[Changes, seahaven.Grade]:
    """A trial of ``scenario`` playing ``steps`` as the agent: its net changes and its grade."""
    with Trial(scenario, seed=1) as trial:
        for step in steps:
            if trial.done:
                break
            trial.call(step["tool"], **step["arguments"])
        grade = trial.finish()
        return fold(trial.instance.change_log()), grade


def by_row(changes: Changes) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """Each change as its row and who touched it, in an order that compares."""
    return sorted(
        (change.table, json.dumps(change.values(), sort_keys=True), change.op, change.actors)
        for change in changes
    )


def test_a_users_own_changes_in_the_replay_stay_the_users(
    desk: seahaven.World, net_blocks: list[int]
) -> None:
    graded = scenario(desk, grader=[*GRADER, {"matches_solution": {}}])
    replay = replay_solution(graded, desk, 1)
    assert net_blocks == [], "a user with tools is replayed call by call"
    assert {change.table: change.actors for change in replay.changes} == {
        "accounts": ("agent",),
        "settings": ("user",),
    }
    changes, grade = played(graded, SOLUTION)
    assert by_row(changes) == by_row(replay.changes)
    assert grade.passed, grade.summary()
    by_user = [check for check in grade.checks if "user" in check.name and "settings" in check.name]
    assert by_user and all(check.passed for check in by_user)


def test_an_agent_doing_the_users_part_fails_by_and_not_by(desk: seahaven.World) -> None:
    graded = scenario(desk, grader=[*GRADER, {"matches_solution": {}}])
    with Trial(graded, seed=1) as trial:
        for step in SOLUTION[:4]:
            trial.call(step["tool"], **step["arguments"])
        with trial.instance.acting_as("agent"):
            trial.instance.call("phone_set_roaming", on=True)  # the agent reaching the phone
        for step in SOLUTION[4:]:
            trial.call(step["tool"], **step["arguments"])
        grade = trial.finish()
    failed = {check.name for check in grade.failed}
    assert any("settings" in name for name in failed), grade.summary()
    assert not any("same net changes" in name for name in failed), "the end state is the same"


def test_events_in_the_replay_act_as_themselves_even_in_bulk(
    desk: seahaven.World, net_blocks: list[int]
) -> None:
    busy = scenario(
        desk,
        user=TALKING_USER,
        solution=TALKING_SOLUTION,
        events=[OUTAGE],
        grader=[
            {"matches_solution": {}},
            {"changed": {"table": "notices", "by": "event:outage", "not_by": "agent"}},
            {"nothing_else_changed": {"allow": ["accounts"], "by": "agent"}},
        ],
    )
    replay = replay_solution(busy, desk, 1)
    assert net_blocks == [], "events are replayed call by call"
    assert replay.errors == []
    assert by_row(replay.changes) == [
        ("accounts", '{"balance": 7500, "id": "a1"}', "update", ("agent",)),
        ("notices", '{"n": 1, "text": "Network outage in your area"}', "insert", ("event:outage",)),
        ("notices", '{"n": 2, "text": "written directly"}', "insert", ("event:outage",)),
    ]
    changes, grade = played(busy, TALKING_SOLUTION)
    assert by_row(changes) == by_row(replay.changes)
    assert grade.passed, grade.summary()


def test_a_user_who_only_talks_is_replayed_as_one_net_change_per_row(
    desk: seahaven.World, net_blocks: list[int]
) -> None:
    talking = scenario(
        desk,
        user=TALKING_USER,
        solution=TALKING_SOLUTION,
        grader=[
            {"matches_solution": {}},
            {"changed": {"table": "accounts", "to": {"balance": 7500}, "by": "agent"}},
            {"nothing_else_changed": {"by": "user"}},
            {"told_user": {"contains": "email", "before": "refund"}},
            "user_ended",
        ],
    )
    replay = replay_solution(talking, desk, 1)
    assert net_blocks == [1], "every change is the agent's: one record_net() block"
    assert replay.errors == []
    assert by_row(replay.changes) == [
        ("accounts", '{"balance": 7500, "id": "a1"}', "update", ("agent",))
    ]
    # The net changes a trial records call by call, so the grade is what it was before.
    changes, grade = played(talking, TALKING_SOLUTION)
    assert by_row(changes) == by_row(replay.changes)
    assert grade.passed and grade.score == 1.0, grade.summary()
    wrong = [
        {**step, "arguments": {**step["arguments"], "cents": 2400}}
        if step["tool"] == "refund"
        else step
        for step in TALKING_SOLUTION
    ]
    _, failing = played(talking, wrong)
    assert {check.name for check in failing.failed} >= {
        "the same net changes as the reference solution"
    }
