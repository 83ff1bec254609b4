"""The ``airline`` pack agrees with tau2-bench: every task's gold actions score 1, wrong ones 0.

For each of the benchmark's 50 airline tasks the pack holds one scenario whose
solution is the task's gold actions. ``check_pack`` replays every one (it must
score 1) and an idle episode (it must not). Then the wrong trajectories: every
gold write dropped, and every gold write with one argument changed so that the
call still succeeds but writes something else, must fail the grade, as they
fail tau2-bench's database check.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import airline_world.scenarios
import pytest
from airline_support import converse, data_or_skip
from fixtures_src.pack import PACK_DIR, WRITE_TOOLS, scenario_id, write_pack

import seahaven
from seahaven.evaluation import check_pack
from seahaven.grading import Grade
from seahaven.scenarios import Scenario, ScenarioSet, Trial, load_pack, pack_specs

WORLD = airline_world.world

EXPECTED: dict[str, list[str]] = {
    "same": [],
    "refused": [],
    "unchanged": [],
}
"""The gold writes that make no wrong trajectory: dropped ones a later gold write undoes
(``same``), and ones the tool refuses in the gold replay itself (``refused``)."""


@pytest.fixture(scope="module")
def pack() -> ScenarioSet:
    return load_pack("airline")


def test_the_pack_is_published_by_name_with_the_benchmarks_tasks_and_splits(
    pack: ScenarioSet,
) -> None:
    [spec] = [spec for spec in pack_specs() if spec.name == "airline"]
    assert (spec.value, spec.distribution) == (
        "airline_world.scenarios:pack",
        "seahaven-world-airline",
    )
    assert (pack.name, len(pack)) == ("airline", 50)
    assert [scenario.id for scenario in pack] == [f"task-{number}" for number in range(50)]
    shipped = json.loads((PACK_DIR / "tasks.json").read_text())
    assert [scenario_id(task["id"]) for task in shipped] == [s.id for s in pack]
    assert {name: len(ids) for name, ids in pack.splits.items()} == {
        "train": 30,
        "test": 20,
        "base": 50,
    }
    assert set(pack.splits["train"]).isdisjoint(pack.splits["test"])
    assert pack.policy == (PACK_DIR / "policy.md").read_text()
    assert pack.policy.startswith("# Airline Agent Policy")
    assert airline_world.scenarios.task("task-14")["id"] == "14"


def test_scenarios_show_prints_the_packs_policy_with_the_scenario(pack: ScenarioSet) -> None:
    from typer.testing import CliRunner

    from seahaven import cli
    from seahaven.registry import plugins

    shown = CliRunner().invoke(
        cli.build_app(plugins.make_plugin_manager()),
        ["scenarios", "show", "airline/task-7", "--json"],
    )
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert (data["id"], data["policy"]) == ("task-7", pack.policy)
    assert [step["tool"] for step in data["solution"]][-1] == "message_user"


def test_ids_are_normalised_to_the_scenario_id_rules() -> None:
    assert scenario_id("7") == "task-7"
    assert scenario_id("Mobile Data:1 [PERSONA:Easy]") == "task-mobile-data-1--persona-easy-"


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


def test_every_gold_solution_scores_one_and_an_idle_episode_does_not(pack: ScenarioSet) -> None:
    reports = check_pack(pack)
    assert [(r.scenario, r.problems) for r in reports if not r.ok] == []
    assert all(r.solution_grade is not None and r.solution_grade.score == 1.0 for r in reports)
    assert all(r.idle_grade is not None and not r.idle_grade.passed for r in reports)


def test_the_facts_to_tell_are_found_as_tau2_bench_finds_them(pack: ScenarioSet) -> None:
    scenario = pack.get("task-7")  # the customer must be told 1628
    assert scenario.grader.spec()["all_of"][-1] == {"told_user": {"contains": ["1628"]}}
    assert converse(scenario, "You will be refunded $1,628 in all.").passed
    assert converse(scenario, "You will be refunded 1628 dollars.").passed
    told_nothing = converse(scenario, "Your reservations are cancelled.")
    assert not told_nothing.passed
    # The one part that fails (an any_of's other branch is listed as failing too).
    assert [check.name for check in told_nothing.checks if not check.passed] == [
        "an answer was submitted",
        'told the user "1628"',
    ]
    assert told_nothing.checks[-1].why.startswith('no message carried "1628"')


def test_the_customer_answers_the_reference_conversation_and_ends_it(
    pack: ScenarioSet,
) -> None:
    scenario = pack.get("task-7")
    assert scenario.user is not None and scenario.user.tools == ()
    assert "Your user id is 'daiki_muller_1116'." in scenario.user.instructions
    # The agent sees the customer's reason for calling, not what they know or how they behave.
    assert "XEHM4B and 59XX6W" in scenario.instructions
    assert "daiki_muller_1116" not in scenario.instructions
    with Trial(scenario, seed=1) as trial:
        who = trial.call("message_user", text="Hi! What is your user id?")
        assert "daiki_muller_1116" in who["reply"]
        for step in scenario.solution or ():
            if step.tool == "message_user":
                continue  # the agent's own words here, the gold actions' calls
            if step.tool in WRITE_TOOLS:
                asked = trial.call("message_user", text="May I do that? Shall I go ahead?")
                assert asked == {"reply": "Yes, please go ahead.", "ended": False}
            trial.call(step.tool, **step.arguments)
        done = trial.call("message_user", text="Done: 1628 back to you. Anything else?")
        assert done["ended"] is True
        assert trial.ended_by == "user" and trial.grade is not None and trial.grade.passed


# --- wrong trajectories -------------------------------------------------------------------------

CABINS = ("basic_economy", "economy", "business")


def _next_day(text: str) -> str:
    return (date.fromisoformat(text) + timedelta(days=1)).isoformat()


def _candidates(
    inst: seahaven.Instance, tool: str, name: str, value: Any, arguments: dict[str, Any]
) -> Iterator[Any]:
    """Other values for one argument of a gold write, each one a call that may well succeed."""
    db = inst.inspect()
    if isinstance(value, int) and not isinstance(value, bool):
        yield value + 1
    elif name == "reservation_id":
        owner = db.one("SELECT user_id FROM reservations WHERE reservation_id = ?", value)
        assert owner is not None
        for other in db.rows(
            "SELECT reservation_id FROM reservations WHERE user_id = ? AND reservation_id != ?"
            " ORDER BY reservation_id",
            owner["user_id"],
            value,
        ):
            yield other["reservation_id"]
        # A customer with one reservation: someone else's, which the tool does not refuse.
        yield "4WQ150" if value != "4WQ150" else "K1NW8N"
    elif name in ("user_id", "origin", "destination"):
        table, column = ("users", "user_id") if name == "user_id" else ("flights", "origin")
        for other in db.rows(f"SELECT DISTINCT {column} AS v FROM {table} ORDER BY 1 LIMIT 3"):
            if other["v"] != value:
                yield other["v"]
    elif name == "payment_id":
        user = (
            arguments.get("user_id")
            or db.one(
                "SELECT user_id FROM reservations WHERE reservation_id = ?",
                arguments["reservation_id"],
            )["user_id"]
        )
        for other in db.rows(
            "SELECT id FROM payment_methods WHERE user_id = ? AND id != ? ORDER BY position",
            user,
            value,
        ):
            yield other["id"]
    elif name == "cabin":
        yield from (cabin for cabin in CABINS if cabin != value)
    elif name == "insurance":
        yield "no" if value == "yes" else "yes"
    elif name == "flight_type":
        yield "one_way" if value == "round_trip" else "round_trip"
    elif name == "passengers":
        yield [{**value[0], "dob": "1990-01-01"}, *value[1:]]
    elif name == "flights":
        yield [*value[:-1], {**value[-1], "date": _next_day(value[-1]["date"])}]
        if len(value) > 1:
            yield value[:-1]
    elif name == "payment_methods":
        yield [*value[:-1], {**value[-1], "amount": value[-1]["amount"] + 1}]


Steps = list[tuple[str, dict[str, Any]]]


def _row(inst: seahaven.Instance, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    where = " AND ".join(f"{column} = ?" for column in key)
    return inst.inspect().one(f"SELECT * FROM {table} WHERE {where}", *key.values())


def _touched(inst: seahaven.Instance) -> set[tuple[str, str]]:
    return {(record.table, json.dumps(record.key, sort_keys=True)) for record in inst.change_log()}


def _replay(
    scenario: Scenario, steps: Steps, gold: seahaven.Instance, watch: int | None = None
) -> tuple[Grade, bool, bool]:
    """Play the steps (refusals and all: the conversation's messages too), and grade them.

    Also says whether the step at ``watch`` was refused, and whether the episode ended
    in another state than ``gold`` (an instance the gold actions played): every row
    either of them changed is read back from both and compared, without the grader.
    """
    with Trial(scenario, seed=1) as trial:
        for index, (tool, arguments) in enumerate(steps):
            try:
                trial.call(tool, **arguments)
            except seahaven.ToolError:
                if index == watch:
                    # Refused: not a trajectory worth grading, and the search moves on.
                    return trial.finish(), True, False
        grade = trial.finish()
        rows = _touched(trial.instance) | _touched(gold)
        differs = any(
            _row(trial.instance, table, json.loads(key)) != _row(gold, table, json.loads(key))
            for table, key in rows
        )
        return grade, False, differs


def _wrong_trajectories(
    scenario: Scenario, probe: seahaven.Instance
) -> Iterator[tuple[str, str, Grade | None]]:
    """Each gold write dropped, and each with the first change of an argument that the tool
    does not refuse and that leaves the database in another state than the gold actions do.

    Yields (kind, label, grade); kind ``same`` for a drop that leaves the gold end state
    (a write the gold actions undo later), ``refused`` for a gold write the tool refuses,
    ``unchanged`` for a write no change was found for.
    """
    # The conversation's messages stay in: a wrong trajectory differs from the reference
    # conversation in one write, and the customer answers it as they answer the reference.
    steps = [(s.tool, dict(s.arguments)) for s in scenario.solution or ()]
    if not any(tool in WRITE_TOOLS for tool, _ in steps):
        return
    with scenario.resolve_world().instance("initial") as gold:
        refused_in_gold = set()
        for index, (tool, arguments) in enumerate(steps):
            if tool == "message_user":
                continue  # the customer's part: nothing of the database's
            try:
                gold.call(tool, **arguments)
            except seahaven.ToolError:
                refused_in_gold.add(index)
        for index, (tool, arguments) in enumerate(steps):
            if tool not in WRITE_TOOLS:
                continue
            label = f"{scenario.id}: {tool} #{index}"
            if index in refused_in_gold:
                # tau2-bench's gold actions hold a few calls its own tools refuse (and its
                # evaluator logs and skips): they write nothing to drop or change.
                yield "refused", label, None
                continue
            grade, _, differs = _replay(scenario, steps[:index] + steps[index + 1 :], gold)
            yield ("dropped" if differs else "same"), f"{label} dropped", grade
            found = None
            for name, value in arguments.items():
                for candidate in _candidates(probe, tool, name, value, arguments):
                    wrong = [
                        *steps[:index],
                        (tool, {**arguments, name: candidate}),
                        *steps[index + 1 :],
                    ]
                    grade, refused, differs = _replay(scenario, wrong, gold, index)
                    if not refused and differs:
                        found = (f"{label} {name}={candidate!r}", grade)
                        break
                if found is not None:
                    break
            if found is None:
                yield "unchanged", f"{label}: no argument change found", None
            else:
                yield "changed", *found


def test_every_gold_write_dropped_or_changed_fails_the_grade(pack: ScenarioSet) -> None:
    kinds = {"dropped": 0, "changed": 0, "same": 0, "refused": 0, "unchanged": 0}
    labels: dict[str, list[str]] = {"same": [], "refused": [], "unchanged": []}
    passing: list[str] = []
    writes = sum(
        1 for scenario in pack for step in scenario.solution or () if step.tool in WRITE_TOOLS
    )
    with WORLD.instance("initial") as probe:
        for scenario in pack:
            for kind, label, grade in _wrong_trajectories(scenario, probe):
                kinds[kind] += 1
                if kind in labels:
                    labels[kind].append(label)
                if kind in ("dropped", "changed") and grade is not None and grade.passed:
                    passing.append(label)
    print(f"\nairline: {writes} gold writes; wrong trajectories (all failing): {kinds}")
    assert passing == []
    assert labels == EXPECTED
    # Every other write is dropped once and changed once.
    done = writes - len(EXPECTED["refused"])
    assert kinds["dropped"] == done - len(EXPECTED["same"])
    assert kinds["changed"] == done
