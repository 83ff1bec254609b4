"""The mutant panel: every scenario's grader attacked by mutants of its own solution.

A pack of deliberately weak graders (``weak_pack.py``) must each be reported with
the mutant that walks through its blind spot, and the strict twin, the refusal
and every right variant must pass; findings carry the calls, the grade and the
fix; ``accept`` turns a finding into an accepted one, never silently.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from weak_pack import SHIP_O1, START, make_depot, scenario, weak_pack

import seahaven
from seahaven.cli import build_app
from seahaven.evaluation import ScenarioReport, check_pack, check_scenario, surviving_kinds
from seahaven.evaluation.mutants import BENIGN_KINDS, CAPS, KINDS, WRONG_DONE, kind_of
from seahaven.evaluation.stage import Stage, Workbench
from seahaven.scenarios import Scenario, ScenarioSet, Trial, load_pack

runner = CliRunner()


@pytest.fixture(scope="module")
def depot() -> seahaven.World:
    return make_depot()


@pytest.fixture(scope="module")
def reports(depot: seahaven.World) -> dict[str, ScenarioReport]:
    return {report.scenario: report for report in check_pack(weak_pack(depot))}


def found(report: ScenarioReport) -> list[tuple[str, str | None]]:
    return [(finding.kind, finding.mutant) for finding in report.findings]


# --- the weak pack ------------------------------------------------------------------------------


def test_a_grader_that_only_counts_rows_is_walked_through_by_another_row(
    reports: dict[str, ScenarioReport],
) -> None:
    report = reports["counts-rows"]
    assert found(report) == [
        ("survived", "change-arg-1:set_status.order_id=o2"),
        # Cancelling another order leaves the count of shipped ones as it was, too.
        ("survived", "collateral:set_status"),
    ]
    finding = report.findings[0]
    assert finding.fix == (
        "it changed main.orders (id='o2') update of status instead of the row the task names: "
        'name that row in the check\'s where ({id: "o1"}), not only its table or a count'
    )
    assert finding.calls == [
        {"tool": "set_status", "arguments": {"order_id": "o2", "status": "shipped"}, "error": None}
    ]
    assert finding.grade is not None and finding.grade.passed and finding.grade.score == 1.0
    assert not report.ok and finding.line() in report.problems


def test_a_grader_that_ignores_collateral_lets_extra_writes_and_deletes_through(
    reports: dict[str, ScenarioReport],
) -> None:
    report = reports["ignores-collateral"]
    assert found(report) == [
        ("survived", "collateral:set_status"),
        ("survived", "destructive:delete_order"),
        ("survived", "collateral:add_note"),
    ]
    assert all("add nothing_else_changed" in finding.fix for finding in report.findings)
    deleted = report.findings[1]
    assert deleted.calls[-1] == {
        "tool": "delete_order",
        "arguments": {"order_id": "o2"},
        "error": None,
    }


def test_a_start_that_already_passes_is_named_with_everything_it_lets_through(
    reports: dict[str, ScenarioReport],
) -> None:
    report = reports["start-passes"]
    assert found(report) == [
        ("start-passes", "do-nothing"),
        ("survived", "submit-empty"),
        ("survived", "collateral:set_status"),
        ("survived", "destructive:delete_order"),
        ("survived", "collateral:add_note"),
    ]
    assert report.findings[0].message.startswith("doing nothing passes it, so it measures nothing")
    assert report.idle_grade is not None and report.idle_grade.passed


def test_an_answer_read_loosely_passes_a_longer_number(
    reports: dict[str, ScenarioReport],
) -> None:
    report = reports["loose-answer"]
    assert found(report) == [("survived", "wrong-answer:digit-added")]
    [finding] = report.findings
    assert finding.answer == "12" and finding.submitted
    assert "read the answer as a number" in finding.fix
    assert report.verdicts["wrong-answer:off-by-one"] == "killed"


def test_a_grader_that_ignores_which_row_changed_passes_another_row(
    reports: dict[str, ScenarioReport],
) -> None:
    report = reports["any-row"]
    assert found(report) == [
        ("survived", "change-arg-1:set_status.order_id=o2"),
        ("survived", "collateral:set_status"),
        ("survived", "destructive:delete_order"),
    ]
    # An allowance limited to some columns still lets a delete through: the fix names it.
    assert report.findings[2].fix == (
        'main.orders (id=\'o3\') delete (allowed by {"table": "orders", "columns": '
        '["status"]}): narrow that allowance (a where naming the task\'s rows, ops or columns)'
    )


def test_a_grader_that_counts_reads_fails_a_right_episode(
    reports: dict[str, ScenarioReport],
) -> None:
    report = reports["counts-reads"]
    assert found(report) == [("broken", "extra-reads")]
    [finding] = report.findings
    # A read before the solution's own (the same tool again) and another before the answer.
    assert [call["tool"] for call in finding.calls] == [
        "count_open",
        "count_open",
        "get_order",
        "submit",
    ]
    assert finding.grade is not None and not finding.grade.passed
    assert "count only the calls that matter" in finding.fix


def test_the_strict_twin_and_the_refusal_pass_the_whole_panel(
    reports: dict[str, ScenarioReport],
) -> None:
    for name in ("ship-strict", "refuse-cancel"):
        report = reports[name]
        assert report.ok and report.findings == [], report.problems
        assert report.mutants["survived"] == 0 and report.mutants["benign_broken"] == 0
    strict = reports["ship-strict"].verdicts
    assert strict == {
        "do-nothing": "killed",
        "submit-empty": "killed",
        "change-arg-1:set_status.order_id=o2": "killed",
        "change-arg-1:set_status.order_id=o3": "skipped: refused by the world",
        "change-arg-1:set_status.status=cancelled": "killed",
        "change-arg-1:set_status.status=open": "skipped: refused by the world",
        "twice": "skipped: the same end as the solution",
        "destructive:delete_order": "killed",
        "collateral:add_note": "killed",
        "extra-reads": "passed",
    }
    refusal = reports["refuse-cancel"].verdicts
    assert refusal["do-nothing"] == "killed" and refusal["wrong-answer:done"] == "killed"


def test_the_counts_say_what_was_generated_run_and_skipped(
    reports: dict[str, ScenarioReport],
) -> None:
    counts = reports["ship-strict"].mutants
    assert counts == {
        "generated": 9,
        "run": 6,
        "killed": 6,
        "survived": 0,
        "skipped": {"refused by the world": 2, "the same end as the solution": 1},
        "benign_run": 1,
        "benign_broken": 0,
    }


def test_the_panel_is_the_same_every_run_whatever_ran_before(depot: seahaven.World) -> None:
    pack = weak_pack(depot)
    first = [report.to_dict() for report in check_pack(pack)]
    again = [report.to_dict() for report in check_pack(pack)]
    backwards = ScenarioSet(pack.name, pack.version, list(reversed(pack.scenarios)))
    reversed_order = [report.to_dict() for report in check_pack(backwards)][::-1]
    for report in (*first, *again, *reversed_order):
        report.pop("seconds")
    assert first == again == reversed_order


def test_mutants_over_the_budget_are_skipped_and_no_room_means_no_extra_reads(
    depot: seahaven.World,
) -> None:
    tight = scenario(
        depot,
        "tight",
        grader={"changed": {"table": "orders", "where": {"id": "o1"}, "to": {"status": "shipped"}}},
        solution=[*SHIP_O1, {"tool": "add_note", "arguments": {"order_id": "o1", "text": "sent"}}],
        budget=2,
    )
    report = check_scenario(tight, world=depot)
    assert report.verdicts["twice"] == "skipped: over the budget"
    assert "extra-reads" not in report.verdicts
    # Every extra would be the third call of two: none is made.
    assert not any(name.startswith(("collateral", "destructive")) for name in report.verdicts)


def test_independent_writes_reordered_must_still_pass(depot: seahaven.World) -> None:
    both = [
        *SHIP_O1,
        {"tool": "add_note", "arguments": {"order_id": "o1", "text": "shipped today"}},
    ]
    strict = scenario(
        depot,
        "ship-and-note",
        grader={
            "all_of": [
                {
                    "changed": {
                        "table": "orders",
                        "where": {"id": "o1"},
                        "to": {"status": "shipped"},
                    }
                },
                {"changed": {"table": "notes", "where": {"order_id": "o1"}, "op": "insert"}},
                {"count": {"table": "notes", "equals": 1}},
                {
                    "nothing_else_changed": {
                        "allow": [
                            {"table": "orders", "where": {"id": "o1"}, "columns": ["status"]},
                            {"table": "notes", "where": {"order_id": "o1"}, "ops": ["insert"]},
                        ]
                    }
                },
            ]
        },
        solution=both,
    )
    report = check_scenario(strict, world=depot)
    assert report.ok, report.problems
    assert report.verdicts["reordered:1-2"] == "passed"
    assert report.verdicts["drop-write-1:set_status"] == "killed"
    assert report.verdicts["twice"] == "killed"  # a second note
    # A grader that reads the order of calls fails the reordered episode.
    ordered = strict.model_copy(
        update={
            "id": "ship-then-note",
            "grader": seahaven.grading.python(
                lambda episode: [call["tool"] for call in episode.calls][:1] == ["set_status"]
            ),
        }
    )
    broken = check_scenario(ordered, world=depot)
    assert ("broken", "reordered:1-2") in found(broken)


def test_writes_that_mint_ids_in_turn_are_not_claimed_right_when_swapped_under_matches_solution(
    depot: seahaven.World,
) -> None:
    # Two notes: swapped, each gets the other's number. A grader that names the rows it wants
    # passes that; one that holds the episode to the solution's exact end (as tau2-bench's
    # database hash does) rightly fails it, so the panel must not claim the swap is right.
    notes = [
        {"tool": "add_note", "arguments": {"order_id": "o1", "text": "packed"}},
        {"tool": "add_note", "arguments": {"order_id": "o2", "text": "delayed"}},
    ]
    exact = scenario(depot, "two-notes-exact", grader={"matches_solution": {}}, solution=notes)
    report = check_scenario(exact, world=depot)
    assert report.verdicts["reordered:1-2"] == "skipped: the writes are not independent"
    assert ("broken", "reordered:1-2") not in found(report)
    # With the minted number left out of the comparison, the swap is right again.
    loose = scenario(
        depot,
        "two-notes-any-number",
        grader={"matches_solution": {"ignore": ["n"]}},
        solution=notes,
    )
    assert check_scenario(loose, world=depot).verdicts["reordered:1-2"] == "passed"
    named = scenario(
        depot,
        "two-notes-named",
        grader={
            "all_of": [
                {"exists": {"table": "notes", "where": {"order_id": "o1", "text": "packed"}}},
                {"exists": {"table": "notes", "where": {"order_id": "o2", "text": "delayed"}}},
            ]
        },
        solution=notes,
    )
    assert check_scenario(named, world=depot).verdicts["reordered:1-2"] == "passed"


def test_the_kinds_and_caps_are_documented_and_bounded() -> None:
    assert KINDS[:2] == ("do-nothing", "submit-empty")
    assert set(CAPS) >= {"change-arg", "collateral", "destructive", "twice", "extra-reads"}
    page = (Path(__file__).parents[1] / "docs" / "scenarios.md").read_text(encoding="utf-8")
    for kind in (*KINDS, "extra-reads", "reordered"):
        assert f"`{kind}" in page, kind
    assert WRONG_DONE in page


def test_a_call_that_crashes_the_world_is_a_finding(reports: dict[str, ScenarioReport]) -> None:
    depot = make_depot()

    @depot.tool
    def flag(ctx: seahaven.Ctx, order_id: str) -> None:
        """Flag an order for a second look."""
        if order_id == "o2":
            raise RuntimeError("the flag jammed")
        ctx.db.execute("UPDATE orders SET total = total + 1 WHERE id = ?", order_id)

    flagged = scenario(
        depot,
        "flag-o1",
        grader={
            "all_of": [
                {"changed": {"table": "orders", "where": {"id": "o1"}, "to": {"total": 2501}}},
                {
                    "nothing_else_changed": {
                        "allow": [{"table": "orders", "where": {"id": "o1"}, "columns": ["total"]}]
                    }
                },
            ]
        },
        solution=[{"tool": "flag", "arguments": {"order_id": "o1"}}],
    )
    report = check_scenario(flagged, world=depot)
    [crash] = [finding for finding in report.findings if finding.kind == "world-bug"]
    assert crash.message == (
        'mutant change-arg-1:flag.order_id=o2\'s call flag(order_id="o2") hit a bug in the '
        "world: RuntimeError: the flag jammed"
    )
    assert crash.fix == "make the tool refuse bad input with a ToolError"
    assert report.verdicts["change-arg-1:flag.order_id=o2"] == "skipped: the world crashed"
    assert not report.ok


def test_a_start_that_cannot_be_snapshotted_is_made_again_for_each_episode(
    reports: dict[str, ScenarioReport],
) -> None:
    import threading

    depot = make_depot()

    @depot.instance_startup
    def keep_a_lock(ctx: seahaven.Ctx) -> None:
        ctx.state["lock"] = threading.Lock()  # a lock cannot be copied into a snapshot

    strict = weak_pack(depot).get("ship-strict")
    report = check_scenario(strict, world=depot, pack="weak-depot")
    assert report.ok, report.problems
    assert report.verdicts == reports["ship-strict"].verdicts


# --- the fast path is a trial ---------------------------------------------------------------------


def both_ways(item: Scenario, world: seahaven.World, seed: int, bench: Workbench) -> Any:
    """The solution's grade on a stage and in a trial: what the panel sees, and what evals see."""
    steps = [step for step in item.solution or () if step.tool != "submit"]
    answer = next(
        (step.arguments["answer"] for step in item.solution or () if step.tool == "submit"), None
    )
    with Stage(item, world, seed, bench) as stage:
        played = stage.play(steps, answer=answer, submitted=answer is not None)
    with Trial(item, seed=seed, world=world) as trial:
        for step in steps:
            with contextlib.suppress(seahaven.ToolError):
                trial.call(step.tool, **step.arguments)
        graded = trial.submit(answer) if answer is not None else trial.finish()
    assert played.grade is not None
    return played.grade, graded


