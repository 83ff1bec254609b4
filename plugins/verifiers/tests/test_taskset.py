"""The taskset as verifiers loads it: by id, with its harness and env, a task per scenario."""

from __future__ import annotations

from pathlib import Path

from conftest import run_python

from seahaven.scenarios import load_pack

LOADED = """
import json
from verifiers.v1.utils.loaders import (
    default_harness_id, environment_class, load_taskset, taskset_config_type,
)
config = taskset_config_type("seahaven-verifiers").model_validate(
    {"id": "seahaven-verifiers", "pack": "company", "split": "test"}
)
tasks = list(load_taskset(config))
first = tasks[0]
print(json.dumps({
    "harness": default_harness_id("seahaven-verifiers"),
    "env": environment_class("seahaven-verifiers").__name__,
    "ids": [task.data.scenario for task in tasks],
    "keys": [task.key for task in tasks],
    "first": first.data.model_dump(mode="json"),
}))
"""


def test_verifiers_loads_a_task_per_scenario_with_the_taskset_s_harness_and_env(
    tmp_path: Path,
) -> None:
    pack = load_pack("company")
    found = run_python(tmp_path, LOADED)
    assert found["harness"] == "seahaven-verifiers"
    assert found["env"] == "SeahavenEnv"
    test = pack.split("test")
    assert found["ids"] == [f"company/{scenario.id}" for scenario in test]
    assert found["keys"] == [scenario.hash for scenario in test]
    first = found["first"]
    assert first["prompt"] == test[0].instructions
    assert first["scenario_hash"] == test[0].hash
    assert first["budget"] == test[0].budget
    assert first["pack_source"] == "company"
    # What the agent may know, and nothing of the grader or the solution.
    assert "grader" not in first and "solution" not in first


REWARDS = """
import json
from seahaven_verifiers import check_rewards
print(json.dumps(check_rewards([
    {"name": "a", "score": 1.0}, {"name": "a", "score": 0.0}, {"name": "b", "score": None},
])))
"""


def test_checks_become_named_components_and_a_repeated_name_is_told_apart(
    tmp_path: Path,
) -> None:
    assert run_python(tmp_path, REWARDS) == {"check: a": 1.0, "check: a #2": 0.0, "check: b": 0.0}
