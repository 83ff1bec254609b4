"""A scenario's simulated user: who they are, what they may do, and how they are played.

``User`` is the data a scenario holds: the user's own ``instructions`` (what
they know and want; the agent never sees them), the ``tools`` of the world they
may call themselves (dual control: tools the agent is never offered, such as
those of an added world that models the user's phone or portal), and how they
are played:

- ``script``: turns written as data. Each agent message is answered by the
  first turn not used yet whose ``when`` holds for it (a turn without ``when``
  holds for any message), after the tool ``calls`` the turn makes as the user;
  ``stop`` ends the conversation with that reply. A message no turn answers
  gets ``fallback``.
- ``python``: ``module:function``, called with a ``UserContext`` for each agent
  message (the conversation so far, the user's tools); it returns the reply.

Both are ``UserPlayer``s, the protocol a model-played user will implement too
(``respond`` may return an awaitable, so a player can wait on HTTP). The agent
reaches the user through one tool, ``message_user(text)``, which returns the
user's reply once the user has acted.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from seahaven.errors import ArgumentError, ToolError, WorldBug
from seahaven.registry.targets import import_target, split_target
from seahaven.scenarios.calls import ToolCall

__all__ = [
    "MAX_MESSAGE_LENGTH",
    "MESSAGE_USER_TOOL",
    "STOP_MARKER",
    "PythonUser",
    "ScriptedUser",
    "User",
    "UserContext",
    "UserPlayer",
    "UserReply",
    "UserTurn",
    "When",
    "finish_awaitable",
    "message_text",
    "message_user_listing",
    "player_for",
]

# The one tool a scenario with a user adds for the agent: a message, answered with the reply.
MESSAGE_USER_TOOL = "message_user"
# A message longer than this (either way) is refused: it is a document, not a message.
MAX_MESSAGE_LENGTH = 20_000
# A reply holding this marker ends the conversation (tau2-bench's convention); it is removed.
STOP_MARKER = "###STOP###"


class When(BaseModel):
    """A condition on the agent's message: every piece of ``contains``, and ``pattern``.

    Both ignore case; a condition with neither holds for any message.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    contains: tuple[str, ...] = ()
    pattern: str | None = None

    @field_validator("contains", mode="before")
    @classmethod
    def _pieces(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("pattern")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as error:
                raise ValueError(
                    f"pattern {value!r} is not a regular expression: {error}"
                ) from None
        return value

    def holds(self, message: str) -> bool:
        """Whether ``message`` meets the condition."""
        folded = message.casefold()
        if not all(piece.casefold() in folded for piece in self.contains):
            return False
        return self.pattern is None or re.search(self.pattern, message, re.IGNORECASE) is not None


class UserTurn(BaseModel):
    """One scripted turn: when it answers, the calls the user makes first, and the reply."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    when: When | None = None
    calls: tuple[ToolCall, ...] = ()
    reply: str = Field(min_length=1, max_length=MAX_MESSAGE_LENGTH)
    stop: bool = False


class User(BaseModel):
    """Who the user is, what they want, what they may do, and how they are played."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instructions: str = Field(min_length=1)
    tools: tuple[str, ...] = ()
    script: tuple[UserTurn, ...] | None = None
    python: str | None = None
    fallback: str = Field(default="Sorry, I don't follow. Could you say that another way?")

    @field_validator("tools", mode="before")
    @classmethod
    def _tool_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("tools is a list of tool names, not one string")
        return value

    @field_validator("python")
    @classmethod
    def _target(cls, value: str | None) -> str | None:
        if value is not None and split_target(value) is None:
            raise ValueError("python names a function as module:function")
        return value

    @model_validator(mode="after")
    def _played_one_way(self) -> User:
        if (self.script is None) == (self.python is None):
            raise ValueError("a user is played by a script (a list of turns) or by python, one")
        if self.script is not None and not self.script:
            raise ValueError("a user's script holds at least one turn")
        if len(set(self.tools)) != len(self.tools):
            raise ValueError("a user's tools name each tool once")
        for index, turn in enumerate(self.script or ()):
            for call in turn.calls:
                if call.tool not in self.tools:
                    raise ValueError(
                        f"script[{index}] calls {call.tool!r}, which is not among the user's "
                        "tools; list it in tools"
                    )
        return self


@dataclass(frozen=True)
class UserReply:
    """What the user answers: the text, whether they end the conversation, and model tokens.

    ``tokens`` is a model-played user's usage (``prompt_tokens``,
    ``completion_tokens``, ``total_tokens``), kept apart from the agent's; a
    scripted user spends none.
    """

    text: str
    stop: bool = False
    tokens: Mapping[str, int] | None = None


@dataclass
class UserContext:
    """What a player is given for one turn: the user, the conversation, and the user's tools.

    ``call`` makes a tool call as the user (only the user's tools; the result as
    JSON data, a refusal raised as ``ToolError``); ``calls`` lists the ordinals
    of the calls made this turn.
    """

    instructions: str
    conversation: Sequence[Mapping[str, Any]]
    seed: int | None
    tools: list[dict[str, Any]]
    call: Callable[..., Any]
    calls: list[int] = field(default_factory=list)

    @property
    def message(self) -> str:
        """The agent's message this turn answers."""
        return str(self.conversation[-1]["text"]) if self.conversation else ""


@runtime_checkable
class UserPlayer(Protocol):
    """Plays a user: answers each agent message, acting with the user's tools first.

    ``respond`` may be ``async`` (return an awaitable): a model-played user
    awaits its model's HTTP reply there. A player whose answers take a while (a
    model's) may say so with a true attribute ``waits``: a runner with trials at
    once on one event loop then answers that user's messages off the loop
    (``seahaven.evaluation.LocalSession.acall``), so the trials beside it go on.
    Such a player may have ``cancel()``, called when the trial it answers in is
    given up (its time limit), to stop waiting.
    """

    def respond(self, turn: UserContext) -> UserReply | Awaitable[UserReply]:
        """The user's reply to the message ending ``turn.conversation``."""


class ScriptedUser:
    """A user played from its script: the first unused turn whose ``when`` holds answers."""

    def __init__(self, user: User) -> None:
        if user.script is None:
            raise WorldBug("a ScriptedUser needs a user with a script")
        self._turns = user.script
        self._fallback = user.fallback
        self._used: set[int] = set()

    def respond(self, turn: UserContext) -> UserReply:
        """Make the matching turn's calls, then answer with its reply."""
        message = turn.message
        for index, scripted in enumerate(self._turns):
            if index in self._used or (
                scripted.when is not None and not scripted.when.holds(message)
            ):
                continue
            self._used.add(index)
            for step in scripted.calls:
                try:
                    turn.call(step.tool, **step.arguments)
                except ArgumentError as error:
                    raise WorldBug(
                        f"the user's script[{index}] calls {step.tool} with arguments it "
                        f"refuses: {error.message}"
                    ) from None
                except ToolError:
                    continue  # the user met a refusal, as a person can; the call log has it
            return UserReply(scripted.reply, stop=scripted.stop)
        return UserReply(self._fallback)


class PythonUser:
    """A user played by a function of each turn (``UserContext``), answering text or a reply."""

    def __init__(self, function: Callable[[UserContext], Any], name: str) -> None:
        self._function = function
        self._name = name

    def respond(self, turn: UserContext) -> Any:
        """The function's reply (awaited later when it is a coroutine)."""
        return self._function(turn)

    def __repr__(self) -> str:
        return f"PythonUser({self._name})"


def player_for(user: User, scenario_id: str) -> UserPlayer:
    """The player a scenario's user is played by: its script, or its Python function."""
    if user.script is not None:
        return ScriptedUser(user)
    assert user.python is not None
    found = import_target(
        user.python,
        label=f"scenario {scenario_id!r}: user.python",
        what="a function of the user's turn",
        example="my_world.users:customer",
    )
    if not callable(found):
        raise WorldBug(
            f"scenario {scenario_id!r}: user.python {user.python!r} is not a function; it names "
            "a function called with each turn's UserContext"
        )
    return PythonUser(found, user.python)


def finish_awaitable(awaitable: Awaitable[Any]) -> Any:
    """Wait for ``awaitable`` from synchronous code, inside a running event loop or not."""

    async def awaited() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(awaited())
    # This thread's loop cannot be re-entered: the awaitable runs on a loop of its own.
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="seahaven-user") as pool:
        return pool.submit(asyncio.run, awaited()).result()


