"""What a scripted model says: replies, and the request each one answers.

A script is a list of ``Reply`` objects (each request takes the next) or a
function of the ``ChatRequest`` that returns one. The helpers make the usual
ones: ``answer(text)``, ``tool_calls(call(name, arguments), ...)`` (a call's
arguments may be a string, sent as it is: bad JSON, on purpose),
``error(status, ..., retry_after=...)``, ``hang()`` (never answer) and
``drop()`` (close the connection without an answer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ChatRequest",
    "Reply",
    "ScriptedCall",
    "answer",
    "call",
    "drop",
    "error",
    "hang",
    "tool_calls",
]


@dataclass(frozen=True)
class ScriptedCall:
    """One tool call a scripted reply makes; ``arguments`` as a dict, or raw text."""

    name: str
    arguments: Mapping[str, Any] | str


@dataclass(frozen=True)
class Reply:
    """One answer of the scripted server: a completion, an error, a hang or a drop."""

    status: int = 200
    content: str | None = None
    calls: tuple[ScriptedCall, ...] = ()
    finish_reason: str | None = None
    # Extra response headers (``Retry-After``) and the error's message, for an error reply.
    headers: Mapping[str, str] = field(default_factory=dict)
    message: str | None = None
    # Seconds to wait before answering (on top of the server's own delay).
    delay: float = 0.0
    # Never answer (until the server stops); or close the connection without answering.
    hang: bool = False
    drop: bool = False
    # Token counts to report instead of the server's estimate.
    usage: Mapping[str, int] | None = None

    def message_body(self) -> dict[str, Any]:
        """The assistant message of a completion reply."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{index}",
                    "type": "function",
                    "function": {
                        "name": scripted.name,
                        "arguments": scripted.arguments
                        if isinstance(scripted.arguments, str)
                        else json.dumps(scripted.arguments, ensure_ascii=False),
                    },
                }
                for index, scripted in enumerate(self.calls)
            ]
        return message


def call(name: str, arguments: Mapping[str, Any] | str | None = None) -> ScriptedCall:
    """A tool call: ``arguments`` a dict (sent as JSON) or a string (sent as it is)."""
    return ScriptedCall(name, {} if arguments is None else arguments)


def tool_calls(*calls: ScriptedCall, content: str | None = None, delay: float = 0.0) -> Reply:
    """A reply calling these tools, in order, in one turn."""
    return Reply(content=content, calls=tuple(calls), finish_reason="tool_calls", delay=delay)


def answer(text: str, *, delay: float = 0.0) -> Reply:
    """A reply in plain text, without a tool call."""
    return Reply(content=text, finish_reason="stop", delay=delay)


def error(
    status: int,
    message: str = "the scripted server refused the request",
    *,
    retry_after: float | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """An error answer with ``status``; ``retry_after`` seconds in a ``Retry-After`` header."""
    sent = dict(headers or {})
    if retry_after is not None:
        sent["Retry-After"] = f"{retry_after:g}"
    return Reply(status=status, message=message, headers=sent)


def hang() -> Reply:
    """No answer at all: the request waits until the client gives up (or the server stops)."""
    return Reply(hang=True)


def drop() -> Reply:
    """The connection closed without an answer."""
    return Reply(drop=True)


@dataclass(frozen=True)
class ChatRequest:
    """One request the scripted server received."""

    # Its place among the server's requests, from 0 (retries count too).
    index: int
    body: Mapping[str, Any]
    # The request's headers, names lowercased.
    headers: Mapping[str, str]

    @property
    def model(self) -> str:
        """The model the request names."""
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> Sequence[Mapping[str, Any]]:
        """The conversation sent."""
        found = self.body.get("messages")
        return [m for m in found if isinstance(m, Mapping)] if isinstance(found, list) else []

    @property
    def tools(self) -> list[str]:
        """The names of the function tools offered."""
        names = []
        for tool in self.body.get("tools") or ():
            function = tool.get("function") if isinstance(tool, Mapping) else None
            if isinstance(function, Mapping) and isinstance(function.get("name"), str):
                names.append(function["name"])
        return names

    @property
    def system(self) -> str | None:
        """The first system message's text, if any."""
        for message in self.messages:
            if message.get("role") == "system":
                return _text(message.get("content"))
        return None

    @property
    def instructions(self) -> str | None:
        """The first user message's text: the scenario's instructions, as the agent sends them."""
        for message in self.messages:
            if message.get("role") == "user":
                return _text(message.get("content"))
        return None

    @property
    def turn(self) -> int:
        """How many times the model has answered in this conversation already."""
        return sum(1 for message in self.messages if message.get("role") == "assistant")

    @property
    def tool_results(self) -> list[Any]:
        """The tool messages since the model last answered, each parsed from JSON if it is."""
        found: list[Any] = []
        for message in reversed(self.messages):
            if message.get("role") != "tool":
                break
            text = _text(message.get("content")) or ""
            try:
                found.append(json.loads(text))
            except ValueError:
                found.append(text)
        return list(reversed(found))


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return None