def test_an_episode_on_the_stage_grades_as_a_trial_does(depot: seahaven.World) -> None:
    with Workbench() as bench:
        for item in weak_pack(depot):
            staged, graded = both_ways(item, depot, 5, bench)
            assert staged.to_dict() == graded.to_dict(), item.id


def test_the_company_pack_grades_the_same_on_the_stage_as_in_a_trial() -> None:
    with Workbench() as bench:
        for item in load_pack("company"):
            staged, graded = both_ways(item, item.resolve_world(), 3, bench)
            # Under the company's running clock the reasons may quote different instants.
            mine = [(check.name, check.passed) for check in staged.checks]
            theirs = [(check.name, check.passed) for check in graded.checks]
            assert (staged.score, mine) == (graded.score, theirs), item.id


# --- accept -------------------------------------------------------------------------------------


def with_accept(base: Scenario, *accept: dict[str, str]) -> Scenario:
    return Scenario.model_validate({**base.to_data(), "world": base.world, "accept": list(accept)})


def test_an_accepted_mutant_is_shown_with_its_reason_and_a_stale_accept_is_a_problem(
    depot: seahaven.World,
) -> None:
    base = weak_pack(depot).get("loose-answer")
    accepted = with_accept(
        base, {"mutant": "wrong-answer:digit-*", "reason": "the count is one digit; 12 is moot"}
    )
    report = check_scenario(accepted, world=depot)
    assert report.ok and report.problems == []
    [finding] = report.accepted
    assert finding.mutant == "wrong-answer:digit-added"
    assert finding.accepted == "the count is one digit; 12 is moot"
    data = report.to_dict()
    assert data["findings"] == [] and data["accepted"][0]["accepted"] == finding.accepted
    stale = with_accept(
        base,
        {"mutant": "wrong-answer:digit-added", "reason": "moot"},
        {"mutant": "twice", "reason": "no longer needed"},
    )
    again = check_scenario(stale, world=depot)
    assert [(f.kind, f.mutant) for f in again.findings if not f.accepted] == [
        ("stale-accept", None)
    ]
    assert "accept names 'twice', which matches no mutant" in again.problems[0]


