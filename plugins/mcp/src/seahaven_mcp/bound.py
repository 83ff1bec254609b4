"""The MCP server of an episode bound to a scenario: ``seahaven mcp WORLD --scenario PACK/ID``.

The episode is a ``seahaven.scenarios.Trial``, as in every other door: the
client is given the scenario's instructions (the handshake's ``instructions``,
after the pack's policy document when it has one, and the prompt
``scenario``), the tools ``Trial.tools()`` lists (the world's, then
``submit``), and the scenario's budget. Every call goes through the trial: it
counts against the budget, the call that spends it ends the episode, and after
the end every call is refused with ``episode_over``. ``submit``'s result is the
grade (its score, its verdict and every check with its reason), and the
resource ``seahaven://trial`` holds the trial's report (the scenario, the seed,
the budget, the calls made and left, how the episode ended, the answer and the
grade) at any time, the grade once the episode has ended. A result's ``_meta``
says where the episode stands: ``calls_left`` and ``done``, and on the call that
ended it ``ended_by``, ``reward`` (the grade's score) and the ``grade``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

from seahaven.scenarios import SUBMIT_TOOL, ScenarioSet, Trial
from seahaven_mcp.calls import run_call

__all__ = ["PROMPT_NAME", "REPORT_URI", "build_bound_server", "instructions_of", "report_of"]

#: The prompt that carries the scenario's instructions.
PROMPT_NAME = "scenario"
#: The resource holding the trial's report, the grade among it.
REPORT_URI = "seahaven://trial"


def instructions_of(trial: Trial, pack: ScenarioSet | None) -> str:
    """What the agent is told: the pack's policy document (if any), then the instructions."""
    parts = [pack.policy] if pack is not None and pack.policy else []
    parts.append(trial.instructions)
    return "\n\n".join(parts)


def report_of(trial: Trial, pack: ScenarioSet | None) -> dict[str, Any]:
    """The trial's report, with the scenario as ``pack/id``, the calls left and the hash."""
    name = pack.name if pack is not None else None
    return {
        **trial.report(),
        "scenario": f"{name}/{trial.scenario.id}" if name else trial.scenario.id,
        "pack": name,
        "pack_version": pack.version if pack is not None else None,
        "calls_left": trial.calls_left,
        "instructions": trial.instructions,
        "state_sha256": trial.state_sha256(),
    }


def _call(trial: Trial, name: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
    """One call through the trial, with where the episode stands in ``_meta``."""
    was_done = trial.done

    def call(tool: str, **given: Any) -> Any:
        value = trial.call(tool, **given)
        if tool == SUBMIT_TOOL and trial.grade is not None:
            return {**value, "grade": trial.grade.to_dict()}
        return value

    result = run_call(call, name, arguments)
    meta: dict[str, Any] = {"calls_left": trial.calls_left, "done": trial.done}
    grade = trial.grade
    if trial.done and not was_done and grade is not None:
        meta.update(ended_by=trial.ended_by, reward=grade.score, grade=grade.to_dict())
    return result.model_copy(update={"meta": meta})


def build_bound_server(
    trial: Trial, pack: ScenarioSet | None = None, *, name: str | None = None
) -> Server[Any, Any]:
    """The MCP server of one trial: its tools, ``submit`` among them, a prompt and a report."""
    world = trial.world
    reference = f"{pack.name}/{trial.scenario.id}" if pack is not None else trial.scenario.id
    listed = [
        types.Tool(
            name=tool["name"], description=tool["description"], inputSchema=tool["input_schema"]
        )
        for tool in trial.tools()
    ]
    told = instructions_of(trial, pack)
    server: Server[Any, Any] = Server(
        name or world.mcp_server_name, version=world.version, instructions=told
    )
    # One call at a time, in the order they arrive, on a worker thread (see server.py).
    limiter = anyio.CapacityLimiter(1)

    async def list_tools() -> list[types.Tool]:
        return [tool.model_copy(deep=True) for tool in listed]

    async def call_tool(tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        result: types.CallToolResult = await anyio.to_thread.run_sync(
            _call, trial, tool, arguments, limiter=limiter
        )
        return result

    async def list_prompts() -> list[types.Prompt]:
        return [
            types.Prompt(
                name=PROMPT_NAME,
                title=f"Scenario {reference}",
                description=f"The task of scenario {reference}, as the agent is given it.",
            )
        ]

    async def get_prompt(prompt: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        if prompt != PROMPT_NAME:
            raise McpError(
                types.ErrorData(
                    code=types.INVALID_PARAMS,
                    message=f"there is no prompt {prompt[:64]!r}; this server has {PROMPT_NAME!r}",
                )
            )
        return types.GetPromptResult(
            description=f"The task of scenario {reference}.",
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=told))
            ],
        )

    async def list_resources() -> list[types.Resource]:
        return [
            types.Resource(
                uri=AnyUrl(REPORT_URI),
                name="trial",
                title=f"The episode of {reference}",
                description=(
                    "The scenario, seed and budget, the calls made and left, how the episode "
                    "ended, the answer, and the grade (score, verdict, every check and why) once "
                    "it has ended."
                ),
                mimeType="application/json",
            )
        ]

    async def read_resource(uri: AnyUrl) -> list[ReadResourceContents]:
        if str(uri) != REPORT_URI:
            raise McpError(
                types.ErrorData(
                    code=types.INVALID_PARAMS,
                    message=f"there is no resource {str(uri)[:64]!r}; this server has {REPORT_URI}",
                )
            )
        report = await anyio.to_thread.run_sync(report_of, trial, pack, limiter=limiter)
        text = json.dumps(report, ensure_ascii=False, allow_nan=False)
        return [ReadResourceContents(content=text, mime_type="application/json")]

    server.list_tools()(list_tools)  # type: ignore[no-untyped-call]
    # The trial validates the arguments, so a bad one is the framework's invalid_arguments.
    server.call_tool(validate_input=False)(call_tool)
    server.list_prompts()(list_prompts)  # type: ignore[no-untyped-call]
    server.get_prompt()(get_prompt)  # type: ignore[no-untyped-call]
    server.list_resources()(list_resources)  # type: ignore[no-untyped-call]
    server.read_resource()(read_resource)  # type: ignore[no-untyped-call]
    return server
