"""One session: what a WebSocket connection holds, and what each of its frames does.

A session owns at most one instance. Its methods take a frame's ``data`` and
answer the ``data`` of the reply, as plain JSON-ready dicts; they run on a
worker thread and never touch the network, so the server, the OpenEnv
``Environment`` adapter and the tests all drive the same code. A refused frame
raises ``FrameError`` (``seahaven_openenv.frames``; importable from here too), which the server
sends as OpenEnv's error frame.

Everything a reset does is ``world.instance(...)``: the session only checks the
frame's keys, makes the instance, and keeps the episode id the caller chose. A
reset naming a scenario (``scenario="pack/id"``, or ``split`` and ``index`` of
the world's served pack) binds the session to it: the episode is a
``seahaven.scenarios.Trial``, the agent gets the ``submit`` tool, a call budget
and, on the step that ends the episode, the grade's score as the reward.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

import seahaven
from seahaven import Snapshot
from seahaven.declaration.instance_options import (
    InstanceOptions,
    expected_type,
    instance_option_names,
)
from seahaven.declaration.state_formats import encode_json
from seahaven.errors import SeahavenError, ToolError, WorldBug, client_message
from seahaven.instance.state import document_json, document_without_instance
from seahaven.scenarios import (
    MESSAGE_USER_TOOL,
    SUBMIT_TOOL,
    EpisodeOver,
    Scenario,
    ScenarioSet,
    Trial,
    submit_listing,
)
from seahaven.stores.names import CONTROL_TOOL_NAME
from seahaven.stores.storage import runner_storage
from seahaven_openenv import descriptors
from seahaven_openenv.echo import bounded, clip, json_type, listed, shown
from seahaven_openenv.frames import FrameError
from seahaven_openenv.tasks import ServedPack, TaskError, find_for_reset

__all__ = [
    "IGNORED_RESET_KEYS",
    "RESET_KEYS",
    "RESET_TYPES",
    "SCENARIO_KEYS",
    "SNAPSHOT_RESET_KEYS",
    "BoundView",
    "Failure",
    "FrameError",
    "Outcome",
    "Session",
    "WorldService",
    "internal_error_id",
    "reset_schema",
]

_log = logging.getLogger("seahaven.openenv")

# The keys only a session takes, beside the instance options (seahaven.InstanceOptions),
# each listed after the option named here, so messages keep the order they always had.
_SESSION_KEYS_AFTER: dict[str, tuple[str, ...]] = {
    "clock_mode": ("episode_id",),
    "setup_sql": ("scenario", "split", "index"),
    "storage": ("from_snapshot",),
}


def _reset_keys() -> tuple[str, ...]:
    keys: list[str] = []
    for name in instance_option_names():
        keys.append(name)
        keys.extend(_SESSION_KEYS_AFTER.get(name, ()))
    return tuple(keys)


# Every key that changes what a reset does, in the order error messages list them: the
# instance options, and the session's own keys among them.
RESET_KEYS: tuple[str, ...] = _reset_keys()
# The keys a reset from a snapshot takes besides ``from_snapshot``: the rest say how an
# episode starts, and a snapshot says that itself.
SNAPSHOT_RESET_KEYS: frozenset[str] = frozenset({"from_snapshot", "episode_id"})
# The keys that bind a session to a scenario: ``scenario``, or ``split`` and ``index``.
SCENARIO_KEYS: tuple[str, ...] = ("scenario", "split", "index")
# The keys that say where an episode starts, which a scenario sets itself.
_START_KEYS: tuple[str, ...] = ("fixture", "now", "clock_mode", "startup", "setup_sql")
# Accepted and ignored: the control tool is the operator's to enable, never the client's.
IGNORED_RESET_KEYS: frozenset[str] = frozenset({"control_tools"})

MAX_EPISODE_ID_LENGTH = 255

# The wire's encoding of a state document, as ``frames.encode`` writes it.


def internal_error_id() -> str:
    """A fresh correlation id for an internal error, printed in the log and sent to the client."""
    return f"err-{secrets.token_hex(6)}"


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
            arguments, episode_id, chosen = self._reset_arguments(data)
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
                if descriptors.exhausted(error, needed=self.service.descriptors_per_session):
                    _log.warning("a reset found no file descriptor left: %s", error)
                    raise FrameError(
                        "CAPACITY_REACHED",
                        "the server has no file descriptors left for another instance; try "
                        "again when a session ends",
                    ) from None
                if isinstance(error, SeahavenError):
                    # The caller's own arguments (an unknown fixture, a bad seed, setup_sql
                    # the sandbox refused) or a startup hook that refused them: the message
                    # names the fix, in the words a client may read; the operator's log has
                    # the whole of it.
                    _log.info("reset failed: %s", error)
                    message = clip(client_message(error), MAX_MESSAGE_CHARACTERS)
                    raise FrameError("EXECUTION_ERROR", f"reset failed: {message}") from None
                raise FrameError("EXECUTION_ERROR", _internal(error, "reset")) from None
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
            kind = _check_action(data)
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
                    document["scenario"] = self._report(self.trial)
            except Exception as error:
                raise FrameError("EXECUTION_ERROR", _internal(error, "state")) from None
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
                        fields["scenario"] = self._report(self.trial)
                    return document_json(instance, fields=fields)
            except ValueError:
                raise
            except Exception as error:
                raise FrameError("EXECUTION_ERROR", _internal(error, "state")) from None
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
            return replace(outcome, progress=self._progress(trial, was_done))

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
            return self._report(self.trial)

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
            if descriptors.exhausted(error, needed=self.service.descriptors_per_session):
                raise FrameError(
                    "CAPACITY_REACHED",
                    "the server has no file descriptors left for another instance; try again "
                    "when a session ends",
                ) from None
            if isinstance(error, SeahavenError):
                message = clip(client_message(error), MAX_MESSAGE_CHARACTERS)
                raise FrameError("EXECUTION_ERROR", f"reset failed: {message}") from None
            raise FrameError("EXECUTION_ERROR", _internal(error, "reset")) from None
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

    def _reset_arguments(
        self, data: Any
    ) -> tuple[dict[str, Any], str | None, tuple[ScenarioSet, Scenario] | None]:
        if not isinstance(data, dict):
            raise FrameError(
                "VALIDATION_ERROR",
                f"a reset's data must be an object, not {json_type(data)}",
                errors=_errors(_RESET, data),
            )
        stray = sorted(
            key for key in data if key not in RESET_KEYS and key not in IGNORED_RESET_KEYS
        )
        if stray:
            startup_keys = [key for key in stray if key in self._startup_keywords()]
            if startup_keys:
                what = "a startup keyword" if len(startup_keys) == 1 else "startup keywords"
                raise FrameError(
                    "VALIDATION_ERROR",
                    f"{listed(startup_keys)}: {what} of world {self.service.name!r} goes inside "
                    f'startup, as {{"startup": {{"{clip(startup_keys[0])}": ...}}}}',
                    errors=_errors(_RESET, data),
                )
            raise FrameError(
                "VALIDATION_ERROR",
                f"reset does not take {listed(stray)}; it takes {', '.join(RESET_KEYS)}",
                errors=_errors(_RESET, data),
            )
        errors = _errors(_RESET, data)
        wrong = [
            f"{key} must be {expected} or null, not {json_type(data[key])}"
            for key, expected in RESET_TYPES.items()
            if any(error["loc"][:1] == [key] for error in errors)
        ]
        if wrong:
            raise FrameError("VALIDATION_ERROR", f"reset's {'; '.join(wrong)}", errors=errors)
        arguments = {
            key: data[key]
            for key in RESET_KEYS
            if key in data
            and key not in ("episode_id", "from_snapshot")
            and key not in SCENARIO_KEYS
        }
        return arguments, data.get("episode_id"), self._chosen_scenario(data)

    def _chosen_scenario(self, data: dict[str, Any]) -> tuple[ScenarioSet, Scenario] | None:
        """The pack and scenario a reset binds the session to, or ``None`` for a free episode."""
        reference: str | None = data.get("scenario")
        split: str | None = data.get("split")
        index: int | None = data.get("index")
        if reference is None and split is None and index is None:
            return None
        if reference is not None and (split is not None or index is not None):
            raise FrameError(
                "VALIDATION_ERROR",
                "a reset names its scenario once: scenario (pack/id), or split and index",
            )
        given = [key for key in _START_KEYS if data.get(key) is not None]
        if given:
            raise FrameError(
                "VALIDATION_ERROR",
                f"a scenario sets where its episode starts, so a reset naming one does not take "
                f"{', '.join(given)}; it takes seed, episode_id and state_format beside it",
            )
        served = self.service.pack
        try:
            if reference is not None:
                return find_for_reset(reference, self.service.world, self.service.packs)
            if split is None or index is None:
                missing = "index" if index is None else "split"
                raise FrameError(
                    "VALIDATION_ERROR",
                    f"split and index go together (the index-th task of a split); {missing} "
                    "is missing",
                )
            if served is None:
                raise TaskError(
                    f"world {self.service.name!r} is served without a pack of scenarios, so "
                    "split and index name nothing; name the scenario (scenario: pack/id), or "
                    "serve a pack with seahaven serve --scenarios PACK"
                )
            return served.pack, served.scenario_at(split, index)
        except TaskError as error:
            raise FrameError(
                "VALIDATION_ERROR", clip(error.message, MAX_MESSAGE_CHARACTERS)
            ) from None

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
        return _error_observation(clip(name), outcome.failure)

    def _bound_step(self, trial: Trial, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        """A step of an episode bound to a scenario: the reward and ``done`` are the trial's."""
        was_done = trial.done
        if kind == "finish":
            try:
                trial.finish()
            except WorldBug as error:
                raise FrameError("EXECUTION_ERROR", _internal(error, "grading")) from None
            reply: dict[str, Any] = {"observation": {"metadata": {}}}
        elif kind == "list_tools":
            reply = {"observation": {"tools": trial.tools(), "metadata": {}}}
        else:
            reply = self._call(data["tool_name"], data.get("arguments", {}))
        progress = self._progress(trial, was_done)
        metadata = {**reply["observation"]["metadata"], **progress["metadata"]}
        reply["observation"]["metadata"] = metadata
        reply["metadata"] = metadata
        reply["reward"] = progress["reward"]
        reply["done"] = progress["done"]
        return reply

    def _progress(self, trial: Trial, was_done: bool) -> dict[str, Any]:
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

    def _report(self, trial: Trial) -> dict[str, Any]:
        """What the state document says of the bound scenario: the trial's report, and more."""
        pack = self.pack
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


