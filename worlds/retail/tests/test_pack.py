"""The ``retail`` pack agrees with tau2-bench: every task's gold actions score 1, wrong ones 0.

For each of the benchmark's 114 retail tasks the pack holds one scenario whose
solution is the task's gold actions. ``check_pack`` replays every one (it must
score 1) and an idle episode (it must not). Then the wrong trajectories: every
gold write dropped, and every gold write with one argument changed so that the
call still succeeds but writes something else, must fail the grade, as they
fail tau2-bench's database check.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import retail_world.scenarios
from fixtures_src.pack import PACK_DIR, WRITE_TOOLS, scenario_id, write_pack
from retail_support import converse, data_or_skip

import seahaven
from seahaven.evaluation import check_pack
from seahaven.grading import Grade
from seahaven.scenarios import Scenario, ScenarioSet, Trial, load_pack, pack_specs

WORLD = retail_world.world

EXPECTED: dict[str, list[str]] = {
    # Each changes a customer's address and, later, changes it back.
    # (Numbered by step of the reference conversation, its messages included.)
    "same": ["task-22: modify_user_address #3 dropped", "task-110: modify_user_address #4 dropped"],
    # An exchange of an order that is pending by then, and of one item listed twice.
    "refused": [
        "task-64: exchange_delivered_order_items #8",
        "task-105: exchange_delivered_order_items #2",
    ],
    "unchanged": [],
}
"""The gold writes that make no wrong trajectory: dropped ones a later gold write undoes
(``same``), and ones the tool refuses in the gold replay itself (``refused``)."""


@pytest.fixture(scope="module")
def pack() -> ScenarioSet:
    return load_pack("retail")


def test_the_pack_is_published_by_name_with_the_benchmarks_tasks_and_splits(
    pack: ScenarioSet,
) -> None:
    [spec] = [spec for spec in pack_specs() if spec.name == "retail"]
    assert (spec.value, spec.distribution) == (
        "retail_world.scenarios:pack",
        "seahaven-world-retail",
    )
    assert (pack.name, len(pack)) == ("retail", 114)
    assert [scenario.id for scenario in pack] == [f"task-{number}" for number in range(114)]
    shipped = json.loads((PACK_DIR / "tasks.json").read_text())
    assert [scenario_id(task["id"]) for task in shipped] == [s.id for s in pack]
    assert {name: len(ids) for name, ids in pack.splits.items()} == {
        "train": 74,
        "test": 40,
        "base": 114,
    }
    assert set(pack.splits["train"]).isdisjoint(pack.splits["test"])
    assert pack.policy == (PACK_DIR / "policy.md").read_text()
    assert pack.policy.startswith("# Retail agent policy")
    assert retail_world.scenarios.task("task-14")["id"] == "14"


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


def test_the_facts_a_judged_assertion_names_are_told_user_checks(pack: ScenarioSet) -> None:
    # Retail's reward basis is DB and NL_ASSERTION. tau2-bench's communicate check does not
    # read communicate_info here, but its judge's assertions name each fact the agent must
    # tell: that mechanical part is checked, the rest of each assertion is the judge's.
    tagged = {
        tag: [s.id for s in pack if tag in s.tags] for tag in ("communicate-info", "nl-assertions")
    }
    assert {tag: len(ids) for tag, ids in tagged.items()} == {
        "communicate-info": 36,
        "nl-assertions": 40,
    }
    told: dict[str, list[str]] = {}
    for scenario in pack:
        matches, ending, *facts = scenario.grader.spec()["all_of"]
        assert (matches, ending) == (
            {"matches_solution": {}},
            {"any_of": ["submitted", "user_ended"]},
        )
        if facts:
            told[scenario.id] = [fact["told_user"]["contains"][0] for fact in facts]
        task = retail_world.scenarios.task(scenario.id)
        assert bool(task["evaluation_criteria"].get("nl_assertions")) == (
            "nl-assertions" in scenario.tags
        )
    assert (len(told), sum(len(facts) for facts in told.values())) == (33, 58)
    assert told["task-67"] == ["829.43"]
    # Tasks 30 to 32 have facts and no assertion: their judge has nothing to check.
    assert not {"task-30", "task-31", "task-32"} & set(told)
    scenario = pack.get("task-67")
    assert converse(scenario, "Your last order came to $829.43 in all.").passed
    assert not converse(scenario, "Your last order is on its way.").passed


# --- wrong trajectories -------------------------------------------------------------------------

ADDRESS = ("address1", "address2", "city", "state", "country", "zip")


def _candidates(
    inst: seahaven.Instance, tool: str, name: str, value: Any, arguments: dict[str, Any]
) -> Iterator[Any]:
    """Other values for one argument of a gold write, each one a call that may well succeed."""
    db = inst.inspect()
    order = db.one(
        "SELECT order_id, user_id, status FROM orders WHERE order_id = ?",
        arguments.get("order_id"),
    )
    if name == "order_id" and order is not None:
        for other in db.rows(
            "SELECT order_id FROM orders WHERE order_id != ? AND status = ?"
            " ORDER BY user_id != ?, order_id LIMIT 3",
            value,
            order["status"],
            order["user_id"],
        ):
            yield other["order_id"]
    elif name == "user_id":
        for other in db.rows("SELECT user_id FROM users WHERE user_id != ? LIMIT 2", value):
            yield other["user_id"]
    elif name == "reason":
        yield "ordered by mistake" if value == "no longer needed" else "no longer needed"
    elif name in ADDRESS:
        yield f"{value} 2"
    elif name == "payment_method_id" and order is not None:
        for other in db.rows(
            "SELECT id FROM payment_methods WHERE user_id = ? AND id != ? ORDER BY position",
            order["user_id"],
            value,
        ):
            yield other["id"]
    elif name == "payment_method_id":
        for other in db.rows(
            "SELECT id FROM payment_methods WHERE user_id = ? AND id != ? ORDER BY position",
            arguments.get("user_id"),
            value,
        ):
            yield other["id"]
    elif name == "item_ids" and order is not None:
        if len(value) > 1:
            yield value[:-1]
        for other in db.rows(
            "SELECT item_id FROM order_items WHERE order_id = ? ORDER BY position",
            arguments["order_id"],
        ):
            if other["item_id"] not in value:
                yield [*value[:-1], other["item_id"]]
        # Nothing: a return of no item at all is not refused.
        yield []
    elif name == "new_item_ids" and value:
        product = db.one("SELECT product_id FROM variants WHERE item_id = ?", value[-1])
        assert product is not None
        for other in db.rows(
            "SELECT item_id FROM variants WHERE product_id = ? AND available = 1"
            " AND item_id != ? ORDER BY position",
            product["product_id"],
            value[-1],
        ):
            yield [*value[:-1], other["item_id"]]


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
    print(f"\nretail: {writes} gold writes; wrong trajectories (all failing): {kinds}")
    assert passing == []
    assert labels == EXPECTED
    # Every other write is dropped once and changed once.
    done = writes - len(EXPECTED["refused"])
    assert kinds["dropped"] == done - len(EXPECTED["same"])
    assert kinds["changed"] == done
