"""``SeahavenClient``: OpenEnv's WebSocket client with Seahaven's typed observation and state.

It is OpenEnv's ``EnvClient``, so it is awaitable in asynchronous code and
direct in synchronous code, exactly as the stock client is. It adds
``call(name, /, **arguments)`` and ``list_tools()``, parses a tool call's
answer into a ``SeahavenObservation`` and the state into a ``SeahavenState``,
and waits longer before calling a silent server dead: a lost connection loses
the episode, so its WebSocket ping timeout defaults to 120 s.
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.mcp_types import CallToolAction, ListToolsAction, ListToolsObservation
from openenv.core.env_server.types import Observation
from pydantic import BaseModel

from seahaven_openenv.models import SeahavenObservation, SeahavenState

__all__ = ["DEFAULT_PING_TIMEOUT_S", "SeahavenClient"]

DEFAULT_PING_TIMEOUT_S = 120.0


class SeahavenClient(EnvClient[Any, Any, SeahavenState]):
    """Drive one served Seahaven world: one client, one session, one instance at a time."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        websocket_ping_timeout_s: float | None = DEFAULT_PING_TIMEOUT_S,
        **kwargs: Any,
    ) -> None:
        super().__init__(base_url, websocket_ping_timeout_s=websocket_ping_timeout_s, **kwargs)

    # --- the conveniences -----------------------------------------------------------------------

    def call(self, name: str, /, **arguments: Any) -> Any:
        """Call one tool; answers a ``SeahavenObservation`` (awaitable in async code).

        A tool error is data on the observation (``.error``, ``.seahaven_error``);
        only a protocol failure raises, as ``RuntimeError``.
        """
        action = CallToolAction(tool_name=name, arguments=arguments)
        return self._dispatch(lambda: self._observe(action))

    def list_tools(self) -> Any:
        """The world's tools as ``{name, description, input_schema}`` dicts; needs no reset."""
        return self._dispatch(self._list_tools)

    async def _observe(self, action: CallToolAction) -> SeahavenObservation:
        result = await self._step_async(action)
        observation = result.observation
        if not isinstance(observation, SeahavenObservation):
            raise RuntimeError(f"the server answered a tool call with {type(observation).__name__}")
        return observation

    async def _list_tools(self) -> list[dict[str, Any]]:
        result = await self._step_async(ListToolsAction())
        observation = result.observation
        if not isinstance(observation, ListToolsObservation):
            raise RuntimeError(f"the server answered list_tools with {type(observation).__name__}")
        return [tool.model_dump() for tool in observation.tools]

    # --- EnvClient's hooks ------------------------------------------------------------------------

    def _step_payload(self, action: Any) -> dict[str, Any]:
        if isinstance(action, BaseModel):
            return action.model_dump()
        if isinstance(action, dict):
            return action
        raise TypeError(
            "a step takes CallToolAction, ListToolsAction or their dict form, not "
            f"{type(action).__name__}"
        )

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Any]:
        body = payload.get("observation", {})
        fields = {**body, "done": payload.get("done", False), "reward": payload.get("reward")}
        observation: Observation
        if "tool_name" in body:
            observation = SeahavenObservation.model_validate(fields)
        elif "tools" in body:
            observation = ListToolsObservation.model_validate(fields)
        else:
            observation = Observation.model_validate(fields)
        return StepResult(
            observation=observation,
            reward=payload.get("reward"),
            done=payload.get("done", False),
            metadata=payload.get("metadata"),
        )

    def _parse_state(self, payload: dict[str, Any]) -> SeahavenState:
        return SeahavenState.model_validate(payload)
