"""One session: what a WebSocket connection holds, and what each of its frames does.

A session owns at most one instance. Its methods take a frame's ``data`` and
answer the ``data`` of the reply, as plain JSON-ready dicts; they run on a
worker thread and never touch the network, so the server, the OpenEnv
``Environment`` adapter and the tests all drive the same code. A refused frame
raises ``FrameError``, which the server sends as OpenEnv's error frame.

Everything a reset does is ``world.instance(...)``: the session only checks the
frame's keys, makes the instance, and keeps the episode id the caller chose.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import seahaven
from seahaven.errors import SeahavenError, ToolError, WorldBug, client_message
from seahaven.state import document_json, document_without_instance

__all__ = [
    "IGNORED_RESET_KEYS",
    "RESET_KEYS",
    "Failure",
    "FrameError",
    "Outcome",
    "Session",
    "WorldService",
    "internal_error_id",
]

_log = logging.getLogger("seahaven.openenv")

# Every key that changes what a reset does, in the order error messages list them.
RESET_KEYS: tuple[str, ...] = (
    "fixture",
    "seed",
    "now",
    "clock_mode",
    "episode_id",
    "state_format",
    "startup",
    "setup_sql",
)
# Accepted and ignored: the control tool is the operator's to enable, never the client's.
IGNORED_RESET_KEYS: frozenset[str] = frozenset({"control_tools"})

MAX_EPISODE_ID_LENGTH = 255

# The wire's encoding of a state document, as ``frames.encode`` writes it.
_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


class FrameError(Exception):
    """A frame the session refuses: sent as ``{"type": "error", "data": {"code", "message"}}``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def internal_error_id() -> str:
    """A fresh correlation id for an internal error, printed in the log and sent to the client."""
    return f"err-{secrets.token_hex(6)}"


class WorldService:
    """What every session of one served world shares: the world, its options, its tool list."""

    def __init__(self, world: seahaven.World, *, include_control_tools: bool = False) -> None:
        self.world = world
        self.include_control_tools = include_control_tools
        self._tools: tuple[object, list[dict[str, Any]]] | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The world's name."""
        return self.world.name

    def tools(self) -> list[dict[str, Any]]:
        """The flat tool list, as ``inst.tools()`` would give it; needs no instance."""
        composition = self.world.composition()
        with self._lock:
            cached = self._tools
            if cached is None or cached[0] is not composition:
                listing = [entry.listing() for entry in composition.surface]
                cached = self._tools = (composition, listing)
        return cached[1]

    def session(self) -> Session:
        """A new session with no instance."""
        return Session(self)


