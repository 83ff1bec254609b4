"""A scenario: where an episode starts, what the agent is asked, and how its end is judged.

A world stays reward-free; a ``Scenario`` names a world and a ``Start`` (the
fixture, seed, clock, startup keywords and ``setup_sql`` a reset takes), gives
the agent its ``instructions`` and a call ``budget``, and carries the ``grader``
that scores the episode, with an optional reference ``solution`` (the tool calls
that solve it). Scenarios are plain data, written in Python or YAML, and each has
a content ``hash`` so a result says exactly which version of a task it graded.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from seahaven.declaration.world import World
from seahaven.errors import WorldBug
from seahaven.grading import Grader
from seahaven.grading.spec import as_grader
from seahaven.scenarios.calls import ToolCall
from seahaven.scenarios.events import Event
from seahaven.scenarios.users import MESSAGE_USER_TOOL, User
from seahaven.stores.clock import check_clock_mode, format_instant, parse_instant
from seahaven.stores.names import check_scenario_name

__all__ = [
    "DEFAULT_BUDGET",
    "SUBMIT_TOOL",
    "Accept",
    "Event",
    "Scenario",
    "Start",
    "ToolCall",
    "User",
    "read_calls",
]

# The one tool a bound session adds: it takes the agent's answer and ends the episode.
SUBMIT_TOOL = "submit"
# Tool calls an agent may make in one episode when a scenario does not say.
DEFAULT_BUDGET = 50


def read_calls(text: str, source: str) -> list[ToolCall]:
    """The calls a script holds: a JSON list of calls, or one call per line.

    Raises ``ValueError`` naming the call and ``source`` when the text is not
    JSON or a call is not ``{"tool": ..., "arguments": {...}}``.
    """
    stripped = text.strip()
    try:
        if stripped.startswith("["):
            items = json.loads(stripped)
        else:
            items = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except json.JSONDecodeError as error:
        raise ValueError(f"{source} is not JSON: {error}") from None
    if not isinstance(items, list):
        raise ValueError(f"{source} must be a JSON list of calls, or one call per line")
    calls: list[ToolCall] = []
    for position, item in enumerate(items, start=1):
        try:
            calls.append(ToolCall.model_validate(item))
        except ValidationError as error:
            raise ValueError(f"call {position} of {source}{_call_problem(item, error)}") from None
    return calls


def _call_problem(item: Any, error: ValidationError) -> str:
    """What is wrong with one scripted call, as the end of a sentence naming it."""
    if not isinstance(item, dict) or not isinstance(item.get("tool"), str) or not item["tool"]:
        return " must be an object with a string 'tool'"
    extra = sorted(set(item) - set(ToolCall.model_fields))
    if extra:
        return f" has {', '.join(extra)}; a call is tool and arguments"
    if not isinstance(item.get("arguments", {}), dict):
        return ": 'arguments' must be an object"
    return f": {error.errors()[0]['msg']}"


class Start(BaseModel):
    """Where an episode starts: everything ``world.instance(...)`` and a reset take.

    ``seed`` is the scenario's own; an eval derives a seed per trial instead
    (``seahaven.evaluation.trial_seed``), so trials differ where the world draws
    randomness while every trial of one seed replays exactly.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    fixture: str | None = None
    seed: int | None = None
    now: str | None = None
    clock_mode: Literal["fixed", "tick", "running", "wall"] | None = None
    startup: dict[str, Any] = Field(default_factory=dict)
    setup_sql: str | None = None

    @field_validator("now", mode="before")
    @classmethod
    def _canonical_now(cls, value: Any) -> Any:
        # YAML reads an unquoted timestamp as a datetime; either way, keep the canonical text.
        if value is None:
            return None
        if not isinstance(value, str | datetime):
            raise ValueError("now is an instant, as 2026-03-02T09:00:00.000Z")
        try:
            return format_instant(parse_instant(value))
        except WorldBug as error:
            raise ValueError(str(error)) from None

    @field_validator("clock_mode", mode="before")
    @classmethod
    def _known_mode(cls, value: Any) -> Any:
        if value is None:
            return None
        try:
            return check_clock_mode(value)
        except WorldBug as error:
            raise ValueError(str(error)) from None

    @field_validator("seed", mode="before")
    @classmethod
    def _whole_seed(cls, value: Any) -> Any:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError("seed is a whole number")
        return value

    def instance_options(self, *, seed: int | None = None) -> dict[str, Any]:
        """The keywords of ``world.instance(...)`` for this start; ``seed`` replaces its own."""
        options: dict[str, Any] = {
            "fixture": self.fixture,
            "seed": self.seed if seed is None else seed,
            "now": self.now,
            "clock_mode": self.clock_mode,
            "setup_sql": self.setup_sql,
        }
        if self.startup:
            options["startup"] = dict(self.startup)
        return {key: value for key, value in options.items() if value is not None}


