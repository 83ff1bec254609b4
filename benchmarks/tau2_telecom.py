"""The telecom half of ``benchmarks/tau2_domains.py``: the ``telecom`` world against tau2-bench.

For every small telecom task, tau2-bench's side (``tau2_side.py telecom``) runs
the task's setup and its gold actions (the agent's and the user's) in its own
environment, reads the phone and the line back (``TELECOM_PROBES``), and
grades the episode and, for each gold action, the episode without it. Here the
same, task by task:

* **agreement**: every gold call and every probe answers the same; the end
  databases are the same (the carrier's table by table through the fixture
  generator's ``tables``, the phone through its ``phone_of``); and the verdicts
  are the same: the scenario's grader on the gold actions and on each episode
  with one gold action left out, against tau2-bench's reward on the same;
* **speed**: an episode (an instance made from the task's start, the task's
  setup run as it starts, and the gold calls), and a grade (tau2-bench's
  environment check, which replays the episode's calls on a fresh
  environment to check its assertions, and its action check; here the
  scenario's grader, on the episode the trial holds).
"""

from __future__ import annotations

import importlib
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic_core import to_jsonable_python

import seahaven
from seahaven.scenarios import Scenario, Trial, load_pack

ROOT = Path(__file__).resolve().parents[1]

# What tau2_side.py reads back after the gold actions, in its order (its TELECOM_PROBES).
PROBES: list[tuple[str, str, dict[str, Any]]] = [
    ("user", "check_status_bar", {}),
    ("user", "check_network_status", {}),
    ("user", "check_network_mode_preference", {}),
    ("user", "run_speed_test", {}),
    ("user", "check_sim_status", {}),
    ("user", "check_data_restriction_status", {}),
    ("user", "check_apn_settings", {}),
    ("user", "check_wifi_status", {}),
    ("user", "check_wifi_calling_status", {}),
    ("user", "check_vpn_status", {}),
    ("user", "check_installed_apps", {}),
    ("user", "check_app_status", {"app_name": "messaging"}),
    ("user", "check_app_permissions", {"app_name": "messaging"}),
    ("user", "can_send_mms", {}),
    ("user", "check_payment_request", {}),
    ("assistant", "get_customer_by_id", {"customer_id": "C1001"}),
    ("assistant", "get_details_by_id", {"id": "L1002"}),
    ("assistant", "get_bills_for_customer", {"customer_id": "C1001"}),
    ("assistant", "get_data_usage", {"customer_id": "C1001", "line_id": "L1002"}),
]


def _generator() -> tuple[ModuleType, ModuleType]:
    """The telecom world's committed generators (the fixture's and the pack's)."""
    for name in [name for name in sys.modules if name.split(".")[0] == "fixtures_src"]:
        del sys.modules[name]
    sys.path.insert(0, str(ROOT / "worlds" / "telecom"))
    try:
        return importlib.import_module("fixtures_src.generate"), importlib.import_module(
            "fixtures_src.pack"
        )
    finally:
        sys.path.pop(0)


def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _answer(call: Any) -> Any:
    """One call's answer as tau2-bench's replay compares them, or its refusal's text."""
    try:
        return _parsed(to_jsonable_python(call()))
    except seahaven.ToolError as refused:
        return f"Error: {refused.message}"


def _call(instance: seahaven.Instance, requestor: str, tool: str, arguments: dict[str, Any]) -> Any:
    if requestor == "user":
        with instance.acting_as("user"):
            return _answer(lambda: instance.call(tool, **arguments))
    return _answer(lambda: instance.call(tool, **arguments))


def _theirs(results: list[dict[str, Any]]) -> list[Any]:
    return [
        result["content"] if result["error"] else _parsed(result["content"]) for result in results
    ]


def _plain_episode(
    scenario: Scenario, actions: list[dict[str, Any]], clock: Callable[[], float]
) -> tuple[float, seahaven.Instance, list[Any]]:
    """The task's start (its setup run as the instance starts) and its gold calls."""
    world = scenario.resolve_world()
    started = clock()
    # In memory, as a trial's and every runner's instances are.
    instance = world.instance(
        **scenario.start.instance_options(seed=scenario.start.seed), storage="memory"
    )
    answers = [
        _call(instance, action["requestor"], action["name"], action["arguments"])
        for action in actions
    ]
    return clock() - started, instance, answers


