"""Episodes as data: an ``Episode`` (what to run) and an ``EpisodeResult`` (what came of it).

An ``Episode`` says everything needed to run one episode anywhere: the world
(a registered name, so any machine with the world's package installed finds
it), the fixture, seed, clock, ``setup_sql``, startup keywords, and either a
script of calls or a policy. An ``EpisodeResult`` is what came of it: every
call with its observation, the state document, and timings. Both are pydantic
models that dump to JSON. They import nothing that finds or runs a world, so
the plugin hooks can name them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from seahaven.declaration.instance_options import (
    InstanceOptions,
    instance_option_names,
    option_problems,
)
from seahaven.errors import WorldBug
from seahaven.scenarios.calls import ToolCall
from seahaven.stores.clock import ClockMode

__all__ = [
    "EPISODE_OPTION_FIELDS",
    "CallError",
    "CallOutcome",
    "Episode",
    "EpisodeError",
    "EpisodeResult",
    "Policy",
    "Timings",
    "ToolCall",
    "check_unique",
]


class CallError(BaseModel):
    """Why a call did not return: a ``ToolError``'s published shape, or an author's bug."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The framework's category: ``execution_error``, ``invalid_args``, ``tool_not_found``,
    # or ``world_bug`` for an exception that is not a ToolError (the world's author's to fix).
    type: str
    code: str | None = None
    message: str
    details: dict[str, Any] | None = None


class CallOutcome(BaseModel):
    """A call made and what the agent observed: its ``result``, or its ``error``.

    Dumped as ``{"tool", "arguments", "result"}`` or ``{"tool", "arguments",
    "error"}``: exactly one of the two keys, so a result of ``null`` is told
    apart from an error.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: CallError | None = None

    @property
    def ok(self) -> bool:
        """Whether the call returned."""
        return self.error is None

    @model_serializer(mode="wrap")
    def _one_of_result_or_error(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        dumped.pop("result" if self.error is not None else "error", None)
        return dumped


Policy = Callable[[list[dict[str, Any]], list[CallOutcome]], ToolCall | Mapping[str, Any] | None]
"""A policy: ``policy(tools, observations) -> next call, or None to stop``.

It is called before every call with the instance's tool list (as
``inst.tools()`` gives it) and every observation so far, the latest last (an
empty list before the first call). It returns a ``ToolCall``, a mapping
``{"tool": ..., "arguments": {...}}``, or ``None`` to end the episode. To run on
Ray it must be picklable (by cloudpickle): a module-level function or an
object of an importable class; a lambda or closure is pickled by value.
"""


class Episode(BaseModel):
    """One episode, as data: where it starts, and the calls (or the policy) that drive it."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    episode_id: str = Field(min_length=1)
    # A registered world name (every worker finds it in the registry of its installed
    # packages), or module:attr of a module every worker can import.
    world: str = Field(min_length=1)
    fixture: str | None = None
    seed: int | None = Field(default=None, ge=0, lt=2**64)
    now: str | None = None
    clock_mode: ClockMode | None = None
    setup_sql: str | None = None
    startup: dict[str, Any] = Field(default_factory=dict)
    # Where the instance keeps its stores (memory or disk); None is the worker's default:
    # SEAHAVEN_STORAGE there, else memory (seahaven.storage.runner_storage).
    storage: Literal["memory", "disk"] | None = None
    calls: list[ToolCall] | None = None
    policy: Policy | None = Field(default=None, exclude=True)
    # How the policy is named in the episode's JSON; filled in from ``policy``.
    policy_name: str | None = None
    # A policy that has not stopped after this many calls fails the episode.
    max_calls: int = Field(default=1000, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _options_of_their_json_types(cls, data: Any) -> Any:
        # The instance fields take what seahaven.InstanceOptions takes, refused in its words
        # (a string is not a seed); the constraints of this model's own come after.
        if isinstance(data, Mapping):
            given = {name: data[name] for name in EPISODE_OPTION_FIELDS if name in data}
            problems = option_problems(given)
            if problems:
                raise ValueError("; ".join(problems))
        return data

    @model_validator(mode="after")
    def _calls_or_policy(self) -> Episode:
        if self.calls is not None and (self.policy is not None or self.policy_name is not None):
            raise ValueError(
                f"episode {self.episode_id!r} has both calls and a policy; give one of them"
            )
        if self.calls is None and self.policy is None and self.policy_name is None:
            raise ValueError(
                f"episode {self.episode_id!r} has neither calls nor a policy; give "
                "calls=[...] or policy=..."
            )
        if self.policy is not None and self.policy_name is None:
            object.__setattr__(self, "policy_name", _name_of(self.policy))
        return self

    def instance_options(self) -> InstanceOptions:
        """The options the episode's instance is made with, as ``seahaven.InstanceOptions``.

        Its instance fields are the model's (``EPISODE_OPTION_FIELDS``); an empty
        ``startup`` is no startup keywords.
        """
        given = {name: getattr(self, name) for name in EPISODE_OPTION_FIELDS}
        given["startup"] = self.startup or None
        return InstanceOptions.model_validate(given)


# The fields of an Episode that are instance options, in the model's order.
EPISODE_OPTION_FIELDS: tuple[str, ...] = tuple(
    name for name in instance_option_names() if name in Episode.model_fields
)


def _name_of(policy: object) -> str:
    target = policy if hasattr(policy, "__qualname__") else type(policy)
    module = getattr(target, "__module__", None) or "?"
    return f"{module}:{getattr(target, '__qualname__', repr(target))}"


class EpisodeError(BaseModel):
    """Why an episode did not run to its end.

    ``kind`` is ``world`` (the world refused the episode: an unknown fixture, a
    bad startup keyword, an exception in world code), ``policy`` (the policy
    raised, returned something that is not a call, or would not stop),
    ``worker`` (the process running it died, on every attempt allowed), or
    ``timeout`` (it ran longer than the run's ``episode_timeout``, and its
    worker was stopped).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["world", "policy", "worker", "timeout"]
    message: str


class Timings(BaseModel):
    """Where an episode's time went, in seconds, and when it started (wall clock, UTC)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    started_at: str
    instance_seconds: float = 0.0
    calls_seconds: float = 0.0
    state_seconds: float = 0.0
    total_seconds: float = 0.0


class EpisodeResult(BaseModel):
    """What one episode produced: its calls and observations, the state document, timings.

    ``state`` is the document ``inst.state()`` returned at the end, its
    ``episode_id`` the episode's own, or ``None`` when no instance could be made
    (or the worker died). ``error`` is ``None``
    for an episode that ran to its end; a ``ToolError`` is an observation, not
    an error of the episode.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    episode_id: str
    status: Literal["ok", "failed"]
    error: EpisodeError | None = None
    calls: list[CallOutcome] = Field(default_factory=list)
    state: dict[str, Any] | None = None
    timings: Timings
    # How many times the episode was started: more than 1 after a worker died running it.
    attempts: int = 1
    # Where it ran: ``in-process``, or the Ray actor, node and process.
    worker: str = "in-process"
    episode: Episode

    @property
    def ok(self) -> bool:
        """Whether the episode ran to its end."""
        return self.status == "ok"


def check_unique(episode: Episode, seen: set[str]) -> None:
    """Add the episode's id to ``seen``; a ``WorldBug`` if it is there already."""
    if episode.episode_id in seen:
        raise WorldBug(
            f"episode id {episode.episode_id!r} is given twice; every episode needs an id of "
            "its own, since each yields exactly one result"
        )
    seen.add(episode.episode_id)
