"""The in-process runner of episodes, which every other runner reuses.

``run_episode`` runs one episode in this process, and ``run_in_process`` a
stream of them. A runner elsewhere (the Ray plugin's actors) calls the very
same function, which is why an episode's state document is the same on a
cluster as here. ``WorldLoader`` finds each episode's world by name once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic_core import to_jsonable_python

from seahaven.declaration.world import World
from seahaven.episodes.model import (
    CallError,
    CallOutcome,
    Episode,
    EpisodeError,
    EpisodeResult,
    Timings,
    check_unique,
)
from seahaven.errors import ToolError, WorldBug
from seahaven.registry.worlds import import_world
from seahaven.scenarios.calls import ToolCall
from seahaven.stores.storage import runner_storage

__all__ = ["WorldLoader", "run_episode", "run_in_process"]


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
                    from seahaven.registry.worlds import registry

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
