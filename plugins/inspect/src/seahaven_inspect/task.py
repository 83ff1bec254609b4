"""``task(pack)``: a pack as an Inspect ``Task``.

One sample per scenario (``seahaven_inspect.samples``), a trial made for each
sample by the task's setup and destroyed by its cleanup
(``seahaven_inspect.episodes``), Inspect's ReAct agent as the default solver
(``seahaven_inspect.agent``) and the scenario's grader as the scorer
(``seahaven_inspect.scorer``). Any solver may replace the default one: the
setup has put the episode's tools in ``state.tools`` before it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai import Task
from inspect_ai.agent import Agent
from inspect_ai.solver import Solver

from seahaven.errors import WorldBug
from seahaven.scenarios import ScenarioSet, load_pack
from seahaven.stores.storage import check_storage
from seahaven_inspect.agent import seahaven_agent
from seahaven_inspect.episodes import bind_trial, release_trial
from seahaven_inspect.samples import dataset
from seahaven_inspect.scorer import seahaven_grader

__all__ = ["task"]


def task(
    pack: str | ScenarioSet,
    *,
    split: str | None = None,
    scenarios: Sequence[str] | None = None,
    solver: Solver | Agent | Sequence[Solver] | None = None,
    storage: str | None = None,
    **task_args: Any,
) -> Task:
    """The Inspect task of ``pack``: an installed pack's name, a pack folder, or ``module:attr``.

    ``split`` picks the pack's split (every scenario when ``None``), and
    ``scenarios`` some of its ids. ``solver`` replaces the default agent.
    ``storage`` (``"memory"`` or ``"disk"``) is where each sample's instance
    keeps its stores (by default ``SEAHAVEN_STORAGE``, else memory). The rest
    (``epochs``, ``message_limit``, ``name``, ...) go to ``inspect_ai.Task``.
    """
    chosen = load_pack(pack) if isinstance(pack, str) else pack
    if not isinstance(chosen, ScenarioSet):
        raise WorldBug(
            f"task() takes a pack's name, a pack folder or a ScenarioSet, not {type(pack).__name__}"
        )
    where = None if storage is None else check_storage(storage)
    task_args.setdefault("name", f"seahaven/{chosen.name}")
    task_args.setdefault("version", chosen.version)
    task_args.setdefault("metadata", {"seahaven_pack": chosen.name, "pack_hash": chosen.hash})
    return Task(
        dataset=dataset(chosen, split=split, scenarios=scenarios),
        setup=bind_trial(chosen, storage=where),
        solver=solver if solver is not None else seahaven_agent(),
        cleanup=release_trial,
        scorer=seahaven_grader(),
        **task_args,
    )
