"""A pack as Inspect samples: one per scenario of the chosen split, in the pack's order.

A sample's id is the scenario's id; its input is the scenario's instructions as
the user's message, after the pack's policy document as a system message when
the pack has one; its metadata names the scenario (``pack/id``), its hash, its
tags, its pack and version, its world and its budget. The user's message also
carries the scenario's ``pack/id`` and hash in its own metadata, which no provider sends
to a model, for scripted models that play a scenario's reference solution
(``seahaven.inspect.testing``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser

from seahaven.evaluation import plan
from seahaven.scenarios import Scenario, ScenarioSet

__all__ = ["SCENARIO_HASH_KEY", "SCENARIO_KEY", "dataset", "sample"]

#: The key of a sample's user message's metadata that names its scenario (``pack/id``).
SCENARIO_KEY = "seahaven_scenario"
#: The key beside it that holds the scenario's content hash.
SCENARIO_HASH_KEY = "seahaven_scenario_hash"


def dataset(
    pack: ScenarioSet, split: str | None = None, scenarios: Sequence[str] | None = None
) -> MemoryDataset:
    """The samples of ``pack``'s ``split`` (every scenario when ``None``), or of ``scenarios``."""
    # plan() checks the split and the ids, and names what the pack holds when they are wrong.
    chosen = [spec.scenario for spec in plan(pack, split=split, scenarios=scenarios)]
    label = pack.name if split is None else f"{pack.name}/{split}"
    return MemoryDataset([sample(pack, scenario) for scenario in chosen], name=label)


def sample(pack: ScenarioSet, scenario: Scenario) -> Sample:
    """The sample of one scenario of ``pack``."""
    reference = f"{pack.name}/{scenario.id}"
    messages: list[ChatMessage] = []
    if pack.policy is not None:
        messages.append(ChatMessageSystem(content=pack.policy))
    messages.append(
        ChatMessageUser(
            content=scenario.instructions,
            metadata={SCENARIO_KEY: reference, SCENARIO_HASH_KEY: scenario.hash},
        )
    )
    metadata: dict[str, Any] = {
        "scenario": reference,
        "scenario_hash": scenario.hash,
        "tags": list(scenario.tags),
        "pack": pack.name,
        "pack_version": pack.version,
        "world": scenario.world_name,
        "budget": scenario.budget,
    }
    return Sample(id=scenario.id, input=messages, metadata=metadata)