# --- what a reset and a step must look like -------------------------------------------------

# The JSON type of each key only a session takes, as a refusal names it.
_SESSION_TYPES: dict[str, str] = {
    "episode_id": f"a non-empty string of at most {MAX_EPISODE_ID_LENGTH} characters",
    "scenario": "a string (a scenario, as pack/id)",
    "split": "a string (a split of the served pack)",
    "index": "a whole number (a task's place in its split, 0 first)",
    "from_snapshot": "a string (a token a snapshot frame answered)",
}
# Each reset key's JSON type, as a refusal names it; every key may also be null (the default).
# An instance option's is the one seahaven.InstanceOptions gives, so every door says the same.
RESET_TYPES: dict[str, str] = {
    key: _SESSION_TYPES[key] if key in _SESSION_TYPES else expected_type(key) for key in RESET_KEYS
}
# The most pydantic-style entries an error frame's ``errors`` lists.
MAX_ERRORS = 20
# The most characters of an engine's or the framework's message a refusal carries.
MAX_MESSAGE_CHARACTERS = 1000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _SessionData(_Strict):
    """The keys of a reset's data only a session takes: the rest are ``InstanceOptions``."""

    episode_id: Annotated[str, Field(min_length=1, max_length=MAX_EPISODE_ID_LENGTH)] | None = (
        Field(
            default=None,
            title="Episode id",
            description="The episode's id; null takes the instance's id",
        )
    )
    scenario: str | None = Field(
        default=None,
        title="Scenario",
        description="The scenario the session is bound to, as pack/id",
    )
    split: str | None = Field(
        default=None,
        title="Split",
        description="A split of the pack served beside the world, with index",
    )
    index: int | None = Field(
        default=None,
        title="Index",
        description="The place of a task in its split, 0 first, with split",
    )
    from_snapshot: str | None = Field(
        default=None,
        title="From snapshot",
        description="A token a snapshot frame answered: the episode goes on from that snapshot",
    )
    control_tools: Any = None


