"""Episodes as data, and the in-process runner every other runner reuses.

An ``Episode`` says everything needed to run one episode anywhere: the world
(a registered name, so any machine with the world's package installed finds
it), the fixture, seed, clock, ``setup_sql``, startup keywords, and either a
script of calls or a policy. An ``EpisodeResult`` is what came of it: every
call with its observation, the state document, and timings. Both are pydantic
models that dump to JSON.

``run_episode`` runs one episode in this process, and ``run_in_process`` a
stream of them. A runner elsewhere (the Ray plugin's actors) calls the very
same function, which is why an episode's state document is the same on a
cluster as here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic_core import to_jsonable_python

from seahaven.clock import ClockMode
from seahaven.errors import ToolError, WorldBug
from seahaven.instance_options import InstanceOptions, instance_option_names, option_problems
from seahaven.registry import import_world
from seahaven.scenarios.model import ToolCall
from seahaven.storage import runner_storage
from seahaven.world import World

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
    "WorldLoader",
    "check_unique",
    "run_episode",
    "run_in_process",
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


class WorldLoader:
    """Worlds by the names episodes give, each loaded once and kept; safe across threads."""

    def __init__(self, known: Mapping[str, World] | None = None) -> None:
        self._worlds: dict[str, World] = dict(known or {})
        self._lock = threading.Lock()

    def load(self, name: str) -> World:
        """The world ``name`` names: a registered name, or ``module:attr``; else ``WorldBug``."""
        with self._lock:
            found = self._worlds.get(name)
            if found is None:
                if ":" in name:
                    found = import_world(name)[0]
                else:
                    from seahaven.registry import registry

                    found = registry().load(name)
                self._worlds[name] = found
            return found


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _observe(tool: str, arguments: dict[str, Any], run: Callable[[], Any]) -> CallOutcome:
    """Make one call; a ToolError is an observation, anything else is re-raised."""
    try:
        returned = run()
    except ToolError as error:
        details = to_jsonable_python(error.details, fallback=repr) if error.details else None
        failure = CallError(
            type=error.error_type, code=error.code, message=error.message, details=details
        )
        return CallOutcome(tool=tool, arguments=arguments, error=failure)
    return CallOutcome(
        tool=tool, arguments=arguments, result=to_jsonable_python(returned, fallback=repr)
    )


class _EpisodeFailed(Exception):
    def __init__(self, kind: Literal["world", "policy"], message: str) -> None:
        super().__init__(message)
        self.kind: Literal["world", "policy"] = kind
        self.message = message


def _next_call(
    episode: Episode, tools: list[dict[str, Any]], seen: list[CallOutcome]
) -> ToolCall | None:
    policy = episode.policy
    if policy is None:
        raise _EpisodeFailed(
            "policy",
            f"episode {episode.episode_id!r} names the policy {episode.policy_name} but does not "
            "carry it (a policy is not written to JSON); pass the callable as policy=",
        )
    try:
        chosen = policy(tools, list(seen))
    except Exception as error:
        raise _EpisodeFailed(
            "policy", f"the policy {episode.policy_name} raised {type(error).__name__}: {error}"
        ) from None
    if chosen is None or isinstance(chosen, ToolCall):
        return chosen
    if isinstance(chosen, Mapping):
        try:
            return ToolCall.model_validate(dict(chosen))
        except ValueError as error:
            detail = " ".join(str(error).split())
            raise _EpisodeFailed(
                "policy",
                f"the policy {episode.policy_name} returned {chosen!r}, which is not a call "
                f"({detail}); return {{'tool': ..., 'arguments': {{...}}}}, a ToolCall, or None",
            ) from None
    raise _EpisodeFailed(
        "policy",
        f"the policy {episode.policy_name} returned a {type(chosen).__name__}; return a ToolCall, "
        "{'tool': ..., 'arguments': {...}}, or None to stop",
    )


def run_episode(
    episode: Episode, *, worlds: WorldLoader | None = None, worker: str = "in-process"
) -> EpisodeResult:
    """Run one episode in this process and return its result; it never raises for a world.

    A fresh instance is made for the episode and destroyed at its end. Calls
    that raise a ``ToolError`` are observations and the episode goes on; an
    exception that is not a ``ToolError`` (a ``WorldBug`` from a tool, an
    unknown fixture, a bad startup keyword) ends it, as does a policy that
    raises, returns something that is not a call, or passes ``max_calls``.
    Those give a result with ``status="failed"`` and the ``error``; the state
    document is still read when the instance exists.
    """
    loader = worlds if worlds is not None else WorldLoader()
    started_at = _now_iso()
    clock = time.perf_counter
    begun = clock()
    instance_seconds = calls_seconds = state_seconds = 0.0
    outcomes: list[CallOutcome] = []
    state: dict[str, Any] | None = None
    failure: EpisodeError | None = None
    try:
        world = loader.load(episode.world)
        keywords = episode.instance_options().keywords()
        # An episode's instance is the runner's own: memory unless the episode or the
        # process (SEAHAVEN_STORAGE) says otherwise.
        keywords["storage"] = runner_storage(keywords.get("storage"))
        instance = world.instance(**keywords)
    except Exception as error:
        failure = EpisodeError(kind="world", message=_describe(error))
        instance = None
    instance_seconds = clock() - begun
    if instance is not None:
        with instance:
            calls_begun = clock()
            try:
                _drive(episode, instance, outcomes)
            except _EpisodeFailed as failed:
                failure = EpisodeError(kind=failed.kind, message=failed.message)
            calls_seconds = clock() - calls_begun
            state_begun = clock()
            try:
                # The document names the episode by the id it was given, not the instance's,
                # which is new for every run.
                state = {**instance.state(), "episode_id": episode.episode_id}
            except Exception as error:
                if failure is None:
                    failure = EpisodeError(kind="world", message=_describe(error))
            state_seconds = clock() - state_begun
    timings = Timings(
        started_at=started_at,
        instance_seconds=instance_seconds,
        calls_seconds=calls_seconds,
        state_seconds=state_seconds,
        total_seconds=clock() - begun,
    )
    return EpisodeResult(
        episode_id=episode.episode_id,
        status="ok" if failure is None else "failed",
        error=failure,
        calls=outcomes,
        state=state,
        timings=timings,
        worker=worker,
        episode=episode,
    )


def _drive(episode: Episode, instance: Any, outcomes: list[CallOutcome]) -> None:
    def call(step: ToolCall) -> None:
        arguments = dict(step.arguments)
        try:
            outcomes.append(
                _observe(step.tool, arguments, lambda: instance.call(step.tool, **arguments))
            )
        except Exception as error:
            bug = CallError(type="world_bug", message=_describe(error))
            outcomes.append(CallOutcome(tool=step.tool, arguments=arguments, error=bug))
            raise _EpisodeFailed(
                "world", f"call {len(outcomes) - 1} ({step.tool}): {_describe(error)}"
            ) from None

    if episode.calls is not None:
        for step in episode.calls:
            call(step)
        return
    tools = instance.tools()
    while True:
        chosen = _next_call(episode, tools, outcomes)
        if chosen is None:
            return
        if len(outcomes) >= episode.max_calls:
            raise _EpisodeFailed(
                "policy",
                f"the policy {episode.policy_name} did not stop after max_calls="
                f"{episode.max_calls} calls; return None to stop, or raise max_calls",
            )
        call(chosen)


def _describe(error: BaseException) -> str:
    text = " ".join(str(error).split())
    if isinstance(error, WorldBug):
        return text
    return f"{type(error).__name__}: {text}"


def run_in_process(
    episodes: Iterable[Episode], *, worlds: WorldLoader | None = None
) -> Generator[EpisodeResult, None, None]:
    """Run episodes one after another in this thread, yielding each result as it is made.

    An episode id seen twice raises ``WorldBug`` when the second is reached:
    every episode has exactly one result, so ids must be unique.
    """
    loader = worlds if worlds is not None else WorldLoader()
    seen: set[str] = set()
    for episode in episodes:
        check_unique(episode, seen)
        yield run_episode(episode, worlds=loader)


def check_unique(episode: Episode, seen: set[str]) -> None:
    """Add the episode's id to ``seen``; a ``WorldBug`` if it is there already."""
    if episode.episode_id in seen:
        raise WorldBug(
            f"episode id {episode.episode_id!r} is given twice; every episode needs an id of "
            "its own, since each yields exactly one result"
        )
    seen.add(episode.episode_id)
