"""OpenEnv's harness on a served world's scenarios: ``CollectRunner`` and TRL's rollout function.

OpenEnv 0.10's harness (``openenv.core.harness``) drives a model through tool
calls against a ``ResourceSession`` that a ``ResourceSessionFactory`` makes per
rollout, and takes the episode's reward from the environment, never from the
harness. ``ScenarioSessions(url)`` is such a factory for a world served by
``seahaven serve``: each session is OpenEnv's own ``StepEnvSessionAdapter`` on
a ``SeahavenClient`` whose episode is bound to the task's scenario::

    from openenv.core.harness import CollectRunner, MCPHarnessAdapter, RolloutSerializer

    runner = CollectRunner(
        session_factory=ScenarioSessions("http://127.0.0.1:8000"),
        harness_adapter=MCPHarnessAdapter(),
        serializer=RolloutSerializer("rollouts/"),
        tasks=["shop/ship-ada", {"split": "test", "index": 0}],
    )
    runner.run(model_step=model_step, num_episodes=2)

A task names the scenario as ``"pack/id"``, or a mapping holding ``scenario``
(a Task API task is one) or ``split`` and ``index``, with an optional ``seed``.
The model sees the instructions as the first user message and the world's tools
with ``submit``. A tool result carries the server's reward on the step that
ends the episode (``submit``, or the call that spends the budget); if the
harness stops first, ``verify()`` ends the episode with a ``finish`` step and
forwards the reward the server sends for it, the grade of the episode as it
stands. The grade itself is in the verify result's artifacts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_server.mcp_types import CallToolAction, Tool
from openenv.core.harness import (
    Message,
    ResourceSessionFactory,
    StepEnvSessionAdapter,
    ToolResult,
    VerifyResult,
)

from seahaven.scenarios import submit_listing
from seahaven_openenv.clients.client import SeahavenClient
from seahaven_openenv.clients.remote import DEFAULT_MESSAGE_TIMEOUT_S

__all__ = ["ScenarioSessions", "reset_arguments"]


def reset_arguments(task: Any) -> dict[str, Any]:
    """The reset a task asks for: ``{"scenario": ...}`` or ``{"split", "index"}``, and a seed."""
    if isinstance(task, str):
        return {"scenario": task}
    if isinstance(task, Mapping):
        chosen: dict[str, Any] = {}
        if task.get("scenario") is not None:
            chosen["scenario"] = task["scenario"]
        elif task.get("split") is not None and task.get("index") is not None:
            chosen.update(split=task["split"], index=task["index"])
        if chosen:
            if task.get("seed") is not None:
                chosen["seed"] = task["seed"]
            return chosen
    raise ValueError(
        f"a task names a scenario: 'pack/id', or a mapping with scenario (or split and index) "
        f"and optionally seed; got {task!r}"[:300]
    )


class _Steps:
    """The client as the adapter drives it: reset, step and close, and no per-step state.

    OpenEnv's adapter reads the state after every step when the client offers it;
    a Seahaven state document holds the whole change log, so it is read once, at
    the end, by ``verify``.
    """

    def __init__(self, client: SeahavenClient) -> None:
        self.client = client

    def reset(self, **kwargs: Any) -> StepResult[Any]:
        result: StepResult[Any] = self.client.reset(**kwargs)
        return result

    def step(self, action: Any) -> StepResult[Any]:
        result: StepResult[Any] = self.client.step(action)
        return result

    def close(self) -> None:
        self.client.close()


class ScenarioSessions(ResourceSessionFactory[StepEnvSessionAdapter]):
    """OpenEnv harness sessions, each one episode of a scenario on the world served at ``url``."""

    def __init__(
        self,
        url: str,
        *,
        system_prompt: str | None = None,
        message_timeout_s: float = DEFAULT_MESSAGE_TIMEOUT_S,
    ) -> None:
        self.url = url.rstrip("/")
        self.system_prompt = system_prompt
        self.message_timeout_s = message_timeout_s
        self._tools: list[Tool] | None = None
        # Each task's tool list as its bound session lists it, asked once per task.
        self._task_tools: dict[tuple[Any, ...], list[Tool]] = {}

    def tools(self) -> list[Tool]:
        """The tools of a bound session: the world's, listed once, and ``submit``."""
        if self._tools is None:
            client = SeahavenClient(base_url=self.url, message_timeout_s=self.message_timeout_s)
            try:
                listing = client.list_tools()
            finally:
                client.close()
            self._tools = [Tool.model_validate(tool) for tool in [*listing, submit_listing()]]
        return list(self._tools)

    def tools_for(self, task: Any) -> list[Tool]:
        """The tools of a session bound to the task's scenario, as that session lists them.

        Most scenarios' are the world's and ``submit``; a scenario with a simulated user
        keeps the user's own tools from the agent and adds ``message_user``. Asked of the
        server once per task, on a session reset to it and closed.
        """
        chosen = {
            key: value
            for key, value in reset_arguments(task).items()
            if key in ("scenario", "split", "index")
        }
        key = tuple(sorted(chosen.items()))
        if key not in self._task_tools:
            client = SeahavenClient(base_url=self.url, message_timeout_s=self.message_timeout_s)
            try:
                client.reset(**chosen)
                listing = client.list_tools()
            finally:
                client.close()
            self._task_tools[key] = [Tool.model_validate(tool) for tool in listing]
        return list(self._task_tools[key])

    def create(
        self, task: Any, seed: int | None = None, episode_id: str | None = None
    ) -> StepEnvSessionAdapter:
        """A session on a new episode of the task's scenario (reset as the task says)."""
        reset = reset_arguments(task)
        if seed is not None:
            reset.setdefault("seed", seed)
        tools = self.tools_for(task)
        client = SeahavenClient(base_url=self.url, message_timeout_s=self.message_timeout_s)
        steps = _Steps(client)
        system_prompt = self.system_prompt

        def initial_messages(result: StepResult[Any], task: Any) -> list[Message]:
            instructions = str(result.observation.metadata.get("instructions", ""))
            messages: list[Message] = []
            if system_prompt:
                messages.append({"role": "system", "content": system_prompt})
            messages.append({"role": "user", "content": instructions})
            return messages

        def tool_result(
            name: str, arguments: dict[str, Any], result: StepResult[Any], state: Any
        ) -> ToolResult:
            return _tool_result(result)

        def verify(
            transcript: list[Message],
            final_state: Any | None,
            last: StepResult[Any] | None,
            state: Any,
        ) -> VerifyResult:
            if last is None or not last.done:
                # The harness stopped first: end the episode where it stands.
                steps.step({"type": "finish"})
            document = client.state()
            report = None if document.scenario is None else document.scenario.model_dump()
            grade = None if report is None else report["grade"]
            return VerifyResult(
                # The score the server paid on the step that ended the episode.
                env_reward=None if grade is None else grade["score"],
                done=True,
                metrics={
                    "step_count": document.step_count,
                    "calls": None if report is None else report["calls_made"],
                },
                artifacts={"scenario": report, "transcript_length": len(transcript)},
            )

        return StepEnvSessionAdapter(
            steps,
            task=task,
            episode_id=episode_id,
            tool_specs=tools,
            action_builder=lambda name, arguments: CallToolAction(
                tool_name=name, arguments=arguments
            ),
            initial_messages_builder=initial_messages,
            tool_result_builder=tool_result,
            verify_builder=verify,
            reset_kwargs=reset,
        )


def _tool_result(result: StepResult[Any]) -> ToolResult:
    """A step's answer as the model reads it; the server's reward when the step ended it."""
    observation = result.observation
    metadata = dict(observation.metadata)
    triple = metadata.pop("seahaven_error", None)
    shown: dict[str, Any] = {}
    if result.done and "grade" in metadata:
        shown = {"reward": result.reward, "grade": metadata["grade"]}
    error = None
    data: Any = observation.result
    if observation.error is not None:
        error = json.dumps(triple if triple is not None else observation.error.model_dump())
        data = {"error": triple if triple is not None else observation.error.model_dump()}
    return ToolResult(
        data=data,
        done=bool(result.done),
        metadata={**shown, "done": bool(result.done), "calls_left": metadata.get("calls_left")},
        error=error,
    )