# A reset's data as pydantic checks it: the instance options' fields and the session's own,
# in the order of RESET_KEYS (the order its errors come in).
_RESET_FIELDS = {**InstanceOptions.model_fields, **_SessionData.model_fields}
_ResetData = create_model(  # type: ignore[call-overload]
    "_ResetData",
    __base__=_Strict,
    **{
        key: (_RESET_FIELDS[key].annotation, _RESET_FIELDS[key])
        for key in (*RESET_KEYS, "control_tools")
    },
)


class _CallToolData(_Strict):
    type: Literal["call_tool"]
    tool_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)


class _ListToolsData(_Strict):
    type: Literal["list_tools"]
    metadata: dict[str, Any] = Field(default_factory=dict)


class _FinishData(_Strict):
    type: Literal["finish"]
    metadata: dict[str, Any] = Field(default_factory=dict)


# What a reset's data and a step's action may be, as pydantic checks them: a reset's is checked
# with it, and a step's (checked by hand, which is quicker) only to describe one refused.
_RESET: TypeAdapter[Any] = TypeAdapter(_ResetData)


def reset_schema() -> dict[str, Any]:
    """The JSON Schema of a reset's data: the instance options and the session's own keys.

    ``control_tools``, accepted and ignored, is left out: it is not the client's to set.
    """
    schema: dict[str, Any] = _ResetData.model_json_schema()
    schema["properties"].pop("control_tools", None)
    schema["title"] = "ResetData"
    schema["description"] = (
        "A reset's data: every key may be left out or null. The instance options are "
        "seahaven.InstanceOptions's; episode_id, scenario, split, index and from_snapshot "
        "are the session's own."
    )
    return schema


