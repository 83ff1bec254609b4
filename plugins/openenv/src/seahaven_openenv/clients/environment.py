"""``SeahavenEnv``: a served world as an OpenEnv ``Environment``, for OpenEnv's own tooling.

Seahaven's server does not need it (it drives ``Session`` directly), but code
written against OpenEnv's server-side interface (its ``create_app``, its
harness runners) can host a Seahaven world through it. It is the same
``Session`` the server uses, with typed models in place of wire dicts, so it
behaves exactly as a connection to ``seahaven serve`` does. Given a pack of
scenarios, it is also OpenEnv's ``TaskProvider`` (``list_splits``,
``list_tasks``, ``num_tasks``, ``get_task``, ``get_task_range``), so OpenEnv's
own server lists the pack's tasks from it, as ``seahaven serve --scenarios``
does. (OpenEnv's server admits only the action class it is given, so a
``finish`` step reaches ``step`` here only when that class allows it.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import seahaven
from seahaven.scenarios import ScenarioSet
from seahaven_openenv.clients.lean_openenv import (
    Environment,
    EnvironmentMetadata,
    ListToolsObservation,
    Observation,
)
from seahaven_openenv.clients.models import (
    EpisodeEndObservation,
    SeahavenObservation,
    SeahavenState,
)
from seahaven_openenv.sessions.session import Session, WorldService
from seahaven_openenv.web import card
from seahaven_openenv.wire.frames import FrameError
from seahaven_openenv.wire.tasks import ServedPack, TaskError, packs_for

__all__ = ["SeahavenEnv"]

T = TypeVar("T")


class SeahavenEnv(Environment[Any, Observation, SeahavenState]):
    """One episode of ``world`` behind OpenEnv's ``reset`` / ``step`` / ``state`` interface.

    A refused frame raises ``RuntimeError`` carrying OpenEnv's error code, as
    OpenEnv's own server reports an environment's exception.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        world: seahaven.World,
        *,
        scenarios: ScenarioSet | str | None = None,
        include_control_tools: bool = False,
    ) -> None:
        super().__init__()
        packs = packs_for([world], None if scenarios is None else [scenarios])
        self._pack: ServedPack | None = packs.get(world.name)
        service = WorldService(world, include_control_tools=include_control_tools, pack=self._pack)
        self._session = Session(service)

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        """Make a new instance; takes the keys of a ``reset`` frame."""
        data = dict(kwargs)
        if seed is not None:
            data["seed"] = seed
        if episode_id is not None:
            data["episode_id"] = episode_id
        reply = _run(self._session.reset, data)
        return Observation(metadata=reply["metadata"])

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        """Run a ``CallToolAction`` or ``ListToolsAction`` (or their dict form)."""
        payload = action.model_dump() if hasattr(action, "model_dump") else dict(action)
        reply = _run(self._session.step, payload)
        body = {**reply["observation"], "reward": reply["reward"], "done": reply["done"]}
        if "tools" in body:
            return ListToolsObservation.model_validate(body)
        if "tool_name" not in body:
            return EpisodeEndObservation.model_validate(body)
        return SeahavenObservation.model_validate(body)

    @property
    def state(self) -> SeahavenState:
        """The state document plus ``step_count``."""
        return SeahavenState.model_validate(_run(self._session.state))

    def get_metadata(self) -> EnvironmentMetadata:
        """The world's name, version, description and README."""
        return EnvironmentMetadata.model_validate(card.world_card(self._session.service.world))

    def close(self) -> None:
        """Destroy the episode's instance."""
        self._session.close()

    # --- OpenEnv's TaskProvider, when a pack is served --------------------------------------

    def list_splits(self) -> list[dict[str, Any]]:
        """The pack's splits as ``{name, type, num_tasks}``."""
        return self._tasks().list_splits()

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        """Every task of a split."""
        return _tasks_call(lambda: self._tasks().list_tasks(split))

    def num_tasks(self, split: str) -> int:
        """How many tasks a split holds."""
        return _tasks_call(lambda: self._tasks().num_tasks(split))

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        """One task; ``IndexError`` for an index outside the split."""
        return _tasks_call(lambda: self._tasks().get_task(split, index))

    def get_task_range(
        self, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        """The tasks ``[start, stop)`` of a split."""
        return _tasks_call(lambda: self._tasks().get_task_range(split, start, stop))

    def _tasks(self) -> ServedPack:
        if self._pack is None:
            # OpenEnv answers 501 for a task method that is not implemented.
            raise NotImplementedError("this world is served without a pack of scenarios")
        return self._pack


def _tasks_call(run: Callable[[], T]) -> T:
    try:
        return run()
    except TaskError as error:
        if error.index:
            raise IndexError(error.message) from None
        raise ValueError(error.message) from None


def _run(frame: Any, *args: Any) -> Any:
    try:
        return frame(*args)
    except FrameError as error:
        raise RuntimeError(f"{error.message} (code: {error.code})") from None
