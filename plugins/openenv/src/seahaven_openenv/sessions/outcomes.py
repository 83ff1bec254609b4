"""What a session answers: a call's outcome or failure, a bound episode's progress, internal errors.

A tool call ends in an ``Outcome`` (its result, or a ``Failure`` carrying
OpenEnv's ``error_type`` and the world's error triple); in an episode bound to a
scenario, ``bound_progress`` says where it stands after a step and ``bound_report``
what the state document says of it. An internal error reaches the client as
``internal error (<id>)``, its traceback in the operator's log under that id.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import Any

from seahaven.errors import SeahavenError, client_message
from seahaven.scenarios import ScenarioSet, Trial
from seahaven_openenv.sessions import descriptors
from seahaven_openenv.sessions.reset_data import MAX_MESSAGE_CHARACTERS
from seahaven_openenv.wire.echo import clip
from seahaven_openenv.wire.frames import FrameError

__all__ = [
    "BoundView",
    "Failure",
    "Outcome",
    "bound_progress",
    "bound_report",
    "error_observation",
    "internal_error_id",
    "internal_message",
    "log_internal",
    "reset_refusal",
]

_log = logging.getLogger("seahaven.openenv")


def internal_error_id() -> str:
    """A fresh correlation id for an internal error, printed in the log and sent to the client."""
    return f"err-{secrets.token_hex(6)}"


@dataclass(frozen=True, slots=True)
class Failure:
    """How a call failed: OpenEnv's ``error_type`` and message, and the world's triple."""

    error_type: str
    message: str
    triple: dict[str, Any]


@dataclass(frozen=True, slots=True)
class BoundView:
    """A bound session as MCP shows it: the scenario (``pack/id``) and what the agent is told."""

    scenario: str
    instructions: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one tool call answered: its result, or how it failed.

    In a session bound to a scenario, ``progress`` is where the episode stands
    after the call: ``{"reward", "done", "metadata"}``.
    """

    result: Any
    failure: Failure | None = None
    progress: dict[str, Any] | None = None


def error_observation(name: str, failure: Failure) -> dict[str, Any]:
    """The observation of a call to ``name`` that failed: OpenEnv's error and the world's triple."""
    metadata = {"seahaven_error": failure.triple}
    return {
        "observation": {
            "tool_name": name,
            "result": None,
            "error": {"error_type": failure.error_type, "message": failure.message},
            "metadata": metadata,
        },
        "reward": None,
        "done": False,
        "metadata": metadata,
    }


def reset_refusal(error: Exception, needed: int, *, logged: bool) -> FrameError:
    """The ``FrameError`` a reset whose instance could not be made (or restored) answers.

    No file descriptor left for the ``needed`` ones is ``CAPACITY_REACHED``; a
    ``SeahavenError`` (the caller's own arguments: an unknown fixture, a bad seed,
    setup_sql the sandbox refused, or a startup hook that refused them) names the
    fix in the words a client may read; anything else is an internal error.
    ``logged`` writes the first two to the operator's log too.
    """
    if descriptors.exhausted(error, needed=needed):
        if logged:
            _log.warning("a reset found no file descriptor left: %s", error)
        return FrameError(
            "CAPACITY_REACHED",
            "the server has no file descriptors left for another instance; try again when a "
            "session ends",
        )
    if isinstance(error, SeahavenError):
        if logged:
            # The operator's log has the whole of it.
            _log.info("reset failed: %s", error)
        message = clip(client_message(error), MAX_MESSAGE_CHARACTERS)
        return FrameError("EXECUTION_ERROR", f"reset failed: {message}")
    return FrameError("EXECUTION_ERROR", internal_message(error, "reset"))


def log_internal(error: BaseException, what: str) -> str:
    """Log ``error`` (raised in ``what``) with its traceback, under a fresh id; answer the id."""
    correlation = internal_error_id()
    _log.error(
        "internal error (%s) in %s: %s: %s",
        correlation,
        what,
        type(error).__name__,
        error,
        exc_info=error,
    )
    return correlation


def internal_message(error: BaseException, what: str) -> str:
    """What a client reads of an internal error: ``internal error (<id>)``, the id in the log."""
    return f"internal error ({log_internal(error, what)})"


def bound_progress(trial: Trial, was_done: bool) -> dict[str, Any]:
    """Where a bound episode stands after a step: its reward, ``done`` and the metadata.

    The reward is 0.0 on every step but the one that ends the episode, which
    pays the grade's score (and carries the whole grade); steps after the end
    pay nothing more.
    """
    metadata: dict[str, Any] = {"calls_left": trial.calls_left}
    reward = 0.0
    grade = trial.grade
    if trial.done and not was_done and grade is not None:
        reward = grade.score
        metadata.update(ended_by=trial.ended_by, grade=grade.to_dict())
    return {"reward": reward, "done": trial.done, "metadata": metadata}


def bound_report(trial: Trial, pack: ScenarioSet | None) -> dict[str, Any]:
    """What the state document says of the bound scenario, of ``pack``: the trial's report."""
    name = pack.name if pack is not None else None
    return {
        "scenario": f"{name}/{trial.scenario.id}",
        "pack": name,
        "pack_version": pack.version if pack is not None else None,
        **trial.report(),
        "calls_left": trial.calls_left,
        "instructions": trial.instructions,
        "state_sha256": trial.state_sha256(),
    }
