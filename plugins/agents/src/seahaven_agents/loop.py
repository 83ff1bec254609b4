"""The agent's loop: ask the model, run the tool calls it asks for, until it answers.

``AgentLoop(model).play(session)`` plays one episode with a ``ModelClient``:

1. the conversation starts with a system message (the system prompt, and the
   pack's policy document when the session has one) and the scenario's
   instructions as the first user message; the session's tools, ``submit``
   included, are the function schemas;
2. each turn sends the conversation and runs the reply's tool calls in order
   (several in one turn), each result going back as a ``tool`` message; a
   refusal goes back carrying the world's code and message, and a call that
   cannot be made (a tool that does not exist, arguments that are not a JSON
   object) goes back as an error the model can correct: both are the agent's;
3. it ends when the model answers without a tool call (that text is submitted
   as the answer), when the episode ends (``submit``, or the budget spent), or
   after ``max_turns`` model calls, where the episode is graded as it stands.

Every model call and every invalid call is recorded on the session's
``transcript`` when it has one (the session records the tool calls itself).

The loop is built to be reused: a subclass overrides a hook (``system_message``,
``first_messages``, ``before_request``, ``run_tool``, ``answer``) and keeps the
rest, retries and transcripts included. ``docs/agents.md`` shows one.
"""

from __future__ import annotations

import contextlib
import difflib
import json
from collections.abc import Mapping
from typing import Any

from seahaven import ToolError, WorldBug
from seahaven_agents.client import (
    EncodedTools,
    ModelClient,
    ModelFailure,
    ModelReply,
    ToolCallRequest,
)
from seahaven_agents.schemas import ToolNames, function_schemas

__all__ = ["DEFAULT_MAX_TURNS", "DEFAULT_SYSTEM_PROMPT", "AgentLoop", "play"]

DEFAULT_MAX_TURNS = 40
DEFAULT_SYSTEM_PROMPT = (
    "You are an agent doing a task in a company's systems, which you reach only through the "
    "tools you are given. Work out what the task needs, use the tools to look things up and to "
    "act, and check what a tool tells you before you go on. A tool that refuses says why, with "
    "an error code and a message: read it and decide what to do next. Do not do more than the "
    "task asks, and do not make up data a tool did not give you. When the task is done, call "
    "submit with your final answer (the answer to the question you were asked, or a short note "
    "of what you did, or why you did not); you may also reply with the answer in plain text, "
    "without a tool call, which submits it."
)


class AgentLoop:
    """The loop of a model-backed agent on one ``ModelClient``; see the module."""

    def __init__(
        self,
        model: ModelClient,
        *,
        system_prompt: str | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1:
            raise WorldBug(
                f"max_turns is a whole number of model calls, 1 or more; got {max_turns!r}"
            )
        self.model = model
        self.system_prompt = DEFAULT_SYSTEM_PROMPT if system_prompt is None else system_prompt
        self.max_turns = max_turns
        self.params = dict(params or {})

    # --- the hooks -----------------------------------------------------------------------------

    def system_message(self, session: Any) -> str | None:
        """The system message: the system prompt, then the pack's policy document if any."""
        document = getattr(session, "policy_document", None)
        parts = [self.system_prompt.strip()] if self.system_prompt.strip() else []
        if isinstance(document, str) and document.strip():
            parts.append("The policy you work under:\n\n" + document.strip())
        return "\n\n".join(parts) or None

    def first_messages(self, session: Any) -> list[dict[str, Any]]:
        """The conversation's start: the system message, then the instructions as the user's."""
        messages: list[dict[str, Any]] = []
        system = self.system_message(session)
        if system is not None:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": session.instructions})
        return messages

    async def before_request(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages to send this turn (all of them; a subclass may trim or add)."""
        return messages

    async def run_tool(self, session: Any, tool: str, arguments: dict[str, Any]) -> str:
        """Make one tool call on the session; the ``tool`` message's content.

        The result goes back as JSON text; a refusal (``ToolError``) as
        ``{"error": {"code", "message", "details"}}``. Anything else the call
        raises (a bug in the world) propagates: the trial is errored, not scored.
        """
        try:
            result = session.call(tool, **arguments)
        except ToolError as refused:
            return _json({"error": refused.to_dict()})
        return _json(result)

    async def answer(self, session: Any, text: str | None) -> None:
        """The model answered without a tool call: submit its text as the answer."""
        if session.done or text is None or not text.strip():
            return
        # Refused (too long, say): the episode is graded as it stands.
        with contextlib.suppress(ToolError):
            session.submit(text)

    # --- the loop ------------------------------------------------------------------------------

    async def play(self, session: Any) -> None:
        """Play one episode on ``session`` to its end (see the module)."""
        transcript = getattr(session, "transcript", None)
        schemas, names = function_schemas(session.tools())
        tools = EncodedTools.of(schemas)  # once: every turn sends the same schemas
        if transcript is not None:
            transcript.shown_tools(names.names())
        messages = self.first_messages(session)
        for _ in range(self.max_turns):
            if session.done:
                return
            request = await self.before_request(messages)
            reply = await self._ask(request, tools, transcript)
            messages.append(reply.message)
            if not reply.tool_calls:
                await self.answer(session, reply.text)
                return
            for call in reply.tool_calls:
                if session.done:
                    return
                content = await self._tool_message(session, call, names, transcript)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})

    async def _ask(
        self, request: list[dict[str, Any]], tools: EncodedTools, transcript: Any
    ) -> ModelReply:
        try:
            reply = await self.model.complete(request, tools, **self.params)
        except ModelFailure as failure:
            if transcript is not None:
                transcript.model_failure(failure.message, retries=failure.attempts)
            raise
        if transcript is not None:
            transcript.model_call(
                request,
                reply.raw,
                model=reply.model or self.model.model,
                usage=reply.usage,
                seconds=round(reply.seconds, 6),
                retries=reply.retries,
                finish_reason=reply.finish_reason,
                history=reply.message,
            )
        return reply

    async def _tool_message(
        self, session: Any, call: ToolCallRequest, names: ToolNames, transcript: Any
    ) -> str:
        tool = names.tool(call.name)
        problem: str | None = None
        arguments: Any = None
        if tool is None:
            close = difflib.get_close_matches(call.name, names.names(), n=3)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            problem = (
                f"there is no tool named {call.name!r}{hint}; call one of the tools you were "
                "given, by its exact name"
            )
        else:
            try:
                arguments = json.loads(call.arguments) if call.arguments.strip() else {}
            except ValueError as error:
                problem = f"the arguments of {call.name} are not JSON ({error}); send a JSON object"
            else:
                if not isinstance(arguments, dict):
                    kind = type(arguments).__name__
                    problem = (
                        f"the arguments of {call.name} are a JSON {kind}, not an object; send "
                        "an object of the tool's parameters"
                    )
        if problem is not None or tool is None:
            if transcript is not None:
                transcript.invalid_call(call.name, call.arguments, problem or "")
            return _json({"error": {"code": "invalid_tool_call", "message": problem}})
        return await self.run_tool(session, tool, arguments)


async def play(
    session: Any,
    model: ModelClient,
    *,
    system_prompt: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    **params: Any,
) -> None:
    """Play one episode on ``session`` with ``model``: ``AgentLoop(model, ...).play(session)``."""
    loop = AgentLoop(model, system_prompt=system_prompt, max_turns=max_turns, params=params)
    await loop.play(session)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
