"""What ``seahaven hub`` declares to ``openenv validate`` for a world that publishes a pack.

A world alone computes no reward, so its ``openenv.yaml`` has no ``validation:``
block. A world whose project publishes a pack of scenarios (a
``seahaven.scenarios`` entry point) has one: a session bound to a scenario is
rewarded with the grade's score, from 0 to 1. For such a project ``seahaven
hub`` writes the block and the runtime plan it names (``validation/runtime.json``),
and every value in them is measured, not assumed:

- ``reward.floor_margin`` is 1 minus the best score doing nothing earns on any
  scenario of the pack, and ``reward.oracle_tolerance`` 1 minus the worst score a
  reference solution earns (both graded as ``seahaven scenarios check`` grades
  them, with each scenario's first trial seed);
- ``capabilities.task_api`` and ``declared_task_count`` are declared only when the
  project's own app (``<package>.openenv_app:app``, what the image serves) serves
  the pack beside the world, with the counts it lists;
- the runtime plan plays the reference solution of the pack's first solved
  scenario in one bound session (by ``split`` and ``index`` when the app serves
  the pack, else by ``scenario``), and ends with its ``submit`` or a ``finish``
  step, so the episode OpenEnv measures ends with the grade as its reward.

Nothing else is declared: no oracle artifact (neither of OpenEnv's oracle forms
is a list of tool calls), no network policy, no tool list.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import seahaven
from seahaven.errors import WorldBug
from seahaven.evaluation import check_scenario, trial_seed
from seahaven.scenarios import SUBMIT_TOOL, Scenario, ScenarioSet, import_pack

__all__ = [
    "PLAN_FILE",
    "HubValidation",
    "measure",
    "runtime_plan",
    "validation_block",
]

PLAN_FILE = "validation/runtime.json"
"""Where the runtime plan goes, relative to the project's root (OpenEnv's default path)."""

# The most actions OpenEnv's runtime plan holds.
MAX_ACTIONS = 100
# What the block declares the image needs; yours to edit, as the file says.
RESOURCES = {"cpu": 1, "memory_mb": 1024, "disk_mb": 1024, "episode_timeout_s": 300}


@dataclass(frozen=True, slots=True)
class HubValidation:
    """What was measured of a project's pack, and what the files declare from it."""

    pack: ScenarioSet
    #: Whether the project's app serves the pack (its Task API, split and index).
    served: bool
    floor: float
    floor_scenario: str
    oracle: float | None
    oracle_scenario: str | None
    #: The scenario the runtime plan plays, and where the Task API lists it.
    played: Scenario
    place: tuple[str, int] | None
    notes: tuple[str, ...] = ()

    @property
    def floor_margin(self) -> float:
        """How far below a full score doing nothing stays, on the pack's easiest scenario."""
        return round(1.0 - self.floor, 6)

    @property
    def oracle_tolerance(self) -> float:
        """How far below a full score the worst reference solution falls."""
        return 0.0 if self.oracle is None else round(1.0 - self.oracle, 6)


@contextlib.contextmanager
def _importable(root: Path) -> Iterator[None]:
    source = str(root / "src")
    sys.path.insert(0, source)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(source)


def measure(
    root: Path, package: str, world_name: str, published: Mapping[str, str]
) -> HubValidation:
    """Import the project's app and its pack, and grade every scenario's idle and solved runs."""
    target = f"{package}.openenv_app"
    with _importable(root):
        try:
            module = importlib.import_module(target)
        except Exception as error:
            raise WorldBug(
                f"{target} does not import ({type(error).__name__}: {error}); seahaven hub reads "
                "the pack the app serves from it, so install the project (pip install -e .) and "
                "fix the import"
            ) from None
        application = getattr(module, "app", None)
        services = getattr(getattr(application, "state", None), "services", None)
        if not isinstance(services, dict) or not services:
            raise WorldBug(
                f"{target}:app is not a Seahaven server; write app = seahaven.openenv.app(world)"
            )
        service = services.get(world_name) or next(iter(services.values()))
        world: seahaven.World = service.world
        served_pack = service.pack.pack if service.pack is not None else None
        notes: list[str] = []
        if served_pack is not None:
            pack = served_pack
        else:
            name, value = sorted(published.items())[0]
            pack = import_pack(value, f"pack {name!r} ({value})")
            notes.append(
                f"{target}:app serves no pack, so openenv.yaml declares no Task API; serve one "
                f'with seahaven.openenv.app(world, scenarios="{pack.name}") to declare it'
            )
        mine = [scenario for scenario in pack if scenario.world_name == world.name]
        if not mine:
            raise WorldBug(
                f"pack {pack.name!r} holds no scenario of world {world.name!r}; publish a pack of "
                "this world's scenarios"
            )
        floor = (-1.0, "")
        oracle: tuple[float, str] | None = None
        for scenario in mine:
            report = check_scenario(scenario, pack=pack.name, world=world, allow_unsolved=True)
            if report.idle_grade is None:
                raise WorldBug(
                    f"scenario {pack.name}/{scenario.id} cannot be graded: "
                    f"{'; '.join(report.problems)}; seahaven scenarios check {pack.name} says more"
                )
            if report.idle_grade.score > floor[0]:
                floor = (report.idle_grade.score, scenario.id)
            solved = report.solution_grade
            if solved is not None and (oracle is None or solved.score < oracle[0]):
                oracle = (solved.score, scenario.id)
        played = next((scenario for scenario in mine if scenario.solution), mine[0])
        place = _place(pack, played) if served_pack is not None else None
        if floor[0] > 0.9:
            notes.append(
                f"doing nothing scores {floor[0]:g} on {pack.name}/{floor[1]}, so the declared "
                "floor_margin is below OpenEnv's minimum of 0.1; seahaven scenarios check "
                f"{pack.name} names the scenarios to fix"
            )
    return HubValidation(
        pack=pack,
        served=served_pack is not None,
        floor=max(floor[0], 0.0),
        floor_scenario=floor[1],
        oracle=None if oracle is None else oracle[0],
        oracle_scenario=None if oracle is None else oracle[1],
        played=played,
        place=place,
        notes=tuple(notes),
    )


