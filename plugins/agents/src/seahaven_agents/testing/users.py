"""Scripts for a model-played user: a model that plays each scenario's scripted user, and routing.

``user_script(pack)`` stands in for the model behind ``ModelUser``: it finds
the scenario by the user's instructions in the system message (between
``<instructions>`` and ``</instructions>``), picks the scripted turn a
``ScriptedUser`` would pick for the agent's latest message (the first turn not
used yet whose ``when`` holds, the earlier messages having used theirs), asks
for the turn's tool calls first, then answers its reply, with ``###STOP###``
when the turn stops. Played against ``solution_script(pack)``, every scenario
with a scripted user plays as its own script would: the reference solutions
score 1 with a "model" user too.

``for_roles(agent=..., user=...)`` serves both from one server: a request that
offers the ``submit`` tool is the agent's (every trial offers it), any other is
the user's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from seahaven import WorldBug
from seahaven.scenarios import STOP_MARKER, SUBMIT_TOOL, ScenarioSet, User, UserTurn
from seahaven_agents.testing.replies import ChatRequest, Reply, answer, call, error, tool_calls
from seahaven_agents.user import INSTRUCTIONS_CLOSE, INSTRUCTIONS_OPEN

__all__ = ["for_roles", "instructions_of", "user_script"]


def instructions_of(request: ChatRequest) -> str | None:
    """The user's instructions in a model-played user's request (its system message)."""
    system = request.system or ""
    start = system.find(INSTRUCTIONS_OPEN)
    end = system.rfind(INSTRUCTIONS_CLOSE)
    if start < 0 or end < start:
        return None
    return system[start + len(INSTRUCTIONS_OPEN) : end].strip()


def _key(text: str) -> str:
    return " ".join(text.split())


def _picked(script: Sequence[UserTurn], used: set[int], message: str) -> int | None:
    """The turn a scripted user answers ``message`` with: the first unused one that holds."""
    for index, turn in enumerate(script):
        if index in used:
            continue
        if turn.when is None or turn.when.holds(message):
            return index
    return None


def user_script(pack: ScenarioSet) -> Callable[[ChatRequest], Reply]:
    """A scripted model playing every scripted user of ``pack``; see the module.

    Two scenarios whose users have the same instructions and different scripts
    are a ``WorldBug``: the script could not tell which one a request plays.
    """
    users: dict[str, User] = {}
    owners: dict[str, str] = {}
    for scenario in pack:
        user = scenario.user
        if user is None or user.script is None:
            continue
        key = _key(user.instructions)
        if key in users and users[key] != user:
            raise WorldBug(
                f"scenarios {owners[key]!r} and {scenario.id!r} of pack {pack.name!r} have users "
                "with the same instructions and different scripts; the script cannot tell them "
                "apart"
            )
        users[key] = user
        owners[key] = scenario.id

    def script(request: ChatRequest) -> Reply:
        found = instructions_of(request)
        user = users.get(_key(found)) if found is not None else None
        if user is None or user.script is None:
            return error(400, f"no scripted user of pack {pack.name!r} has these instructions")
        messages = list(request.messages)
        said = [index for index, message in enumerate(messages) if message.get("role") == "user"]
        if not said:
            return error(400, "the request holds no message of the agent's")
        used: set[int] = set()
        chosen: int | None = None
        for index in said:
            chosen = _picked(user.script, used, _text(messages[index].get("content")))
            if chosen is not None:
                used.add(chosen)
        turn = user.script[chosen] if chosen is not None else None
        acted = any(message.get("role") == "tool" for message in messages[said[-1] + 1 :])
        if turn is not None and turn.calls and not acted:
            return tool_calls(*(call(step.tool, dict(step.arguments)) for step in turn.calls))
        if turn is None:
            return answer(user.fallback)
        return answer(f"{turn.reply} {STOP_MARKER}" if turn.stop else turn.reply)

    return script


Script = Sequence[Reply] | Callable[[ChatRequest], Reply]


def for_roles(*, agent: Script, user: Script) -> Callable[[ChatRequest], Reply]:
    """One script for both sides: a request offering ``submit`` is the agent's, else the user's."""
    answer_agent = _as_function(agent)
    answer_user = _as_function(user)

    def script(request: ChatRequest) -> Reply:
        return answer_agent(request) if SUBMIT_TOOL in request.tools else answer_user(request)

    return script


def _as_function(script: Script) -> Callable[[ChatRequest], Reply]:
    if callable(script):
        return script
    replies: Iterator[Reply] = iter(list(script))
    lock = threading.Lock()

    def next_reply(request: ChatRequest) -> Reply:
        with lock:
            found = next(replies, None)
        if found is None:
            return error(400, f"the script has no reply left for request {request.index}")
        return found

    return next_reply


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""
