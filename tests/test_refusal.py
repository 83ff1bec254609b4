"""The ``refused`` grader: a task whose right move is to change nothing and say why."""

from __future__ import annotations

from typing import Any

import pytest
from weak_pack import START, make_depot

import seahaven
from seahaven import grading
from seahaven.errors import WorldBug
from seahaven.scenarios import Scenario, Trial


@pytest.fixture(scope="module")
def depot() -> seahaven.World:
    return make_depot()


def cancel_o3(depot: seahaven.World, grader: Any) -> Scenario:
    return Scenario(
        id="refuse-cancel",
        world=depot,
        instructions="Cancel Cyd's order o3, or tell me why you can't.",
        start=START,
        grader=grader,
    )


def play(scenario: Scenario, *calls: tuple[str, dict[str, Any]], answer: str | None) -> Any:
    with Trial(scenario, seed=1) as trial:
        for tool, arguments in calls:
            trial.call(tool, **arguments)
        return trial.submit(answer) if answer is not None else trial.finish()


def test_a_refusal_that_says_why_and_changes_nothing_passes(depot: seahaven.World) -> None:
    scenario = cancel_o3(depot, grading.refused(pattern="shipped"))
    grade = play(scenario, ("get_order", {"order_id": "o3"}), answer="I can't: o3 has shipped.")
    assert grade.passed and grade.score == 1.0
    assert [check.name for check in grade.checks] == [
        "the agent refused in its answer",
        "the refusal says why: it matches /shipped/",
        "nothing changed beyond what is allowed (nothing)",
    ]
    assert grade.checks[0].why == 'the answer says "can\'t"'


@pytest.mark.parametrize(
    "answer",
    [
        "I cannot cancel it: it has shipped.",
        "Sorry, I’m unable to: o3 has shipped already.",
        "That is not allowed once an order has shipped.",
        "I won't cancel o3, it shipped yesterday.",
        "Only the warehouse can stop an order that has shipped.",
        "I don't have permission to cancel shipped orders.",
    ],
)
def test_the_default_markers_read_the_ways_agents_refuse(
    depot: seahaven.World, answer: str
) -> None:
    grade = play(cancel_o3(depot, {"refused": {"pattern": "shipped"}}), answer=answer)
    assert grade.passed, grade.summary()


@pytest.mark.parametrize(
    ("calls", "answer", "failing"),
    [
        ((), None, "the agent refused in its answer"),  # doing nothing says nothing
        ((), "Done: I took care of it.", "the agent refused in its answer"),
        ((), "I can't do that.", "the refusal says why: it matches /shipped/"),
        (
            (("set_status", {"order_id": "o3", "status": "cancelled"}),),
            "I can't: o3 has shipped.",
            "nothing changed beyond what is allowed (nothing)",
        ),
    ],
)
def test_what_a_refusal_grader_fails(
    depot: seahaven.World,
    calls: tuple[tuple[str, dict[str, Any]], ...],
    answer: str | None,
    failing: str,
) -> None:
    grade = play(cancel_o3(depot, {"refused": {"pattern": "shipped"}}), *calls, answer=answer)
    assert not grade.passed and grade.score == 0.0
    assert failing in [check.name for check in grade.failed]


def test_reason_contains_markers_and_allow(depot: seahaven.World) -> None:
    grader = grading.refused(
        reason_contains=["o3", "shipped"],
        markers=r"\bno\b",
        allow=[{"table": "notes", "ops": ["insert"]}],
    )
    scenario = cancel_o3(depot, grader)
    noted = play(
        scenario,
        ("add_note", {"order_id": "o3", "text": "asked to cancel"}),
        answer="No: o3 has shipped.",
    )
    assert noted.passed, noted.summary()
    # The scenario's own markers replace the default ones.
    assert not play(scenario, answer="I can't: o3 has shipped.").passed


def test_the_grader_is_data_and_round_trips() -> None:
    assert grading.grader_from_spec("refused").spec() == "refused"
    spec = {
        "refused": {
            "pattern": "finance|Carla",
            "reason_contains": "finance",
            "markers": "can't",
            "allow": ["audit_log", {"table": "notes", "ops": ["insert"]}],
        }
    }
    grader = grading.grader_from_spec(spec)
    assert isinstance(grader, grading.Refused)
    assert grader.spec() == spec
    assert [ref.table for ref in grader.references()] == ["audit_log", "notes"]
    assert "refused" in grading.KINDS


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"refused": {"pattern": "("}}, "pattern '(' is not a regular expression"),
        ({"refused": {"reason_contains": []}}, "reason_contains is a piece of text"),
        ({"refused": {"why": "x"}}, "refused does not take why"),
        ({"refused": {"allow": "notes"}}, "refused's allow is a list"),
    ],
)
def test_a_refusal_grader_written_wrong_is_named(spec: dict[str, Any], problem: str) -> None:
    with pytest.raises(WorldBug, match=problem.replace("(", r"\(").replace("'", ".")):
        grading.grader_from_spec(spec)