def test_accept_is_not_part_of_the_hash_and_needs_a_reason(depot: seahaven.World) -> None:
    base = weak_pack(depot).get("loose-answer")
    checked = with_accept(base, {"mutant": "twice", "reason": "why not"})
    assert checked.accept[0].mutant == "twice"
    assert checked.hash == base.hash
    assert "accept" not in base.to_data() and "accept" in checked.to_data()
    with pytest.raises(ValueError, match="reason"):
        Scenario.model_validate(
            {**base.to_data(), "world": depot, "accept": [{"mutant": "twice", "reason": " "}]}
        )
    with pytest.raises(ValueError, match="reason"):
        Scenario.model_validate({**base.to_data(), "world": depot, "accept": [{"mutant": "x"}]})


def test_accept_in_a_yaml_pack(tmp_path: Path) -> None:
    folder = tmp_path / "depotpack"
    folder.mkdir()
    (folder / "pack.yaml").write_text(
        "name: depotpack\nversion: '1'\nworld: weak_pack:depot\n", encoding="utf-8"
    )
    (folder / "tasks.yaml").write_text(
        """
- id: loose
  instructions: How many orders are open? Reply with the number.
  start: {setup_sql: "INSERT INTO orders VALUES ('o1', 'ada', 'open', 1)", clock_mode: fixed}
  grader:
    all_of:
      - answer: {contains: "1"}
      - nothing_else_changed
  solution:
    - {tool: count_open}
    - {tool: submit, arguments: {answer: "1"}}
  accept:
    - mutant: "wrong-answer:digit-added"
      reason: One order at most; a longer number cannot come up.
""",
        encoding="utf-8",
    )
    pack = ScenarioSet.from_directory(folder)
    [loose] = pack.scenarios
    assert loose.accept[0].reason.startswith("One order at most")
    [report] = check_pack(pack)
    assert report.ok, report.problems
    assert [f.mutant for f in report.accepted] == ["wrong-answer:digit-added"]


