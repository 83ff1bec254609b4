"""The mutant panel on scenarios with people: a scripted user and events, played as in a trial.

Every episode the panel plays (the solution, doing nothing, each mutant, each
right variant) takes the path a ``Trial``'s calls take, the user and the events
made afresh for it; so the same calls get the same grade on the panel's stage
as in a trial. The conversation mutants (a question dropped, messages that say
nothing, a write before the user was asked) find graders blind to the talk, and
the findings of a scenario with a user are the same on every run.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
from weak_pack import CANCEL_O2, CANCELLED_O2, CUSTOMER, make_depot, talk, talk_pack

import seahaven
from seahaven.evaluation import ScenarioReport, check_pack, check_scenario
from seahaven.evaluation.candidates import StartRows, tool_shapes
from seahaven.evaluation.conversations import (
    CONVERSATION_KINDS,
    SILENT_MESSAGE,
    conversation_mutants,
    polite_message,
)
from seahaven.evaluation.mutants import (
    BENIGN_KINDS,
    CAPS,
    KINDS,
    Mutant,
    SolutionShape,
    answer_mutants,
    benign_extra_reads,
    benign_reordered,
    script_mutants,
)
from seahaven.evaluation.stage import Played, Stage, Workbench
from seahaven.scenarios import Scenario, ScenarioSet, Trial, load_pack
from seahaven.scenarios.play import Play


@pytest.fixture(scope="module")
def depot() -> seahaven.World:
    return make_depot()


@pytest.fixture(scope="module")
def reports(depot: seahaven.World) -> dict[str, ScenarioReport]:
    return {report.scenario: report for report in check_pack(talk_pack(depot))}


def found(report: ScenarioReport) -> list[tuple[str, str | None]]:
    return [(finding.kind, finding.mutant) for finding in report.findings]


# --- graders blind to the talk ------------------------------------------------------------------


def test_a_grader_that_ignores_the_verification_is_walked_through_by_a_dropped_question(
    reports: dict[str, ScenarioReport],
) -> None:
    report = reports["ignores-verification"]
    assert found(report) == [("survived", "drop-message-1")]
    [finding] = report.findings
    assert finding.message == (
        "a wrong episode passes with score 1 (the message 'Sure. What is your name?' left out)"
    )
    assert finding.fix == (
        'nothing checks that the agent says "Sure. What is your name?" before it calls '
        "set_status: add told_user {pattern: <what only that message asks>, before: set_status} "
        "(for a scripted user, the pattern of the turn that answers it)"
    )
    assert [call["tool"] for call in finding.calls] == [
        "message_user",
        "get_order",
        "set_status",
        "message_user",
    ]
    assert finding.grade is not None and finding.grade.passed
    # Everything else about the conversation is graded: the other question, the news, the order.
    verdicts = report.verdicts
    assert verdicts["drop-message-2"] == verdicts["drop-message-5"] == "killed"
    assert verdicts["tell-nothing"] == verdicts["write-before-asking-4:set_status"] == "killed"


def test_a_grader_that_reads_only_the_state_passes_an_agent_that_says_nothing(
    reports: dict[str, ScenarioReport],
) -> None:
    report = reports["ignores-the-talk"]
    assert found(report) == [
        ("survived", "drop-message-1"),
        ("survived", "drop-message-2"),
        ("survived", "drop-message-5"),
        ("survived", "tell-nothing"),
    ]
    silent = report.findings[-1]
    assert [call["arguments"] for call in silent.calls if call["tool"] == "message_user"] == [
        {"text": SILENT_MESSAGE}
    ] * 3
    assert "told_user {contains: [...]}" in silent.fix and "user_ended" in silent.fix
    closing = report.findings[2]
    assert closing.fix.endswith("and user_ended if the user leaves on it")
    # No told_user(before=...) in it: nothing asks for an order of messages and calls.
    assert not any(name.startswith("write-before-asking") for name in report.verdicts)


def test_the_strict_conversation_passes_the_whole_panel(
    reports: dict[str, ScenarioReport],
) -> None:
    report = reports["talk-strict"]
    assert report.ok and report.findings == []
    verdicts = report.verdicts
    assert {name: verdicts[name] for name in verdicts if not name.startswith("change-arg")} == {
        "do-nothing": "killed",
        "submit-empty": "killed",
        "prefix-1": "killed",
        "prefix-2": "killed",
        "prefix-3": "killed",
        "drop-write-4:set_status": "killed",
        # The second cancellation is refused: the same end as the solution's.
        "twice": "skipped: the same end as the solution",
        "drop-message-1": "killed",
        "drop-message-2": "killed",
        "drop-message-5": "killed",
        "tell-nothing": "killed",
        # Ends as the solution does, its order aside: run all the same, and failed.
        "write-before-asking-4:set_status": "killed",
        "collateral:set_status": "killed",
        "destructive:delete_order": "killed",
        "collateral:add_note": "killed",
        "extra-reads": "passed",
        "polite-message": "passed",
    }


def test_a_polite_message_is_tried_only_where_the_script_answers_it_the_same(
    depot: seahaven.World,
) -> None:
    catch_all = {**CUSTOMER, "script": [*CUSTOMER["script"], {"reply": "Anything else?"}]}
    scripted = Scenario.model_validate(
        {**talk(depot, "catch-all", CANCELLED_O2).to_data(), "world": depot, "user": catch_all}
    )
    report = check_scenario(scripted, world=depot)
    assert (
        report.verdicts["polite-message"] == "skipped: a turn of the user's script would answer it"
    )
    played_by_python = Scenario.model_validate(
        {
            **talk(depot, "echoed", CANCELLED_O2).to_data(),
            "world": depot,
            "user": {"instructions": "Ben.", "python": "people_worlds:echo_user"},
        }
    )
    report = check_scenario(played_by_python, world=depot)
    assert report.solution_grade is not None and report.solution_grade.passed
    assert report.verdicts["polite-message"] == (
        "skipped: the user is played by a function, which may answer it any way"
    )
    assert report.mutants["benign_run"] == 1  # extra-reads; the skipped one is not counted


def test_a_user_scenarios_findings_are_the_same_every_run(depot: seahaven.World) -> None:
    pack = talk_pack(depot)
    first = [report.to_dict() for report in check_pack(pack)]
    again = [report.to_dict() for report in check_pack(pack)]
    backwards = ScenarioSet(pack.name, pack.version, list(reversed(pack.scenarios)))
    reversed_order = [report.to_dict() for report in check_pack(backwards)][::-1]
    for report in (*first, *again, *reversed_order):
        report.pop("seconds")
    assert first == again == reversed_order
    assert first[0]["findings"][0]["mutant"] == "drop-message-1"


def test_a_company_conversation_with_events_checks_the_same_every_run() -> None:
    scenario = load_pack("company").get("manager-changes-mind")
    first, again = (check_scenario(scenario, pack="company").to_dict() for _ in range(2))
    first.pop("seconds")
    again.pop("seconds")
    assert first == again
    assert first["ok"] and first["accepted"][0]["mutant"] == "drop-message-1"


# --- the panel's episode is a trial's ------------------------------------------------------------


def mutants_of(scenario: Scenario, stage: Stage) -> tuple[Played, list[Mutant]]:
    """The solution played on ``stage``, and every mutant the panel makes of it but the extras."""
    steps = [step for step in scenario.solution or () if step.tool != "submit"]
    submit = [step for step in scenario.solution or () if step.tool == "submit"]
    answer = str(submit[0].arguments["answer"]) if submit else None
    played = stage.play(steps, answer=answer, submitted=bool(submit))
    shape = SolutionShape.of(scenario, played)
    rows = StartRows.read(stage.start)
    tools = tool_shapes(stage.start)
    made = [
        *answer_mutants(scenario, shape, rows),
        *script_mutants(scenario, shape, rows, tools),
        *conversation_mutants(scenario, shape),
        *benign_reordered(shape),
    ]
    reads = [shape.calls[index] for index in shape.reads[:1]]
    extra = benign_extra_reads(scenario, shape, reads)
    polite, _ = polite_message(scenario, shape)
    made.extend(mutant for mutant in (extra, polite) if mutant is not None)
    return played, made


def in_a_trial(scenario: Scenario, world: seahaven.World, seed: int, mutant: Mutant) -> Trial:
    """The mutant's calls made by an agent in a trial; its grade is the trial's."""
    trial = Trial(scenario, seed=seed, world=world)
    for call in mutant.calls:
        if trial.done:
            break
        with contextlib.suppress(seahaven.ToolError):
            trial.call(call.tool, **call.arguments)
    if mutant.submitted and not trial.done:
        trial.submit(mutant.answer or "")
    else:
        trial.finish()
    return trial


@pytest.mark.parametrize(
    "scenario_id", [item.id for item in load_pack("company") if item.user is not None]
)
def test_every_episode_of_the_panel_grades_as_the_same_calls_in_a_trial(scenario_id: str) -> None:
    scenario = load_pack("company").get(scenario_id)
    world = scenario.resolve_world()
    seed = 4
    with Workbench() as bench, Stage(scenario, world, seed, bench) as stage:
        solution, mutants = mutants_of(scenario, stage)
        assert solution.grade is not None and solution.grade.passed
        assert {"drop-message", "tell-nothing"} <= {mutant.kind for mutant in mutants}
        for mutant in mutants:
            played = stage.play(mutant.calls, answer=mutant.answer, submitted=mutant.submitted)
            with in_a_trial(scenario, world, seed, mutant) as trial:
                assert played.grade is not None and trial.grade is not None
                # The whole grade, reasons included: every company conversation ticks its clock.
                assert played.grade.to_dict() == trial.grade.to_dict(), mutant.name
                assert played.conversation == trial.conversation, mutant.name
                assert played.ended_by == trial.ended_by, mutant.name
                assert played.changes.to_list() == trial.episode().changes.to_list(), mutant.name


def test_each_episode_meets_the_user_and_the_events_afresh() -> None:
    scenario = load_pack("company").get("manager-changes-mind")
    world = scenario.resolve_world()
    with Workbench() as bench, Stage(scenario, world, 2, bench) as stage:
        steps = list(scenario.solution or ())
        first = stage.play(steps)
        # The scripted user's turns are used up by the first run; the second gets them anew.
        again = stage.play(steps)
        for played in (first, again):
            assert played.grade is not None and played.grade.passed
            assert played.ended_by == "user"
        assert first.conversation == again.conversation
        # The colleague's post came due after the agent's first call: the event's, not the call's.
        posted = [change for change in first.changes if change.table == "messages"]
        assert [change.actors for change in posted] == [("event:trip-cancelled",)]
        assert all(not outcome.records for outcome in first.outcomes[:3])
        # Nothing of a scenario with people is taken up from an image of an episode.
        assert stage.snapshot() is None
        with pytest.raises(seahaven.WorldBug, match="play its episodes from the start"):
            Play(scenario, stage.start, seed=2, calls_made=1)


def test_the_conversation_of_the_panels_solution_is_the_trials(depot: seahaven.World) -> None:
    scenario = talk(depot, "solution", CANCELLED_O2)
    with Workbench() as bench, Stage(scenario, depot, 9, bench) as stage:
        played = stage.play(scenario.solution or ())
    with Trial(scenario, seed=9, world=depot) as trial:
        for step in CANCEL_O2:
            trial.call(step["tool"], **step["arguments"])
        assert trial.ended_by == "user"
        expected: list[dict[str, Any]] = trial.conversation
    assert played.conversation == expected
    assert [message["text"] for message in expected[1::2]] == [
        "Ben.",
        "Order o2, please.",
        "Thanks!",
    ]


def test_the_conversation_kinds_are_kinds_documented_on_both_pages() -> None:
    assert set(CONVERSATION_KINDS) <= set(KINDS) and "polite-message" in BENIGN_KINDS
    assert all(kind in CAPS for kind in (*CONVERSATION_KINDS, "polite-message"))
    docs = Path(__file__).parents[1] / "docs"
    for page in ("scenarios.md", "people.md"):
        text = (docs / page).read_text(encoding="utf-8")
        for kind in (*CONVERSATION_KINDS, "polite-message"):
            assert f"`{kind}" in text, (page, kind)
