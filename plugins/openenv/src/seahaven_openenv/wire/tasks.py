"""Scenarios on the wire: the pack a served world offers, and how a reset names a scenario.

A served world may be given one pack of scenarios (``seahaven serve --scenarios
PACK``, ``app(world, scenarios=...)``). That pack is what OpenEnv's Task API
lists (``/{env}/splits``, ``/{env}/tasks``, ``/{env}/num_tasks``,
``/{env}/task``, ``/{env}/task_range``) and what ``reset(split=..., index=...)``
picks from. ``reset(scenario="pack/id")`` names a scenario of that pack or of
any installed pack, as long as it runs on the served world.

A task, as the Task API answers it, says what an agent may know before it
starts: the scenario's name, hash, instructions, budget and tags. Its grader and
its reference solution are never sent.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, ConfigDict, Field

import seahaven
from seahaven.errors import WorldBug
from seahaven.stores.names import check_scenario_name
from seahaven.scenarios import Scenario, ScenarioSet, load_pack, pack_specs, split_reference
from seahaven_openenv.wire.echo import shown

__all__ = [
    "ALL_SPLIT",
    "ServedPack",
    "TaskError",
    "find_for_reset",
    "packs_for",
    "scenarios_for",
    "split_type",
    "task_router",
]

_log = logging.getLogger("seahaven.openenv")

# The one split a pack without splits is listed under: every scenario, in the pack's order.
ALL_SPLIT = "all"
# OpenEnv's split types; a split of another name is listed as a validation split, as
# OpenEnv's own server lists a split given as a bare name.
_SPLIT_TYPES = frozenset({"train", "validation", "test"})


class TaskError(Exception):
    """A task or split the caller named that the pack does not hold; ``message`` says which."""

    def __init__(self, message: str, *, index: bool = False) -> None:
        super().__init__(message)
        self.message = message
        #: Whether it was an index out of range (OpenEnv answers 400 "Invalid task index").
        self.index = index


def split_type(name: str) -> str:
    """The type OpenEnv gives a split of this name: train, validation or test."""
    return name if name in _SPLIT_TYPES else "validation"


@dataclass(frozen=True, slots=True)
class ServedPack:
    """One pack served beside a world: its splits, its tasks, and the scenario at an index."""

    pack: ScenarioSet

    @property
    def name(self) -> str:
        """The pack's name."""
        return self.pack.name

    def split_names(self) -> list[str]:
        """The pack's splits in order; ``all`` for a pack that has none."""
        return list(self.pack.splits) or [ALL_SPLIT]

    def scenarios(self, split: str) -> list[Scenario]:
        """The scenarios of a split, in its order; ``TaskError`` for a split the pack lacks."""
        if not self.pack.splits and split == ALL_SPLIT:
            return list(self.pack)
        if split not in self.pack.splits:
            raise TaskError(
                f"pack {self.name!r} has no split {shown(split)}; its splits are "
                f"{', '.join(self.split_names())}"
            )
        return self.pack.split(split)

    def scenario_at(self, split: str, index: object) -> Scenario:
        """The scenario at ``index`` (0 first) of ``split``."""
        chosen = self.scenarios(split)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(chosen):
            count = len(chosen)
            held = "1 task, index 0" if count == 1 else f"{count} tasks, indexes 0 to {count - 1}"
            raise TaskError(
                f"split {shown(split)} of pack {self.name!r} holds {held}; there is no task "
                f"{shown(index)}",
                index=True,
            )
        return chosen[index]

    # --- what the Task API answers ---------------------------------------------------------

    def list_splits(self) -> list[dict[str, Any]]:
        """Every split as ``{name, type, num_tasks}``."""
        return [
            {"name": name, "type": split_type(name), "num_tasks": len(self.scenarios(name))}
            for name in self.split_names()
        ]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        """Every task of a split."""
        chosen = self.scenarios(split)
        return [self.task(scenario, split, index) for index, scenario in enumerate(chosen)]

    def num_tasks(self, split: str) -> int:
        """How many tasks a split holds."""
        return len(self.scenarios(split))

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        """The task at ``index`` of ``split``."""
        return self.task(self.scenario_at(split, index), split, index)

    def get_task_range(
        self, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        """The tasks ``[start, stop)`` of a split, as Python slices them."""
        tasks = self.list_tasks(split)
        return tasks[start:stop]

    def task(self, scenario: Scenario, split: str, index: int) -> dict[str, Any]:
        """A task as the Task API describes it: never its grader or its solution."""
        reference = f"{self.name}/{scenario.id}"
        return {
            "id": reference,
            "split": split,
            "index": index,
            "scenario": reference,
            "hash": scenario.hash,
            "pack_version": self.pack.version,
            "world": scenario.world_name,
            "instructions": scenario.instructions,
            "budget": scenario.budget,
            "tags": list(scenario.tags),
        }


def packs_for(
    worlds: Sequence[seahaven.World], scenarios: Sequence[ScenarioSet | str] | None
) -> dict[str, ServedPack]:
    """Each served world's pack, by world name; a ``WorldBug`` naming the fix for a bad one.

    ``scenarios`` are packs or their names (an installed pack's name, or
    ``module:attr``). Every scenario of a pack must run on one served world, and a
    world takes one pack: its Task API lists one set of tasks.
    """
    served = {world.name: world for world in worlds}
    chosen: dict[str, ServedPack] = {}
    for given in scenarios or ():
        pack = given if isinstance(given, ScenarioSet) else load_pack(given)
        if not isinstance(pack, ScenarioSet):
            raise WorldBug(f"scenarios takes packs (ScenarioSet) or their names, not {given!r}")
        if len(pack) == 0:
            raise WorldBug(f"pack {pack.name!r} holds no scenarios; there is nothing to serve")
        names = sorted({scenario.world_name for scenario in pack})
        if len(names) > 1:
            raise WorldBug(
                f"pack {pack.name!r} holds scenarios of several worlds ({', '.join(names)}); a "
                "served world offers a pack of its own scenarios, so split it into one pack per "
                "world"
            )
        [name] = names
        if name not in served:
            raise WorldBug(
                f"pack {pack.name!r} runs on world {name!r}, which this server does not serve "
                f"(it serves {', '.join(sorted(served))}); serve that world too, as --world {name}"
            )
        if name in chosen:
            raise WorldBug(
                f"world {name!r} is given two packs, {chosen[name].name!r} and {pack.name!r}; a "
                "served world's Task API lists one pack, so serve one (reset(scenario='pack/id') "
                "still reaches every installed pack's scenarios)"
            )
        chosen[name] = ServedPack(pack)
    return chosen


def find_for_reset(
    reference: str, world: seahaven.World, served: Mapping[str, ScenarioSet]
) -> tuple[ScenarioSet, Scenario]:
    """The pack and scenario ``reference`` (``pack/id``) names, for a reset on ``world``.

    The packs the server was given (``served``, by name) answer their own names;
    any other name is looked up among the installed packs, by name only: a client
    can never make the server import a module of its choosing. Raises
    ``TaskError`` with a message for the client.
    """
    try:
        pack_name, scenario_id = split_reference(reference)
        check_scenario_name(pack_name, what="pack name")
        check_scenario_name(scenario_id)
    except WorldBug as error:
        raise TaskError(str(error)) from None
    pack = served.get(pack_name)
    if pack is None:
        try:
            pack = load_pack(pack_name)
        except WorldBug as error:
            raise TaskError(str(error)) from None
    if scenario_id not in pack:
        raise TaskError(
            f"pack {pack_name!r} has no scenario {scenario_id!r}; its Task API or `seahaven "
            f"scenarios list {pack_name}` lists its {len(pack)}"
        )
    scenario = pack.get(scenario_id)
    if scenario.world_name != world.name:
        raise TaskError(
            f"scenario {reference!r} runs on world {scenario.world_name!r}; this is world "
            f"{world.name!r}"
        )
    return pack, scenario


def scenarios_for(world: seahaven.World, served: Mapping[str, ScenarioSet]) -> list[dict[str, Any]]:
    """Every scenario a reset on ``world`` can name, as ``GET /scenarios`` lists them.

    The packs the server was given come first, then every installed pack (found
    by its entry point, as a reset's ``scenario`` finds it); of each, the
    scenarios that run on ``world``, in the pack's order. An installed pack that
    does not load is left out and logged: the others are still listed. Like a
    task of the Task API, an entry says what an agent may know before it starts,
    never the grader or the reference solution.
    """
    packs: dict[str, ScenarioSet] = dict(served)
    for spec in pack_specs():
        if spec.name in packs:
            continue
        try:
            packs[spec.name] = load_pack(spec.name)
        except Exception:
            # A broken pack of someone else's must not hide the rest; its author reads the log.
            _log.warning("GET /scenarios: pack %r does not load", spec.name, exc_info=True)
    return [
        {
            "scenario": f"{name}/{scenario.id}",
            "pack": name,
            "id": scenario.id,
            "served": name in served,
            "instructions": scenario.instructions,
            "budget": scenario.budget,
            "tags": list(scenario.tags),
        }
        for name, pack in packs.items()
        for scenario in pack
        if scenario.world_name == world.name
    ]


# --- OpenEnv's Task API -------------------------------------------------------------------


class _Request(BaseModel):
    # OpenEnv's request models refuse keys they do not define; so do these.
    model_config = ConfigDict(extra="forbid")


class _SplitRequest(_Request):
    split: str = Field(description="Task split name")


class _TaskRequest(_Request):
    split: str = Field(description="Task split name")
    index: int = Field(description="Task index within the split")


class _RangeRequest(_Request):
    split: str = Field(description="Task split name")
    start: int | None = Field(default=None, description="Inclusive start index")
    stop: int | None = Field(default=None, description="Exclusive stop index")


def task_router(world_name: str, served: ServedPack | None) -> APIRouter:
    """OpenEnv 0.10's Task API for one served world, under its name, as OpenEnv serves it.

    The routes are ``GET /list_environments`` and ``GET /{env}/splits``, ``POST
    /{env}/tasks``, ``/{env}/num_tasks``, ``/{env}/task`` and ``/{env}/task_range``,
    where ``env`` is the world's name (any case). A world served without a pack answers
    501, as OpenEnv does for an environment that is no task provider; an index out of
    range is 400 ``Invalid task index``; a split the pack lacks is 400 naming its splits.
    """
    router = APIRouter(tags=["Task API"])

    def pack_of(env_name: str, method: str) -> ServedPack:
        if env_name.lower() != world_name.lower():
            raise HTTPException(status_code=404, detail=f"unknown environment {env_name!r}")
        if served is None:
            raise HTTPException(
                status_code=501,
                detail=f"{method} is not supported for this environment (it is served without "
                "a pack of scenarios: seahaven serve --scenarios PACK serves one)",
            )
        return served

    def answer(run: Any) -> Any:
        try:
            return run()
        except TaskError as error:
            if error.index:
                raise HTTPException(status_code=400, detail="Invalid task index") from None
            raise HTTPException(status_code=400, detail=error.message) from None

    @router.get("/list_environments", summary="The environments whose tasks this server lists")
    async def list_environments() -> list[str]:
        return [world_name]

    @router.get("/{env_name}/splits", summary="The splits of the served pack")
    async def list_splits(env_name: str) -> list[dict[str, Any]]:
        pack = pack_of(env_name, "list_splits")
        splits: list[dict[str, Any]] = answer(pack.list_splits)
        return splits

    @router.post("/{env_name}/tasks", summary="Every task of a split")
    async def list_tasks(env_name: str, request: _SplitRequest) -> dict[str, Any]:
        pack = pack_of(env_name, "list_tasks")
        tasks = answer(lambda: pack.list_tasks(request.split))
        return {"tasks": tasks, "env_name": world_name}

    @router.post("/{env_name}/num_tasks", summary="How many tasks a split holds")
    async def num_tasks(env_name: str, request: _SplitRequest) -> dict[str, Any]:
        pack = pack_of(env_name, "num_tasks")
        return {"num_tasks": answer(lambda: pack.num_tasks(request.split))}

    @router.post("/{env_name}/task", summary="One task, by split and index")
    async def get_task(env_name: str, request: _TaskRequest) -> dict[str, Any]:
        pack = pack_of(env_name, "get_task")
        return {"task": answer(lambda: pack.get_task(request.split, request.index))}

    @router.post("/{env_name}/task_range", summary="The tasks [start, stop) of a split")
    async def get_task_range(env_name: str, request: _RangeRequest) -> dict[str, Any]:
        pack = pack_of(env_name, "get_task_range")
        tasks = answer(
            lambda: pack.get_task_range(request.split, request.start, request.stop),
        )
        return {"tasks": tasks}

    return router
