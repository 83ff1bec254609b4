"""One session: what a WebSocket connection holds, and what each of its frames does.

A session owns at most one instance. Its methods take a frame's ``data`` and
answer the ``data`` of the reply, as plain JSON-ready dicts; they run on a
worker thread and never touch the network, so the server, the OpenEnv
``Environment`` adapter and the tests all drive the same code. A refused frame
raises ``FrameError`` (``seahaven_openenv.wire.frames``; importable from here too), which
the server sends as OpenEnv's error frame. What a frame's data must look like is
``reset_data``'s; what a call answers, ``outcomes``'s.

Everything a reset does is ``world.instance(...)``: the session only checks the
frame's keys, makes the instance, and keeps the episode id the caller chose. A
reset naming a scenario (``scenario="pack/id"``, or ``split`` and ``index`` of
the world's served pack) binds the session to it: the episode is a
``seahaven.scenarios.Trial``, the agent gets the ``submit`` tool, a call budget
and, on the step that ends the episode, the grade's score as the reward.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import seahaven
from seahaven import Snapshot
from seahaven.errors import SeahavenError, ToolError, WorldBug, client_message
from seahaven.stores.names import CONTROL_TOOL_NAME
from seahaven.scenarios import (
    MESSAGE_USER_TOOL,
    SUBMIT_TOOL,
    EpisodeOver,
    ScenarioSet,
    Trial,
    submit_listing,
)
from seahaven.instance.state import document_json, document_without_instance
from seahaven.declaration.state_formats import encode_json
from seahaven.stores.storage import runner_storage
from seahaven_openenv.sessions import descriptors
from seahaven_openenv.sessions.outcomes import (
    BoundView,
    Failure,
    Outcome,
    bound_progress,
    bound_report,
    error_observation,
    internal_message,
    log_internal,
    reset_refusal,
)
from seahaven_openenv.sessions.reset_data import (
    IGNORED_RESET_KEYS,
    MAX_MESSAGE_CHARACTERS,
    SNAPSHOT_RESET_KEYS,
    check_action,
    check_reset,
)
from seahaven_openenv.wire.echo import clip, listed
from seahaven_openenv.wire.frames import FrameError
from seahaven_openenv.wire.tasks import ServedPack

__all__ = ["FrameError", "Session", "WorldService"]

_log = logging.getLogger("seahaven.openenv")


class WorldService:
    """What every session of one served world shares: the world, its options, its tool list."""

    def __init__(
        self,
        world: seahaven.World,
        *,
        include_control_tools: bool = False,
        pack: ServedPack | None = None,
        packs: Mapping[str, ScenarioSet] | None = None,
    ) -> None:
        self.world = world
        self.include_control_tools = include_control_tools
        #: The pack of scenarios served beside the world (its Task API, split and index), if any.
        self.pack = pack
        #: Every pack the server was given, by name: a reset's ``scenario`` finds them first.
        self.packs: dict[str, ScenarioSet] = dict(packs or {})
        if pack is not None:
            self.packs.setdefault(pack.name, pack.pack)
        self._tools: tuple[object, list[dict[str, Any]], int, frozenset[str]] | None = None
        self._lock = threading.Lock()
        #: The descriptors a session of this world holds while it has an instance.
        self.descriptors_per_session = descriptors.per_session([world])

    @property
    def name(self) -> str:
        """The world's name."""
        return self.world.name

    def tools(self) -> list[dict[str, Any]]:
        """The flat tool list, as ``inst.tools()`` would give it; needs no instance."""
        return self._listing()[1]

    def bound_tools(self) -> list[dict[str, Any]]:
        """The tool list of a session bound to a scenario: the world's, then ``submit``."""
        return [*self._listing()[1], submit_listing()]

    def serves(self, name: Any) -> bool:
        """Whether ``name`` is a tool this world lists."""
        return isinstance(name, str) and name in self._listing()[3]

    def longest_name(self) -> int:
        """The length of the longest name a call can name: no tool's name is longer."""
        return self._listing()[2]

    def _listing(self) -> tuple[object, list[dict[str, Any]], int, frozenset[str]]:
        composition = self.world.composition()
        with self._lock:
            cached = self._tools
            if cached is None or cached[0] is not composition:
                listing = [entry.listing() for entry in composition.surface]
                names = [entry["name"] for entry in listing]
                if self.include_control_tools:
                    names.append(CONTROL_TOOL_NAME)
                longest = max(map(len, names), default=0)
                cached = self._tools = (composition, listing, longest, frozenset(names))
        return cached

    def session(self) -> Session:
        """A new session with no instance."""
        return Session(self)