def _place(pack: ScenarioSet, scenario: Scenario) -> tuple[str, int]:
    """The first split (and index in it) that lists the scenario, as the Task API does."""
    for split, ids in pack.splits.items():
        if scenario.id in ids:
            return split, ids.index(scenario.id)
    from seahaven_openenv.wire.tasks import ALL_SPLIT

    return ALL_SPLIT, [item.id for item in pack].index(scenario.id)


def validation_block(measured: HubValidation) -> str:
    """The ``validation:`` block of ``openenv.yaml``, with a comment on where each value is from."""
    pack = measured.pack
    lines = [
        "",
        f"# What `openenv validate` checks. Written by `seahaven hub` from the pack {pack.name!r}",
        f"# ({pack.version}): a session bound to one of its scenarios is rewarded with the grade's",
        "# score, 0 to 1, on the step that ends the episode. The margins were measured: doing",
        f"# nothing scores at most {measured.floor:g} (on {measured.floor_scenario}), and the "
        "reference solutions",
        "# at least "
        + (
            f"{measured.oracle:g} (on {measured.oracle_scenario})."
            if measured.oracle is not None
            else "nothing (none has one)."
        )
        + " The resources are yours to edit.",
        "validation:",
        "  reward:",
        "    range: [0.0, 1.0]",
        f"    oracle_tolerance: {json.dumps(measured.oracle_tolerance)}",
        f"    floor_margin: {json.dumps(measured.floor_margin)}",
        "  resources:",
        *(f"    {key}: {value}" for key, value in RESOURCES.items()),
        "  capabilities:",
        "    verifier:",
        "      kind: reward_channel",
    ]
    if measured.served:
        from seahaven_openenv.wire.tasks import ServedPack

        counts = {split["name"]: split["num_tasks"] for split in ServedPack(pack).list_splits()}
        lines += ["    task_api: true", f"    declared_task_count: {json.dumps(counts)}"]
    lines += [
        "  types:",
        "    tags: [tool-use]",
        "  execution:",
        "    kind: openenv_ws",
        f"    probe_path: {PLAN_FILE}",
        "    dockerfile: Dockerfile",
        '    context: "."',
    ]
    return "\n".join(lines) + "\n"


def runtime_plan(measured: HubValidation) -> str:
    """``validation/runtime.json``: one bound episode playing a reference solution."""
    scenario = measured.played
    pack = measured.pack
    if measured.place is not None:
        options: dict[str, Any] = {"split": measured.place[0], "index": measured.place[1]}
    else:
        options = {"scenario": f"{pack.name}/{scenario.id}"}
    actions: list[dict[str, Any]] = [
        {"type": "call_tool", "tool_name": step.tool, "arguments": dict(step.arguments)}
        for step in scenario.solution or ()
    ][: MAX_ACTIONS - 1]
    if not actions or actions[-1]["tool_name"] != SUBMIT_TOOL:
        actions.append({"type": "finish"})
    plan = {
        "plan_schema_version": "1",
        "reset": {
            "episode_id": f"validate-{pack.name}-{scenario.id}"[:128],
            "seed": trial_seed(pack.name, scenario.id, 0),
            "options": options,
        },
        "actions": actions,
    }
    return json.dumps(plan, indent=2, ensure_ascii=False) + "\n"