def as_reply(value: Any, scenario_id: str) -> UserReply:
    """A player's answer as a ``UserReply``: a string is the text; the stop marker stops."""
    if inspect.isawaitable(value):
        value = finish_awaitable(value)
    if isinstance(value, str):
        value = UserReply(value)
    if not isinstance(value, UserReply):
        raise WorldBug(
            f"scenario {scenario_id!r}: the user's player answered {type(value).__name__}; it "
            "answers a UserReply or the reply's text"
        )
    text, stop = value.text, value.stop
    if not isinstance(text, str):
        raise WorldBug(f"scenario {scenario_id!r}: the user's reply is not text: {text!r}")
    if STOP_MARKER in text:
        text, stop = text.replace(STOP_MARKER, "").strip(), True
    if len(text) > MAX_MESSAGE_LENGTH:
        text = text[:MAX_MESSAGE_LENGTH]
    return UserReply(text, stop=bool(stop), tokens=value.tokens)


def message_user_listing() -> dict[str, Any]:
    """The ``message_user`` tool as a tool list shows it."""
    return {
        "name": MESSAGE_USER_TOOL,
        "description": (
            "Send a message to the person you are helping, and get their reply. They see only "
            "what you write here, and may do things on their side before they answer. "
            "`ended` in the result is true when they have ended the conversation."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "text": {
                    "type": "string",
                    "description": "What you say to them.",
                }
            },
            "required": ["text"],
            "additionalProperties": False,
        },
    }


def message_text(arguments: Mapping[str, Any]) -> str:
    """The text of a ``message_user`` call; an ``ArgumentError`` as a tool's would read."""
    violations: list[dict[str, Any]] = []
    for name in sorted(set(arguments) - {"text"}):
        violations.append(
            {"loc": [name], "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}
        )
    text = arguments.get("text")
    if "text" not in arguments:
        violations.append({"loc": ["text"], "msg": "Field required", "type": "missing"})
    elif not isinstance(text, str):
        violations.append(
            {"loc": ["text"], "msg": "Input should be a valid string", "type": "string_type"}
        )
    elif not text.strip():
        violations.append(
            {"loc": ["text"], "msg": "String should not be empty", "type": "string_too_short"}
        )
    elif len(text) > MAX_MESSAGE_LENGTH:
        violations.append(
            {
                "loc": ["text"],
                "msg": f"String should have at most {MAX_MESSAGE_LENGTH} characters",
                "type": "string_too_long",
            }
        )
    if violations:
        raise ArgumentError(MESSAGE_USER_TOOL, violations)
    assert isinstance(text, str)
    return text