class Session:
    """One connection's episode: at most one instance, the step count and the last activity.

    A session with no instance either never had an episode (``lost`` is
    ``None``: ``state`` answers the document of no instance) or had one the
    server ended without being asked (``lost`` says how, and every frame but a
    reset is refused with it), so a client never carries on in an empty
    episode thinking it is its own.
    """

    def __init__(self, service: WorldService) -> None:
        self.service = service
        self.instance: seahaven.Instance | None = None
        #: The scenario's trial when the episode is bound to one (its instance is ``instance``).
        self.trial: Trial | None = None
        #: The pack the bound scenario came from.
        self.pack: ScenarioSet | None = None
        self.episode_id: str | None = None
        self.step_count = 0
        self.last_activity = time.monotonic()
        self.closed = False
        #: Why the episode ended without the client asking (the reaper), or ``None``.
        self.lost: str | None = None
        # Frames of one connection arrive in order, but the reaper and a lost connection
        # may end the session from another thread while a frame runs.
        self._lock = threading.RLock()

    # --- frames -----------------------------------------------------------------------------

    def reset(
        self, data: Any, snapshots: Callable[[Any], tuple[Snapshot, int]] | None = None
    ) -> dict[str, Any]:
        """Make the session's instance from a reset frame's ``data``; answer the observation.

        ``snapshots`` finds the snapshot and step count a ``from_snapshot`` token
        names (raising ``FrameError`` when none is kept); without it, such a
        reset is refused.
        """
        with self._lock:
            self._check_open()
            arguments, episode_id, chosen = check_reset(
                data, self.service.world, self.service.pack, self.service.packs
            )
            token = data.get("from_snapshot")
            if token is not None:
                return self._reset_from(data, token, episode_id, snapshots)
            self.last_activity = time.monotonic()
            self._destroy_instance()
            self.step_count = 0
            self.episode_id = None
            self.lost = None
            trial: Trial | None = None
            try:
                if chosen is None:
                    # A session's instance is the server's own: memory unless the reset, the
                    # server's --storage or SEAHAVEN_STORAGE says otherwise.
                    instance = self.service.world.instance(
                        control_tools=self.service.include_control_tools,
                        **{**arguments, "storage": runner_storage(arguments.get("storage"))},
                    )
                else:
                    trial = Trial(
                        chosen[1],
                        seed=arguments.get("seed"),
                        world=self.service.world,
                        state_format=arguments.get("state_format"),
                        control_tools=self.service.include_control_tools,
                        storage=arguments.get("storage"),
                    )
                    instance = trial.instance
            except Exception as error:
                needed = self.service.descriptors_per_session
                raise reset_refusal(error, needed, logged=True) from None
            self.instance = instance
            self.trial = trial
            self.pack = None if chosen is None else chosen[0]
            self.last_activity = time.monotonic()
            self.episode_id = episode_id if episode_id is not None else instance.id
            metadata = self._metadata(instance)
            if trial is not None and chosen is not None:
                metadata.update(
                    scenario=f"{chosen[0].name}/{trial.scenario.id}",
                    scenario_hash=trial.scenario.hash,
                    pack_version=chosen[0].version,
                    instructions=trial.instructions,
                    budget=trial.budget,
                    calls_left=trial.calls_left,
                    # Whether a simulated user is there to message (message_user is listed).
                    user=trial.cast is not None and trial.cast.has_user,
                )
            return {
                "observation": {"metadata": metadata},
                "reward": None,
                "done": False,
                "metadata": metadata,
            }

    def snapshot(self) -> tuple[Snapshot, int]:
        """``Instance.snapshot()`` of this session's instance, and its ``step_count``."""
        with self._lock:
            self._check_open()
            self._check_not_lost()
            instance = self.instance
            if instance is None:
                raise FrameError(
                    "SESSION_ERROR",
                    "this session holds no episode to snapshot; send a reset first",
                )
            if self.trial is not None:
                raise FrameError(
                    "VALIDATION_ERROR",
                    "an episode bound to a scenario is not snapshotted: its budget and grading "
                    "are the scenario's, and a snapshot holds only the instance; snapshot an "
                    "episode reset without scenario, split or index",
                )
            self.last_activity = time.monotonic()
            try:
                return instance.snapshot(), self.step_count
            except SeahavenError as error:
                message = clip(client_message(error), MAX_MESSAGE_CHARACTERS)
                raise FrameError("EXECUTION_ERROR", f"snapshot failed: {message}") from None

    def adopt(self, instance: seahaven.Instance, step_count: int) -> None:
        """Make ``instance`` (restored from a snapshot) this fresh session's episode."""
        with self._lock:
            self._check_open()
            self._destroy_instance()
            self.instance = instance
            self.episode_id = instance.id
            self.step_count = step_count
            self.lost = None
            self.last_activity = time.monotonic()

    def step(self, data: Any) -> dict[str, Any]:
        """Run a step frame's action (``call_tool`` or ``list_tools``); answer the observation."""
        with self._lock:
            self._check_open()
            self._check_not_lost()
            kind = check_action(data)
            trial = self.trial
            if kind == "finish" and trial is None:
                raise FrameError(
                    "VALIDATION_ERROR",
                    "finish ends the episode of a scenario, and this session's episode is not "
                    "bound to one; a reset with scenario (pack/id), or split and index, binds it",
                )
            # A step the protocol accepted counts, whatever the world then answers; a
            # malformed one was never a step.
            self.step_count += 1
            self.last_activity = time.monotonic()
            if trial is not None:
                return self._bound_step(trial, kind, data)
            if kind == "list_tools":
                return {
                    "observation": {"tools": self.service.tools(), "metadata": {}},
                    "reward": None,
                    "done": False,
                }
            return self._call(data["tool_name"], data.get("arguments", {}))

    def state(self) -> dict[str, Any]:
        """The state document plus ``step_count``."""
        with self._lock:
            self._check_open()
            self._check_not_lost()
            instance = self.instance
            try:
                if instance is None:
                    document = document_without_instance(self.service.world)
                else:
                    document = instance.state()
                    document["episode_id"] = self.episode_id
                document["step_count"] = self.step_count
                if self.trial is not None:
                    document["scenario"] = bound_report(self.trial, self.pack)
            except Exception as error:
                raise FrameError("EXECUTION_ERROR", internal_message(error, "state")) from None
            return document

    def state_text(self) -> str:
        """``state()`` as compact JSON text, the change log joined from its records' texts.

        The same text as encoding ``state()`` for the wire (compact, non-ASCII
        kept, no NaN), without building the document's dicts on every frame. A
        value JSON cannot carry raises ``ValueError``, as the encoder would.
        """
        with self._lock:
            self._check_open()
            self._check_not_lost()
            instance = self.instance
            try:
                if instance is None:
                    document = document_without_instance(self.service.world)
                else:
                    fields: dict[str, Any] = {
                        "episode_id": self.episode_id,
                        "step_count": self.step_count,
                    }
                    if self.trial is not None:
                        fields["scenario"] = bound_report(self.trial, self.pack)
                    return document_json(instance, fields=fields)
            except ValueError:
                raise
            except Exception as error:
                raise FrameError("EXECUTION_ERROR", internal_message(error, "state")) from None
            document["step_count"] = self.step_count
            return encode_json(document)

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
            self.lost = (
                f"episode {clip(self.episode_id or '')!r} was reaped after {idle_for:g} s idle"
            )
            return True
        finally:
            self._lock.release()

    def invoke(self, name: str, arguments: dict[str, Any]) -> Outcome:
        """Call one tool as a step of this session (MCP's ``tools/call`` uses it)."""
        with self._lock:
            self._check_open()
            self._check_not_lost()
            self.step_count += 1
            self.last_activity = time.monotonic()
            trial = self.trial
            if trial is None:
                return self._invoke(name, arguments)
            was_done = trial.done
            outcome = self._invoke(name, arguments)
            return replace(outcome, progress=bound_progress(trial, was_done))

    def bound_view(self) -> BoundView | None:
        """The scenario this session is bound to, as MCP describes it; ``None`` when unbound."""
        with self._lock:
            trial, pack = self.trial, self.pack
            if trial is None:
                return None
            told = [pack.policy] if pack is not None and pack.policy else []
            told.append(trial.instructions)
            name = pack.name if pack is not None else None
            return BoundView(f"{name}/{trial.scenario.id}", "\n\n".join(told))

    def scenario_report(self) -> dict[str, Any]:
        """What the state document says of the bound scenario (its ``scenario`` field)."""
        with self._lock:
            self._check_open()
            self._check_not_lost()
            if self.trial is None:
                raise FrameError(
                    "VALIDATION_ERROR", "this session's episode is bound to no scenario"
                )
            return bound_report(self.trial, self.pack)

    def list_tools(self) -> list[dict[str, Any]]:
        """The tool list, as a step of this session (MCP's ``tools/list`` uses it)."""
        with self._lock:
            self._check_open()
            self._check_not_lost()
            self.step_count += 1
            self.last_activity = time.monotonic()
            if self.trial is not None:
                return self.trial.tools()
            return self.service.tools()

    # --- internals --------------------------------------------------------------------------

    def _metadata(self, instance: seahaven.Instance) -> dict[str, Any]:
        return {
            "fixture": instance.fixture,
            "now": instance.clock.iso(),
            "clock_mode": instance.clock.mode,
            "tools": len(self.service.tools() if self.trial is None else self.trial.tools()),
            "episode_id": self.episode_id,
        }

    def _reset_from(
        self,
        data: dict[str, Any],
        token: str,
        episode_id: str | None,
        snapshots: Callable[[Any], tuple[Snapshot, int]] | None,
    ) -> dict[str, Any]:
        """A reset whose instance is restored from the snapshot ``token`` names."""
        others = sorted(
            key
            for key, value in data.items()
            if key not in SNAPSHOT_RESET_KEYS
            and key not in IGNORED_RESET_KEYS
            and value is not None
        )
        if others:
            raise FrameError(
                "VALIDATION_ERROR",
                f"a reset from_snapshot takes no {listed(others)}: the snapshot says how its "
                "episode goes on (fixture, seed, clock and all); it takes episode_id beside "
                "from_snapshot, nothing else",
            )
        if snapshots is None:
            raise FrameError(
                "VALIDATION_ERROR", "this route keeps no snapshots; reset from_snapshot on /ws"
            )
        snapshot, step_count = snapshots(token)
        if snapshot.world is not self.service.world:
            raise FrameError(
                "VALIDATION_ERROR",
                f"snapshot {clip(token)!r} was taken of world {snapshot.world.name!r}, and this "
                f"session serves {self.service.name!r}",
            )
        self.last_activity = time.monotonic()
        self._destroy_instance()
        self.step_count = 0
        self.episode_id = None
        self.lost = None
        try:
            instance = snapshot.restore()
        except Exception as error:
            needed = self.service.descriptors_per_session
            raise reset_refusal(error, needed, logged=False) from None
        self.instance = instance
        self.step_count = step_count
        self.episode_id = episode_id if episode_id is not None else instance.id
        self.last_activity = time.monotonic()
        metadata = self._metadata(instance)
        metadata["from_snapshot"] = clip(token)
        metadata["step_count"] = step_count
        return {
            "observation": {"metadata": metadata},
            "reward": None,
            "done": False,
            "metadata": metadata,
        }

    def _check_open(self) -> None:
        if self.closed:
            raise FrameError("SESSION_ERROR", "the session has ended; open a new connection")

    def _check_not_lost(self) -> None:
        if self.lost is not None:
            raise FrameError(
                "SESSION_ERROR",
                f"this session's {self.lost}; its instance is gone. Send a reset to start a "
                "new episode",
                lost=self.lost,
            )

    def _destroy_instance(self) -> None:
        instance, self.instance = self.instance, None
        trial, self.trial = self.trial, None
        self.pack = None
        if trial is not None:
            trial.close()
        elif instance is not None:
            instance.destroy()

    def _call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        outcome = self._invoke(name, arguments)
        if outcome.failure is None:
            return {
                "observation": {
                    "tool_name": name,
                    "result": outcome.result,
                    "error": None,
                    "metadata": {},
                },
                "reward": None,
                "done": False,
            }
        # The name as sent: only one long enough to matter is cut (an over-long name is never
        # looked up), so an unknown tool's name comes back whole.
        return error_observation(clip(name), outcome.failure)

    def _bound_step(self, trial: Trial, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        """A step of an episode bound to a scenario: the reward and ``done`` are the trial's."""
        was_done = trial.done
        if kind == "finish":
            try:
                trial.finish()
            except WorldBug as error:
                raise FrameError("EXECUTION_ERROR", internal_message(error, "grading")) from None
            reply: dict[str, Any] = {"observation": {"metadata": {}}}
        elif kind == "list_tools":
            reply = {"observation": {"tools": trial.tools(), "metadata": {}}}
        else:
            reply = self._call(data["tool_name"], data.get("arguments", {}))
        progress = bound_progress(trial, was_done)
        metadata = {**reply["observation"]["metadata"], **progress["metadata"]}
        reply["observation"]["metadata"] = metadata
        reply["metadata"] = metadata
        reply["reward"] = progress["reward"]
        reply["done"] = progress["done"]
        return reply

    def _invoke(self, name: str, arguments: dict[str, Any]) -> Outcome:
        instance = self.instance
        trial = self.trial
        if instance is None:
            raise FrameError(
                "EXECUTION_ERROR",
                "this session has no episode; send a reset before calling a tool. An episode "
                "lives as long as its connection: a client that reconnected (after the server "
                "restarted or the connection was lost) has lost the episode it had",
            )
        longest = self.service.longest_name()
        if trial is not None:
            longest = max(longest, len(SUBMIT_TOOL), len(MESSAGE_USER_TOOL))
        try:
            if len(name) > longest:
                self.last_activity = time.monotonic()
                if trial is not None:
                    # Counted against the budget like any call to a tool that does not
                    # exist, under a name just long enough to be none.
                    try:
                        trial.call(name[: longest + 1])
                    except EpisodeOver:
                        raise
                    except ToolError:
                        pass
                message = (
                    f"unknown tool: no tool's name is longer than {longest} characters, and this "
                    f"one has {len(name)}"
                )
                triple = {
                    "code": "unknown_tool",
                    "message": message,
                    "details": {"name": clip(name), "length": len(name), "max_length": longest},
                }
                return Outcome(None, Failure("tool_not_found", message, triple))
            if trial is not None:
                return Outcome(trial.call(name, **arguments))
            return Outcome(instance.call(name, **arguments))
        except ToolError as error:
            return Outcome(None, Failure(error.error_type, error.message, error.to_dict()))
        except WorldBug as error:
            # A broken world must fail loudly: never an observation an eval could score.
            raise FrameError("EXECUTION_ERROR", internal_message(error, f"tool {name}")) from None
        except Exception as error:
            correlation = log_internal(error, f"tool {name}")
            triple = {
                "code": "internal",
                "message": "internal error",
                "details": {"id": correlation},
            }
            return Outcome(None, Failure("execution_error", "internal error", triple))
        finally:
            # A long call ends active: the idle time starts when it returns.
            self.last_activity = time.monotonic()