# --- the command line ---------------------------------------------------------------------------


def test_check_reports_each_finding_with_calls_grade_and_fix_and_exits_1() -> None:
    done = runner.invoke(build_app(), ["scenarios", "check", "weak_pack:pack"])
    assert done.exit_code == 1
    out = done.stdout
    assert (
        "FAIL  counts-rows: change-arg-1:set_status.order_id=o2 survived; "
        "collateral:set_status survived\n"
    ) in out
    assert "      survived change-arg-1:set_status.order_id=o2: a wrong episode passes" in out
    assert '        calls: set_status(order_id="o2", status="shipped")' in out
    assert "        grade: 1, passed" in out
    assert "ok    ship-strict (solution 1, idle 0; 9 mutants: 6 killed, 3 skipped;" in out
    assert "      broken extra-reads: a right episode" in out
    assert "6 scenarios of 8 in weak-depot failed:" in done.stderr


def test_check_json_carries_the_findings_as_data() -> None:
    done = runner.invoke(build_app(), ["scenarios", "check", "weak_pack:pack", "--json"])
    assert done.exit_code == 1
    data: list[dict[str, Any]] = json.loads(done.stdout)
    by_id = {report["scenario"]: report for report in data}
    loose = by_id["loose-answer"]
    assert loose["ok"] is False
    [finding] = loose["findings"]
    assert finding["kind"] == "survived" and finding["mutant"] == "wrong-answer:digit-added"
    assert finding["answer"] == "12" and finding["grade"]["passed"] is True
    assert finding["calls"][-1] == {"tool": "submit", "arguments": {"answer": "12"}, "error": None}
    assert loose["mutants"]["survived"] == 1 and loose["verdicts"]["submit-empty"] == "killed"
    assert by_id["ship-strict"]["ok"] is True and by_id["ship-strict"]["findings"] == []