def _graded(
    scenario: Scenario,
    actions: list[dict[str, Any]],
    seed: int,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, Any]:
    """The gold calls (or some of them) in a trial, ended by the agent; the grade and its time."""
    trial = Trial(scenario, seed=seed)
    try:
        for action in actions:
            if action["requestor"] == "user":
                with trial.instance.acting_as("user"):
                    _answer(lambda a=action: trial.instance.call(a["name"], **a["arguments"]))
            else:
                _answer(lambda a=action: trial.call(a["name"], **a["arguments"]))
        started = clock()
        grade = trial.submit("(the agent's last message)")
        return clock() - started, grade
    finally:
        trial.close()


def _databases_differ(
    generate: ModuleType, instance: seahaven.Instance, saved: dict[str, Any]
) -> list[str]:
    """The carrier's tables, and the phone, that differ from tau2-bench's end databases."""
    from telecom_world.phone.store import load

    theirs = generate.tables(saved["db"])
    differing = []
    view = instance.inspect()
    for table, columns in generate.COLUMNS.items():
        mine = view.rows(f"SELECT {', '.join(columns)} FROM {table}")
        if Counter(tuple(row.values()) for row in mine) != Counter(theirs[table]):
            differing.append(table)
    with instance.bulk() as reading:
        phone = load(reading.worlds.phone.db)
    if phone != generate.phone_of(saved["user_db"]):
        differing.append("the phone")
    return differing


def run_telecom(
    theirs: dict[str, dict[str, Any]], clock: Callable[[], float] = time.perf_counter
) -> dict[str, Any]:
    """Agreement and speed for telecom, given tau2-bench's lines by task id, timed on ``clock``."""
    generate, _ = _generator()
    import telecom_world.scenarios

    pack = load_pack("telecom")
    problems: list[str] = []
    verdicts = {"agree": 0, "differ": 0}
    timings: dict[str, list[float]] = {
        "ours_plain": [],
        "ours_grade": [],
        "tau2_episode": [],
        "tau2_grade": [],
    }
    for seed, scenario in enumerate(pack, start=3000):
        task = telecom_world.scenarios.task(scenario.id)
        line = theirs[task["id"]]
        actions = task["evaluation_criteria"].get("actions") or []
        plain, instance, answers = _plain_episode(scenario, actions, clock)
        try:
            for number, (mine, tau2) in enumerate(
                zip(answers, _theirs(line["results"]), strict=True)
            ):
                if mine != tau2:
                    problems.append(f"{scenario.id} call {number}: {mine!r} != {tau2!r}")
            database = json.loads(Path(line["database"]).read_text())
            for table in _databases_differ(generate, instance, database):
                problems.append(f"{scenario.id}: {table} differs")
            probed = [_call(instance, *probe) for probe in PROBES]
            for (_, tool, _), mine, tau2 in zip(
                PROBES, probed, _theirs(line["probes"]), strict=True
            ):
                if mine != tau2:
                    problems.append(f"{scenario.id} {tool}: {mine!r} != {tau2!r}")
        finally:
            instance.destroy()
        graded, grade = _graded(scenario, actions, seed, clock)
        runs = [(grade.passed, line["reward"] == 1.0, "gold actions")]
        for index, reward in enumerate(line["dropped_rewards"]):
            _, without = _graded(scenario, actions[:index] + actions[index + 1 :], seed)
            runs.append((without.passed, reward == 1.0, f"gold action {index} left out"))
        for ours, tau2, what in runs:
            verdicts["agree" if ours == tau2 else "differ"] += 1
            if ours != tau2:
                problems.append(f"{scenario.id} ({what}): Seahaven {ours}, tau2-bench {tau2}")
        timings["ours_plain"].append(plain)
        timings["ours_grade"].append(graded)
        timings["tau2_episode"].append(line["episode_s"])
        timings["tau2_grade"].append(line["grade_s"])
    medians = {key: statistics.median(values) for key, values in timings.items()}
    # The trial-episode column of the other domains: here the plain episode is the trial's.
    medians["ours_episode"] = medians["ours_plain"]
    return {
        "domain": "telecom",
        "tasks": len(pack),
        "problems": problems,
        "verdicts": verdicts,
        **medians,
    }
