"""The ``telecom`` pack: tau2-bench's small telecom task set, one scenario each.

The YAML files beside this module are written by ``fixtures_src/pack.py`` from
the benchmark's ``tasks_small.json``, which ships here too (tau2-bench's data,
MIT: see ``LICENSE``) with its policy documents; ``policy.md`` is the policy
the agent gets, put together from them as the benchmark puts it together. The
pack is published under the ``seahaven.scenarios`` entry point as ``telecom``
and read the first time it is asked for; ``task(scenario_id)`` gives the
benchmark's own task a scenario was made from.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

import seahaven
from seahaven.scenarios import ScenarioSet

__all__ = ["pack", "task", "tasks"]


@cache
def pack() -> ScenarioSet:
    """The ``telecom`` pack, loaded from the files shipped in this package."""
    return ScenarioSet.from_package("telecom_world", "scenarios")


@cache
def tasks() -> dict[str, dict[str, Any]]:
    """tau2-bench's small telecom tasks as it ships them, by the id of the scenario of each."""
    text = resources.files(__package__).joinpath("tasks_small.json").read_text(encoding="utf-8")
    loaded: list[dict[str, Any]] = json.loads(text)
    return {"task-" + re.sub(r"[^a-z0-9_-]", "-", item["id"].lower()): item for item in loaded}


def task(scenario_id: str) -> dict[str, Any]:
    """The benchmark's task a scenario of the pack was made from; a ``WorldBug`` for another id."""
    found = tasks().get(scenario_id)
    if found is None:
        raise seahaven.WorldBug(f"the telecom pack has no scenario {scenario_id!r}")
    return found