def test_allow_unsolved_still_checks_what_it_can(depot: seahaven.World) -> None:
    unsolved = Scenario(
        id="unsolved",
        world=depot,
        instructions="How many orders are open?",
        start=START,
        grader={"answer": {"number": 2}},
    )
    refused = check_scenario(unsolved, world=depot)
    assert refused.problems[0].startswith("it has no reference solution")
    allowed = check_scenario(unsolved, world=depot, allow_unsolved=True)
    assert allowed.ok and allowed.verdicts == {"do-nothing": "killed", "submit-empty": "killed"}


def test_a_value_is_named_as_a_word_of_its_own_as_the_regular_expression_finds_it() -> None:
    import re

    from seahaven.evaluation.extras import names_word

    text = "ship o1 (not co1d), then o1_x, é1, o1. inv-0008 and ada@x.test; o2"
    values = ["o1", "co1d", "o1_x", "1", "x", "inv-0008", "ada@x.test", "o2", "", "é1", "d),"]
    for value in values:
        expected = re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) is not None
        assert names_word(text, value) == expected, value
    assert names_word("co1d o1", "o1") and not names_word("co1d", "o1")


def test_a_mutants_kind_is_read_from_its_name() -> None:
    assert kind_of("change-arg-1:set_status.order_id=o2") == "change-arg"
    assert kind_of("collateral:set_status") == "collateral"
    assert kind_of("reordered:2-3") == "reordered"
    assert all(kind_of(kind) == kind for kind in (*KINDS, *BENIGN_KINDS))
    with pytest.raises(ValueError, match="'no-such-kind-1' is of no kind the panel makes"):
        kind_of("no-such-kind-1")


def test_surviving_kinds_keeps_the_acceptable_survivors_and_lists_everything_else(
    depot: seahaven.World,
) -> None:
    pack = weak_pack(depot)
    found, problems = surviving_kinds(pack, {"collateral"})
    assert found == {
        "counts-rows": ["collateral"],
        "ignores-collateral": ["collateral"],
        "start-passes": ["collateral"],
        "any-row": ["collateral"],
    }
    # What is not of an acceptable kind is a problem, named with its scenario: other
    # survivors, a start that passes, a right episode a grader fails; never a collateral one.
    assert "counts-rows: change-arg-1:set_status.order_id=o2: " in "\n".join(problems)
    assert any(line.startswith("start-passes: do-nothing: ") for line in problems)
    assert any(line.startswith("counts-reads: extra-reads: a right episode") for line in problems)
    assert not any(": collateral:" in line for line in problems)
    # A survivor of a benign kind is no survivor: a right episode that fails stays a problem.
    found_all, left = surviving_kinds(pack, {*KINDS, *BENIGN_KINDS})
    assert "destructive" in found_all["any-row"] and "change-arg" in found_all["any-row"]
    assert any(line.startswith("counts-reads: extra-reads: a right episode") for line in left)