_ACTION: TypeAdapter[Any] = TypeAdapter(
    Annotated[_CallToolData | _ListToolsData | _FinishData, Field(discriminator="type")]
)
_ACTION_KEYS = {
    "call_tool": frozenset({"type", "tool_name", "arguments", "metadata"}),
    "list_tools": frozenset({"type", "metadata"}),
    "finish": frozenset({"type", "metadata"}),
}


class _ActionType(BaseModel):
    """An action's ``type`` alone, so pydantic itself describes one it does not know."""

    model_config = ConfigDict(extra="ignore", strict=True)

    type: Literal["call_tool", "list_tools", "finish"]


_ACTION_TYPE: TypeAdapter[Any] = TypeAdapter(_ActionType)


def _check_action(data: Any) -> str:
    """The action type of a step's ``data``, or ``FrameError`` with pydantic's ``errors``."""
    if not isinstance(data, dict):
        _refuse_action(data, f"a step's data must be an action object, not {json_type(data)}")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in _ACTION_KEYS:
        # pydantic's own entries (a literal_error, or missing), as OpenEnv's server sends them
        # for an action type its model does not take: ctx, input, loc, msg and type.
        raise FrameError(
            "VALIDATION_ERROR",
            f"unknown action type {shown(kind)}; a step is call_tool, list_tools or finish",
            # Only the type is judged: an action of many keys keeps its type in view.
            errors=_errors(_ACTION_TYPE, {"type": kind} if "type" in data else data, whole=True),
        )
    allowed = _ACTION_KEYS[kind]
    stray = sorted(key for key in data if key not in allowed)
    if stray:
        _refuse_action(
            data, f"{kind} does not take {listed(stray)}; it takes {', '.join(sorted(allowed))}"
        )
    if not isinstance(data.get("metadata", {}), dict):
        _refuse_action(data, f"{kind}'s metadata must be an object")
    if kind == "call_tool":
        if not isinstance(data.get("tool_name"), str):
            _refuse_action(data, "call_tool needs tool_name, a string")
        if not isinstance(data.get("arguments", {}), dict):
            _refuse_action(data, "call_tool's arguments must be an object of name: value")
    return kind


def _refuse_action(data: Any, message: str) -> NoReturn:
    raise FrameError("VALIDATION_ERROR", message, errors=_errors(_ACTION, data))


def _errors(adapter: TypeAdapter[Any], data: Any, *, whole: bool = False) -> list[dict[str, Any]]:
    """Pydantic's errors for ``data``, each ``{type, loc, msg}`` and a scalar ``input``, bounded.

    A value the client sent is repeated only when it is a scalar, and shortened;
    an object or an array is left out, so the list never grows with the frame.
    ``whole`` keeps every key of pydantic's entry instead (``ctx`` and ``input``
    always), each value the client sent shortened by ``bounded``.
    """
    if isinstance(data, dict) and len(data) > MAX_ERRORS:
        data = dict(itertools.islice(data.items(), MAX_ERRORS))
    try:
        adapter.validate_python(data)
    except ValidationError as error:
        found = error.errors(include_url=False, include_context=whole)
    else:
        return []
    listed_errors = []
    for item in found[:MAX_ERRORS]:
        entry: dict[str, Any] = {
            "type": item["type"],
            "loc": [clip(part) if isinstance(part, str) else part for part in item["loc"]],
            "msg": clip(item["msg"], MAX_MESSAGE_CHARACTERS),
        }
        value = item.get("input")
        if whole:
            entry["input"] = bounded(value)
            if "ctx" in item:
                entry["ctx"] = {str(key): bounded(text) for key, text in item["ctx"].items()}
        elif value is None or isinstance(value, int | float):
            entry["input"] = value
        elif isinstance(value, str):
            entry["input"] = clip(value)
        listed_errors.append(entry)
    return listed_errors


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