class Accept(BaseModel):
    """A mutant ``seahaven scenarios check`` may find surviving, accepted on purpose, and why.

    ``mutant`` is a mutant's name (``wrong-answer:done``) or a shell-style
    pattern of names (``change-arg-1:refund_invoice.reason=*``); ``reason``
    says why the grader is right to pass it. The check shows each accepted
    mutant with its reason, and reports an ``accept`` that matches no surviving
    mutant, so that one cannot hide a later survivor.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mutant: str = Field(min_length=1)
    reason: str = Field(min_length=1)

    @field_validator("reason")
    @classmethod
    def _said(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("reason says why the mutant is right to pass; it cannot be blank")
        return value

    def matches(self, name: str) -> bool:
        """Whether this names the mutant called ``name`` (exactly, or as a pattern)."""
        return fnmatch.fnmatchcase(name, self.mutant)


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class Scenario(BaseModel):
    """One task on one world: a start, instructions, a grader, a budget; optionally a solution."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    id: str
    world: str | World
    instructions: str = Field(min_length=1)
    grader: Grader
    start: Start = Field(default_factory=Start)
    solution: tuple[ToolCall, ...] | None = None
    budget: int = Field(default=DEFAULT_BUDGET, ge=1, le=100_000)
    tags: tuple[str, ...] = ()
    accept: tuple[Accept, ...] = ()
    # People in the world (seahaven.scenarios.users and events): a simulated user the agent
    # talks to with message_user, and what happens while it works.
    user: User | None = None
    events: tuple[Event, ...] = ()

    @field_validator("id", mode="before")
    @classmethod
    def _spelled(cls, value: Any) -> Any:
        try:
            return check_scenario_name(value)
        except WorldBug as error:
            raise ValueError(str(error)) from None

    @field_validator("world", mode="before")
    @classmethod
    def _named_world(cls, value: Any) -> Any:
        if isinstance(value, World):
            return value
        if not isinstance(value, str) or not value:
            raise ValueError("world is a registered world's name, module:attr, or a World")
        return value

    @field_validator("grader", mode="before")
    @classmethod
    def _built_grader(cls, value: Any) -> Any:
        try:
            return as_grader(value, "grader")
        except WorldBug as error:
            raise ValueError(str(error)) from None

    @field_validator("tags", mode="before")
    @classmethod
    def _tag_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError("tags is a list of words, not one string")
        return value

    @field_validator("budget", mode="before")
    @classmethod
    def _whole_budget(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("budget is a whole number of tool calls")
        return value

    @field_validator("events")
    @classmethod
    def _events_named_once(cls, value: tuple[Event, ...]) -> Any:
        names = [event.name for event in value]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"two events are named {', '.join(map(repr, twice))}; name each once")
        return value

    @model_validator(mode="after")
    def _messages_need_a_user(self) -> Scenario:
        if self.user is None and any(
            call.tool == MESSAGE_USER_TOOL for call in self.solution or ()
        ):
            raise ValueError(
                f"solution: {MESSAGE_USER_TOOL} talks to the scenario's user, and it has none; "
                "give the scenario a user"
            )
        return self

    @field_validator("solution")
    @classmethod
    def _one_submit_last(cls, value: tuple[ToolCall, ...] | None) -> Any:
        if value is None:
            return None
        for index, call in enumerate(value):
            if call.tool == SUBMIT_TOOL:
                if index != len(value) - 1:
                    raise ValueError("a solution submits its answer last, once")
                if set(call.arguments) != {"answer"}:
                    raise ValueError(
                        "a solution submits as {tool: submit, arguments: {answer: ...}}"
                    )
        return value

    @field_serializer("world")
    def _world_name(self, world: str | World) -> str:
        return world.name if isinstance(world, World) else world

    @field_serializer("grader")
    def _grader_spec(self, grader: Grader) -> Any:
        return grader.spec()

    @property
    def world_name(self) -> str:
        """The name of the world this scenario runs on."""
        return self.world.name if isinstance(self.world, World) else self.world

    def calls(self) -> int:
        """How many world tool calls the solution makes (``submit`` not counted)."""
        return sum(1 for call in self.solution or () if call.tool != SUBMIT_TOOL)

    def to_data(self) -> dict[str, Any]:
        """The scenario as plain data, the shape its YAML takes (the grader as its spec).

        A scenario without a user or events leaves both keys out, so its data (and
        hash) are what they were before scenarios had people in them.
        """
        data = self.model_dump(mode="json", exclude_none=True)
        data["start"] = self.start.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
        if not self.accept:
            del data["accept"]
        if not self.events:
            data.pop("events", None)
        else:
            data["events"] = [
                event.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
                for event in self.events
            ]
        if self.user is not None:
            data["user"] = self.user.model_dump(mode="json", exclude_none=True)
        return data

    @functools.cached_property
    def hash(self) -> str:
        """A stable content hash: the same text for the same task, on any machine.

        It covers the world's name, the start, the instructions, the grader (a
        Python grader by its source), the solution, the budget, the tags, and the
        user and the events when the scenario has them. It leaves out ``accept``,
        which changes what ``scenarios check`` reports and nothing an episode is
        graded by, so accepting a mutant keeps the results of earlier evals valid.
        A scenario is immutable, so the hash is worked out once per scenario object
        (a trial reads it for its replay, an eval for every result line).
        """
        data = self.to_data()
        data.pop("accept", None)
        return hashlib.sha256(_canonical_json(data).encode("utf-8")).hexdigest()

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied, its ``hash`` worked out afresh for what it holds."""
        copied = super().model_copy(update=update, deep=deep)
        copied.__dict__.pop("hash", None)
        return copied

    def resolve_world(self) -> World:
        """The ``World`` this scenario runs on, found by name if it was given one."""
        if isinstance(self.world, World):
            return self.world
        from seahaven.registry.discovery import find_world

        try:
            return find_world(self.world).world
        except WorldBug as error:
            raise WorldBug(f"scenario {self.id!r}: {error}") from None


def scenario_from_data(data: Mapping[str, Any], where: str) -> Scenario:
    """A scenario from plain data; a ``WorldBug`` naming ``where`` and each problem."""
    from pydantic import ValidationError

    try:
        return Scenario.model_validate(dict(data))
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            location = ".".join(str(part) for part in problem["loc"])
            message = str(problem["msg"]).removeprefix("Value error, ")
            problems.append(f"{location}: {message}" if location else message)
        raise WorldBug(f"{where}: " + "; ".join(problems)) from None
