"""``SeahavenEnv``: a served world as an OpenEnv ``Environment``, for OpenEnv's own tooling.

Seahaven's server does not need it (it drives ``Session`` directly), but code
written against OpenEnv's server-side interface (its ``create_app``, its
harness runners) can host a Seahaven world through it. It is the same
``Session`` the server uses, with typed models in place of wire dicts, so it
behaves exactly as a connection to ``seahaven serve`` does.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import ListToolsObservation
from openenv.core.env_server.types import EnvironmentMetadata, Observation

import seahaven
from seahaven_openenv import card
from seahaven_openenv.models import SeahavenObservation, SeahavenState
from seahaven_openenv.session import FrameError, Session, WorldService

__all__ = ["SeahavenEnv"]


class SeahavenEnv(Environment[Any, Observation, SeahavenState]):
    """One episode of ``world`` behind OpenEnv's ``reset`` / ``step`` / ``state`` interface.

    A refused frame raises ``RuntimeError`` carrying OpenEnv's error code, as
    OpenEnv's own server reports an environment's exception.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, world: seahaven.World, *, include_control_tools: bool = False) -> None:
        super().__init__()
        self._session = Session(WorldService(world, include_control_tools=include_control_tools))

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
        body = reply["observation"]
        if "tools" in body:
            return ListToolsObservation.model_validate(body)
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


def _run(frame: Any, *args: Any) -> Any:
    try:
        return frame(*args)
    except FrameError as error:
        raise RuntimeError(f"{error.message} (code: {error.code})") from None
