"""The ``telecom`` pack agrees with tau2-bench: every reference conversation scores 1, wrong ones 0.

For each of the benchmark's 20 small telecom tasks the pack holds one scenario:
the task's setup as its start, the task's customer as a scripted user who acts
on their own phone when the agent asks, and the task's assertions as its
grader. The reference conversation (the agent's gold calls, and a message
asking the customer for each of theirs) must score 1; doing nothing, and the
conversation with any one gold action left out, must fail, as each fails
tau2-bench's own evaluator (``benchmarks/tau2_domains.py`` measures both
verdicts side by side).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
import telecom_world.scenarios
from fixtures_src.pack import ACCEPTED, PACK_DIR, policy, scenario_id, write_pack
from telecom_support import data_or_skip
from telecom_world.phone.tools import TOOL_NAMES

import seahaven
from seahaven.evaluation import check_pack
from seahaven.evaluation.mutants import kind_of
from seahaven.grading import Grade
from seahaven.scenarios import Scenario, ScenarioSet, Trial, load_pack, pack_specs

ROAMING = "task--mobile_data_issue-user_abroad_roaming_enabled_off-persona-none-"
OVERDUE = "task--service_issue-overdue_bill_suspension-persona-easy-"


@pytest.fixture(scope="module")
def pack() -> ScenarioSet:
    return load_pack("telecom")


def play(scenario: Scenario, steps: list[Any], seed: int = 1) -> tuple[Grade, Trial]:
    """Play ``steps`` (refusals and all) in a trial until it ends or they run out; grade it.

    The trial is returned closed, its record intact.
    """
    trial = Trial(scenario, seed=seed)
    try:
        for step in steps:
            if trial.done:
                break
            if step.tool == "submit":
                trial.submit(str(step.arguments["answer"]))
                break
            with contextlib.suppress(seahaven.ToolError):
                trial.call(step.tool, **step.arguments)
        return trial.finish(), trial
    finally:
        trial.close()


def test_the_pack_is_published_by_name_with_the_small_split_and_the_telecom_policy(
    pack: ScenarioSet,
) -> None:
    [spec] = [spec for spec in pack_specs() if spec.name == "telecom"]
    assert (spec.value, spec.distribution) == (
        "telecom_world.scenarios:pack",
        "seahaven-world-telecom",
    )
    shipped = json.loads((PACK_DIR / "tasks_small.json").read_text())
    assert (pack.name, len(pack)) == ("telecom", 20)
    assert [scenario.id for scenario in pack] == [scenario_id(task["id"]) for task in shipped]
    assert pack.splits == {"small": tuple(scenario.id for scenario in pack)}
    # The policy is the main policy and the tech support manual, each in its tag.
    assert pack.policy == policy(PACK_DIR)
    assert pack.policy.startswith("<main_policy>\n# Telecom Agent Policy")
    assert "</main_policy>\n<tech_support_policy>\n" in pack.policy
    assert telecom_world.scenarios.task(ROAMING)["id"] == (
        "[mobile_data_issue]user_abroad_roaming_enabled_off[PERSONA:None]"
    )
    with pytest.raises(seahaven.WorldBug):
        telecom_world.scenarios.task("task-0")


def test_ids_are_normalised_to_the_scenario_id_rules() -> None:
    assert scenario_id("[service_issue]airplane_mode_on[PERSONA:None]") == (
        "task--service_issue-airplane_mode_on-persona-none-"
    )


def test_the_committed_pack_is_the_one_the_generator_writes(tmp_path: Path) -> None:
    write_pack(data_or_skip(), tmp_path)
    written = sorted(path.name for path in tmp_path.iterdir())
    assert written == sorted(
        path.name
        for path in PACK_DIR.iterdir()
        if path.suffix != ".py" and path.is_file() and path.name != "PROVENANCE.md"
    )
    for name in written:
        assert (tmp_path / name).read_bytes() == (PACK_DIR / name).read_bytes(), name


def test_each_scenario_is_its_tasks_setup_customer_and_assertions(pack: ScenarioSet) -> None:
    scenario = pack.get(OVERDUE)
    task = telecom_world.scenarios.task(OVERDUE)
    assert scenario.start.startup == {
        "initialization_actions": task["initial_state"]["initialization_actions"]
    }
    assert scenario.user is not None and scenario.user.tools == TOOL_NAMES
    assert "If the agent asks you to pay a bill, you accept." in scenario.user.instructions
    assert scenario.instructions.count("'No Service'") == 1
    [*assertions, ending] = scenario.grader.spec()["all_of"]
    assert assertions == [
        {
            "exists": {
                "table": "device",
                "store": "phone",
                "where": {"network_connection_status": "connected"},
            }
        },
        {"absent": {"table": "bills", "where": {"bill_id": "B1234321", "status": {"not": "Paid"}}}},
    ]
    assert ending == {"any_of": ["submitted", "user_ended"]}
    transfer = pack.get("task--service_issue-lock_sim_card_pin-persona-hard-")
    assert transfer.grader.spec()["all_of"][-1] == {"called": {"tool": "transfer_to_human_agents"}}


def test_the_pack_passes_the_mutant_panel_accepting_only_what_tau2_bench_passes(
    pack: ScenarioSet,
) -> None:
    reports = check_pack(pack)
    assert [(r.scenario, r.problems) for r in reports if not r.ok] == []
    assert all(r.solution_grade is not None and r.solution_grade.score == 1.0 for r in reports)
    assert all(r.idle_grade is not None and not r.idle_grade.passed for r in reports)
    accepted = {kind_of(f.mutant or "") for r in reports for f in r.accepted}
    assert accepted <= set(ACCEPTED)
    # The transfers end with the hand-off, not with what was said: telling nothing passes
    # tau2-bench's reward there, and only there.
    silent = sorted(r.scenario for r in reports for f in r.accepted if f.mutant == "tell-nothing")
    assert silent == sorted(s.id for s in pack if "transfer" in s.tags)


def test_every_reference_conversation_scores_one_and_doing_nothing_does_not(
    pack: ScenarioSet,
) -> None:
    for scenario in pack:
        grade, _ = play(scenario, list(scenario.solution or ()))
        assert grade.passed and grade.score == 1.0, (scenario.id, grade.summary())
        idle, _ = play(scenario, [])
        assert not idle.passed, scenario.id


def test_a_telecom_task_plays_to_a_pass_with_a_user_who_changes_the_phone_as_told(
    pack: ScenarioSet,
) -> None:
    scenario = pack.get(ROAMING)
    with Trial(scenario, seed=7) as trial:
        assert "toggle_roaming" not in {tool["name"] for tool in trial.tools()}
        hello = trial.call("message_user", text="Hi! Can I have your name and phone number?")
        assert "555-123-2002" in hello["reply"] and not hello["ended"]
        customer = trial.call("get_customer_by_phone", phone_number="555-123-2002")
        assert customer.line_ids == ["L1001", "L1002", "L1003"]
        line = trial.call("get_details_by_id", id="L1002")
        assert line.roaming_enabled is True  # the line may roam: the phone's setting is off
        asked = trial.call("message_user", text="Please turn on data roaming on your phone.")
        assert asked == {"reply": "I switched data roaming.", "ended": False}
        done = trial.call("message_user", text="Thanks! Could you run a speed test?")
        assert done["ended"] is True
        assert trial.ended_by == "user" and trial.grade is not None and trial.grade.passed
        roaming = [
            record
            for record in trial.instance.change_log()
            if record.table == "device" and "roaming_enabled" in (record.after or {})
        ]
        assert [record.actor for record in roaming] == ["user"]
        user_calls = [call.tool for call in trial.instance.call_log() if call.actor == "user"]
        assert user_calls == ["toggle_roaming", "run_speed_test"]


def test_the_customer_ends_the_call_whatever_the_phone_shows_and_the_grade_tells(
    pack: ScenarioSet,
) -> None:
    """A scripted customer says its lines; the grade reads the phone, as tau2-bench's does."""
    scenario = pack.get(ROAMING)
    with Trial(scenario, seed=7) as trial:
        trial.call("message_user", text="Could you give me your name?")
        assert trial.call("message_user", text="Could you run a speed test?")["ended"] is True
        assert trial.grade is not None and not trial.grade.passed
        failed = [check.name for check in trial.grade.failed]
        assert [name for name in failed if "phone.diagnostics" in name] == [
            "a row of phone.diagnostics where mobile_data_working=true",
            "a row of phone.diagnostics where speed_mbps >= 200, speed_description pattern "
            '"^excellent$"',
        ]


def _without(steps: list[Any], index: int) -> list[Any]:
    return steps[:index] + steps[index + 1 :]


def test_the_conversation_without_any_one_gold_action_fails(pack: ScenarioSet) -> None:
    """Each gold action left out (the agent's call, or the message asking the customer for
    theirs) fails, as it fails tau2-bench's evaluator (0 for every one of the 27)."""
    left_out = 0
    for scenario in pack:
        task = telecom_world.scenarios.task(scenario.id)
        gold = task["evaluation_criteria"]["actions"]
        steps = list(scenario.solution or ())
        # The reference conversation: a greeting and a look-up, then one step per gold action.
        assert len(steps) >= 2 + len(gold)
        for index in range(len(gold)):
            grade, _ = play(scenario, _without(steps, 2 + index))
            assert not grade.passed, (scenario.id, index, grade.summary())
            left_out += 1
    assert left_out == 27
