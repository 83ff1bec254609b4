"""Scenarios: tasks on reward-free worlds, packed, published, bound to episodes and graded.

``Scenario`` (a start, instructions, a grader, a budget, a solution),
``ScenarioSet`` (a named, versioned pack with splits, in Python or YAML),
the ``seahaven.scenarios`` entry-point group that finds packs by name, and
``Trial``, the one scenario-bound episode every door drives.
"""

from __future__ import annotations

from seahaven.scenarios.model import (
    DEFAULT_BUDGET,
    SUBMIT_TOOL,
    Accept,
    Scenario,
    Start,
    ToolCall,
    read_calls,
)
from seahaven.scenarios.pack import PACK_FILE, ScenarioSet
from seahaven.scenarios.registry import (
    SCENARIOS_GROUP,
    PackSpec,
    find_scenario,
    import_pack,
    is_pack_path,
    load_pack,
    pack_folder,
    pack_specs,
    refresh_packs,
    split_reference,
)
from seahaven.scenarios.trial import EpisodeOver, Replay, Trial, replay_solution, submit_listing

__all__ = [
    "DEFAULT_BUDGET",
    "PACK_FILE",
    "SCENARIOS_GROUP",
    "SUBMIT_TOOL",
    "Accept",
    "EpisodeOver",
    "PackSpec",
    "Replay",
    "Scenario",
    "ScenarioSet",
    "Start",
    "ToolCall",
    "Trial",
    "find_scenario",
    "import_pack",
    "is_pack_path",
    "load_pack",
    "pack_folder",
    "pack_specs",
    "read_calls",
    "refresh_packs",
    "replay_solution",
    "split_reference",
    "submit_listing",
]