class Session:
    """One connection's episode: at most one instance, the step count and the last activity."""

    def __init__(self, service: WorldService) -> None:
        self.service = service
        self.instance: seahaven.Instance | None = None
        self.episode_id: str | None = None
        self.step_count = 0
        self.last_activity = time.monotonic()
        self.closed = False
        # Frames of one connection arrive in order, but the reaper and a lost connection
        # may end the session from another thread while a frame runs.
        self._lock = threading.RLock()

    # --- frames -----------------------------------------------------------------------------

    def reset(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Make the session's instance from a reset frame's ``data``; answer the observation."""
        with self._lock:
            self._check_open()
            arguments, episode_id = self._reset_arguments(data)
            self.last_activity = time.monotonic()
            self._destroy_instance()
            self.step_count = 0
            self.episode_id = None
            try:
                instance = self.service.world.instance(
                    control_tools=self.service.include_control_tools, **arguments
                )
            except SeahavenError as error:
                # The caller's own arguments (an unknown fixture, a bad seed, setup_sql the
                # sandbox refused) or a startup hook that refused them: the message names the fix,
                # in the words a client may read; the operator's log has the whole of it.
                _log.info("reset failed: %s", error)
                raise FrameError(
                    "EXECUTION_ERROR", f"reset failed: {client_message(error)}"
                ) from None
            except Exception as error:
                raise FrameError("EXECUTION_ERROR", _internal(error, "reset")) from None
            self.instance = instance
            self.last_activity = time.monotonic()
            self.episode_id = episode_id if episode_id is not None else instance.id
            metadata = {
                "fixture": instance.fixture,
                "now": instance.clock.iso(),
                "clock_mode": instance.clock.mode,
                "tools": len(self.service.tools()),
                "episode_id": self.episode_id,
            }
            return {
                "observation": {"metadata": metadata},
                "reward": None,
                "done": False,
                "metadata": metadata,
            }

    def step(self, data: Any) -> dict[str, Any]:
        """Run a step frame's action (``call_tool`` or ``list_tools``); answer the observation."""
        with self._lock:
            self._check_open()
            # Every step counts, a refused one too: the count is of what the session asked for.
            self.step_count += 1
            self.last_activity = time.monotonic()
            if not isinstance(data, dict):
                raise FrameError("VALIDATION_ERROR", "a step's data must be an action object")
            action = data.get("type")
            if action == "list_tools":
                _only_keys(data, {"type", "metadata"}, "list_tools")
                tools = self.service.tools()
                return {
                    "observation": {"tools": tools, "metadata": {}},
                    "reward": None,
                    "done": False,
                }
            if action == "call_tool":
                _only_keys(data, {"type", "tool_name", "arguments", "metadata"}, "call_tool")
                name = data.get("tool_name")
                arguments = data.get("arguments", {})
                if not isinstance(name, str):
                    raise FrameError("VALIDATION_ERROR", "call_tool needs tool_name, a string")
                if not isinstance(arguments, dict):
                    raise FrameError(
                        "VALIDATION_ERROR", "call_tool's arguments must be an object of name: value"
                    )
                return self._call(name, arguments)
            raise FrameError(
                "VALIDATION_ERROR",
                f"unknown action type {action!r}; a step is call_tool or list_tools",
            )

    def state(self) -> dict[str, Any]:
        """The state document plus ``step_count``."""
        with self._lock:
            self._check_open()
            instance = self.instance
            try:
                if instance is None:
                    document = document_without_instance(self.service.world)
                else:
                    document = instance.state()
                    document["episode_id"] = self.episode_id
            except Exception as error:
                raise FrameError("EXECUTION_ERROR", _internal(error, "state")) from None
            document["step_count"] = self.step_count
            return document

    def state_text(self) -> str:
        """``state()`` as compact JSON text, the change log joined from its records' texts.

        The same text as encoding ``state()`` for the wire (compact, non-ASCII
        kept, no NaN), without building the document's dicts on every frame. A
        value JSON cannot carry raises ``ValueError``, as the encoder would.
        """
        with self._lock:
            self._check_open()
            instance = self.instance
            try:
                if instance is None:
                    document = document_without_instance(self.service.world)
                else:
                    return document_json(
                        instance,
                        fields={"episode_id": self.episode_id, "step_count": self.step_count},
                    )
            except ValueError:
                raise
            except Exception as error:
                raise FrameError("EXECUTION_ERROR", _internal(error, "state")) from None
            document["step_count"] = self.step_count
            return _encode(document)

    def close(self) -> None:
        """End the session: destroy its instance. Idempotent."""
        with self._lock:
            self.closed = True
            self._destroy_instance()

    def reap(self, idle_for: float) -> bool:
        """Destroy the instance when the session has been idle ``idle_for`` seconds or more.

        A session in the middle of a frame is busy, not idle, however long the frame takes.
        """
        if not self._lock.acquire(blocking=False):
            return False
        try:
            if self.instance is None or time.monotonic() - self.last_activity < idle_for:
                return False
            self._destroy_instance()
            return True
        finally:
            self._lock.release()

    # --- internals --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise FrameError("SESSION_ERROR", "the session has ended; open a new connection")

    def _destroy_instance(self) -> None:
        instance, self.instance = self.instance, None
        if instance is not None:
            instance.destroy()

    def _reset_arguments(self, data: Any) -> tuple[dict[str, Any], str | None]:
        if not isinstance(data, dict):
            raise FrameError("VALIDATION_ERROR", "a reset's data must be an object")
        stray = sorted(
            key for key in data if key not in RESET_KEYS and key not in IGNORED_RESET_KEYS
        )
        if stray:
            startup_keys = [key for key in stray if key in self._startup_keywords()]
            if startup_keys:
                named = ", ".join(repr(key) for key in startup_keys)
                what = "a startup keyword" if len(startup_keys) == 1 else "startup keywords"
                raise FrameError(
                    "VALIDATION_ERROR",
                    f"{named}: {what} of world {self.service.name!r} goes inside startup, as "
                    f'{{"startup": {{"{startup_keys[0]}": ...}}}}',
                )
            raise FrameError(
                "VALIDATION_ERROR",
                f"reset does not take {', '.join(repr(key) for key in stray)}; it takes "
                f"{', '.join(RESET_KEYS)}",
            )
        arguments = {key: data[key] for key in RESET_KEYS if key in data and key != "episode_id"}
        episode_id = data.get("episode_id")
        if episode_id is not None and (
            not isinstance(episode_id, str)
            or not episode_id
            or len(episode_id) > MAX_EPISODE_ID_LENGTH
        ):
            raise FrameError(
                "VALIDATION_ERROR",
                f"episode_id must be a non-empty string of at most {MAX_EPISODE_ID_LENGTH} "
                "characters",
            )
        startup = arguments.get("startup")
        if startup is not None and not isinstance(startup, dict):
            raise FrameError("VALIDATION_ERROR", "startup must be an object of startup keywords")
        return arguments, episode_id

    def _startup_keywords(self) -> frozenset[str]:
        world = self.service.world
        keywords: set[str] = set()
        for node in world.composition().nodes:
            keywords |= node.world.accepted_startup_kwargs
        return frozenset(keywords)

    def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        outcome = self._invoke(name, arguments)
        if outcome.failure is None:
            return {
                "observation": {"tool_name": name, "result": outcome.result, "error": None},
                "reward": None,
                "done": False,
            }
        return _error_observation(name, outcome.failure)

    def _invoke(self, name: str, arguments: dict[str, Any]) -> Outcome:
        instance = self.instance
        if instance is None:
            raise FrameError(
                "EXECUTION_ERROR",
                "this session has no instance yet; send a reset before calling a tool",
            )
        try:
            return Outcome(instance.call(name, **arguments))
        except ToolError as error:
            return Outcome(None, Failure(error.error_type, error.message, error.to_dict()))
        except WorldBug as error:
            # A broken world must fail loudly: never an observation an eval could score.
            raise FrameError("EXECUTION_ERROR", _internal(error, f"tool {name}")) from None
        except Exception as error:
            correlation = _log_internal(error, f"tool {name}")
            triple = {
                "code": "internal",
                "message": "internal error",
                "details": {"id": correlation},
            }
            return Outcome(None, Failure("execution_error", "internal error", triple))
        finally:
            # A long call ends active: the idle time starts when it returns.
            self.last_activity = time.monotonic()

    def invoke(self, name: str, arguments: dict[str, Any]) -> Outcome:
        """Call one tool as a step of this session (MCP's ``tools/call`` uses it)."""
        with self._lock:
            self._check_open()
            self.step_count += 1
            self.last_activity = time.monotonic()
            return self._invoke(name, arguments)

    def list_tools(self) -> list[dict[str, Any]]:
        """The tool list, as a step of this session (MCP's ``tools/list`` uses it)."""
        with self._lock:
            self._check_open()
            self.step_count += 1
            self.last_activity = time.monotonic()
            return self.service.tools()


@dataclass(frozen=True, slots=True)
class Failure:
    """How a call failed: OpenEnv's ``error_type`` and message, and the world's triple."""

    error_type: str
    message: str
    triple: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one tool call answered: its result, or how it failed."""

    result: Any
    failure: Failure | None = None


def _error_observation(name: str, failure: Failure) -> dict[str, Any]:
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


def _only_keys(data: Mapping[str, Any], allowed: set[str], action: str) -> None:
    stray = sorted(key for key in data if key not in allowed)
    if stray:
        raise FrameError(
            "VALIDATION_ERROR",
            f"{action} does not take {', '.join(repr(key) for key in stray)}; it takes "
            f"{', '.join(sorted(allowed))}",
        )


def _log_internal(error: BaseException, what: str) -> str:
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


def _internal(error: BaseException, what: str) -> str:
    return f"internal error ({_log_internal(error, what)})"
