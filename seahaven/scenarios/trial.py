"""A trial: one episode bound to a scenario, with a budget, a ``submit`` tool and a grade.

A ``Trial`` makes the scenario's instance from its start, lets the agent call
the world's tools and one more, ``submit(answer)``, counts calls against the
scenario's budget, and grades the episode when it ends: on ``submit``, when the
budget is spent, or when the caller calls ``finish()``. Every door that binds a
session to a scenario drives this one class: ``seahaven eval`` in process and
on Ray, the served session over ``/ws``, the TRL adapter.

The world stays reward-free: the trial adds ``submit`` beside the world's tools
and reads the instance only through its public API.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from seahaven.declaration.world import World
from seahaven.errors import ToolError, WorldBug
from seahaven.grading import Grader
from seahaven.grading.episode import Episode
from seahaven.grading.fold import Changes, fold
from seahaven.grading.grade import Grade
from seahaven.grading.net_change import MatchesSolution
from seahaven.instance.instance import Instance, Snapshot
from seahaven.instance.snapshots import restore_into
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario
from seahaven.scenarios.people import Cast
from seahaven.scenarios.play import MAX_ANSWER_LENGTH, EpisodeOver, Play, submit_listing
from seahaven.scenarios.users import UserPlayer
from seahaven.stores.db import Db
from seahaven.stores.storage import runner_storage

__all__ = [
    "MAX_ANSWER_LENGTH",
    "REPLAY_INSTANCES",
    "EpisodeOver",
    "Replay",
    "Trial",
    "clear_replay_instances",
    "replay_solution",
    "submit_listing",
]

# How many replayed solutions a process keeps, each keyed by scenario hash and seed.
SOLUTION_CACHE_SIZE = 512
# The most bytes of start images (see Trial) the trials of a process hold at once; a trial
# past it replays its solution on an instance made afresh, as a trial with no image does.
START_IMAGE_BUDGET = 256 * 1024 * 1024
# How many finished replay instances a process keeps idle, to restore the next replay into.
REPLAY_INSTANCES = 4


class Trial:
    """One episode of a scenario: its instance, the calls left, the answer, and the grade.

    ``storage`` (``"memory"`` or ``"disk"``) is where every instance the trial
    makes keeps its stores; by default ``SEAHAVEN_STORAGE``, else memory, as for
    every runner (``seahaven.storage.runner_storage``). The agent's calls take
    the path every episode takes (``seahaven.scenarios.play.Play``): a scenario
    with a user or events gets a ``Cast`` there (``seahaven.scenarios.people``);
    ``user_player`` plays its user instead of the scenario's own script or
    function (a model-played user, say).
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        seed: int | None = None,
        world: World | None = None,
        state_format: str | None = None,
        control_tools: bool = False,
        storage: str | None = None,
        user_player: UserPlayer | None = None,
    ) -> None:
        self.scenario = scenario
        self.world = world if world is not None else scenario.resolve_world()
        self.seed = seed if seed is not None else scenario.start.seed
        names = {entry.name for entry in self.world.composition().surface}
        if SUBMIT_TOOL in names:
            raise WorldBug(
                f"world {self.world.name!r} has a tool named {SUBMIT_TOOL!r}, which a scenario "
                "adds to end the episode; rename the world's tool to bind it to scenarios"
            )
        self._options = scenario.start.instance_options(seed=self.seed)
        # Where the stores live is the harness's to choose, not the scenario's; a trial hands
        # its instances to nobody, so it keeps them where a runner's go (memory, unless told).
        self._options["storage"] = runner_storage(storage)
        try:
            self.instance: Instance = self.world.instance(
                state_format=state_format, control_tools=control_tools, **self._options
            )
        except WorldBug as error:
            raise WorldBug(f"scenario {scenario.id!r} cannot start: {error}") from None
        try:
            #: The agent's side of the episode: its calls, the people, how it ended.
            self.play = Play(scenario, self.instance, seed=self.seed, player=user_player)
        except BaseException:
            self.instance.destroy()
            raise
        #: How long grading the episode took (the solution's replay included), once it has.
        self.grade_seconds = 0.0
        self._grade: Grade | None = None
        self._start: Instance | None = None
        self._lock = threading.RLock()
        # The instance as the episode found it, kept when the grader will replay the solution
        # from the same start: restoring it skips the fixture's verification and the world's
        # startup hooks that making the instance afresh runs again.
        # It is let go once the episode is graded, or when the trial closes or is collected.
        self._start_image: Snapshot | None = None
        self._release_image: Callable[[], Any] | None = None
        if replays_solution(scenario.grader) and not _replay_known(scenario, self.world, self.seed):
            self._start_image = _held_image(self.instance)
            if self._start_image is not None:
                self._release_image = weakref.finalize(
                    self, _release_bytes, self._start_image.nbytes
                )

    # --- what the agent sees -----------------------------------------------------------------

    @property
    def instructions(self) -> str:
        """What the agent is asked to do."""
        return self.scenario.instructions

    @property
    def budget(self) -> int:
        """How many tool calls the agent may make."""
        return self.scenario.budget

    @property
    def cast(self) -> Cast | None:
        """The scenario's user and events on this episode, when it has any."""
        return self.play.cast

    @property
    def calls_made(self) -> int:
        """How many tool calls the agent has made (an accepted ``submit`` not counted)."""
        return self.play.calls_made

    @property
    def answer(self) -> str | None:
        """The submitted answer, once there is one."""
        return self.play.answer

    @property
    def ended_by(self) -> str | None:
        """How the episode ended (``submit``, ``budget``, ``user``, ``finish``); ``None`` before."""
        return self.play.ended_by

    @property
    def calls_left(self) -> int:
        """How many more tool calls the agent may make."""
        return self.play.calls_left

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self.play.done

    @property
    def submitted(self) -> bool:
        """Whether the agent ended the episode with ``submit``."""
        return self.play.submitted

    def tools(self) -> list[dict[str, Any]]:
        """The world's tool list and ``submit`` after it.

        With a user, the user's own tools are left out and ``message_user`` comes
        before ``submit``.
        """
        return self.play.tools()

    @property
    def conversation(self) -> list[dict[str, Any]]:
        """The conversation with the scenario's user so far, each message with its speaker."""
        return self.play.conversation

    def call(self, tool: str, /, **arguments: Any) -> Any:
        """Call a tool as the agent: the world's, or ``submit``.

        Every call counts against the budget but a ``submit`` that is accepted;
        the call that spends the budget ends the episode after it returns or
        raises, and the episode is graded then. After the end, every call
        raises ``EpisodeOver``.
        """
        with self._lock:
            ended = self.play.done
            try:
                return self.play.call(tool, **arguments)
            finally:
                if self.play.done and not ended:
                    self._end()  # this call ended the episode: it is graded now

    def submit(self, answer: str) -> Grade:
        """End the episode with the agent's answer, and grade it."""
        with self._lock:
            self.play.submit(answer)
            return self._end()

    def finish(self) -> Grade:
        """End the episode where it stands (if it has not ended) and return its grade."""
        with self._lock:
            if self._grade is not None:
                return self._grade
            self.play.finish()
            return self._end()

    # --- the outcome -------------------------------------------------------------------------

    @property
    def grade(self) -> Grade | None:
        """The grade, once the episode has ended."""
        return self._grade

    @property
    def reward(self) -> float | None:
        """The grade's score once the episode has ended; ``None`` before."""
        return None if self._grade is None else self._grade.score

    def episode(self) -> Episode:
        """The episode as graders read it, as the instance holds it now."""
        return self.play.episode(start=self._start_view, solution=self._solution_changes)

    def report(self) -> dict[str, Any]:
        """What the trial adds to a state document: the scenario, the budget, the outcome."""
        return {
            "id": self.scenario.id,
            "hash": self.scenario.hash,
            "seed": self.seed,
            "budget": self.scenario.budget,
            "calls_made": self.calls_made,
            "done": self.done,
            "ended_by": self.ended_by,
            "answer": self.answer,
            "grade": None if self._grade is None else self._grade.to_dict(),
            **self.play.report(),
        }

    def state_sha256(self) -> str:
        """A hash of what the agent did: every change-log record and every call, in order.

        It leaves out the instance id and the envelope, so the same calls from
        the same start give the same hash in process, on Ray and over the wire.
        """
        data = {
            "log": [record.to_dict() for record in self.instance.change_log()],
            "calls": [record.to_dict() for record in self.instance.call_log()],
        }
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    # --- ending ------------------------------------------------------------------------------

    def close(self) -> None:
        """Destroy the trial's instances and let go of its start image. Idempotent."""
        with self._lock:
            for instance in (self._start, self.instance):
                if instance is not None:
                    instance.destroy()
            self._start = None
            self._drop_start_image()

    def __enter__(self) -> Trial:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _drop_start_image(self) -> None:
        self._start_image = None
        if self._release_image is not None:
            self._release_image()  # a finalizer runs once, whoever calls it first

    def _end(self) -> Grade:
        """Grade the episode, which has ended."""
        grader = self.scenario.grader
        started = time.perf_counter()
        try:
            grade = grader.grade(self.episode())
        except WorldBug as error:
            raise WorldBug(f"scenario {self.scenario.id!r}: grading failed: {error}") from None
        except Exception as error:
            raise WorldBug(
                f"scenario {self.scenario.id!r}: grading raised {type(error).__name__}: {error}"
            ) from error
        finally:
            self.grade_seconds = time.perf_counter() - started
            # Graded (or failed to be): nothing replays from the start any more.
            self._drop_start_image()
        self._grade = grade
        return grade

    def _start_view(self) -> Db:
        if self._start is None:
            self._start = (
                self._start_image.restore(self.world, storage="memory")
                if self._start_image is not None
                else self.world.instance(**self._options)
            )
        return self._start.inspect()

    def _solution_changes(self) -> Changes:
        return replay_solution(
            self.scenario, self.world, self.seed, start=self._start_image
        ).changes


def replays_solution(grader: Grader) -> bool:
    """Whether ``grader`` compares with the reference solution: a ``matches_solution`` in it.

    A Python grader may read ``episode.solution`` too; its trial replays the
    solution on an instance made afresh, which gives the same changes.
    """
    return any(isinstance(part, MatchesSolution) for part in grader.walk())


_held_bytes = 0
_held_lock = threading.Lock()


def _held_image(instance: Instance) -> Snapshot | None:
    """A snapshot of a trial's fresh instance, or ``None`` past ``START_IMAGE_BUDGET``.

    Also ``None`` when the instance cannot be snapshotted (its ``ctx.state`` holds
    a value that cannot be copied): the replay then makes its instance afresh.
    """
    global _held_bytes
    with _held_lock:
        if _held_bytes >= START_IMAGE_BUDGET:
            return None  # full already: no snapshot taken only to be dropped
    try:
        image = instance.snapshot()
    except WorldBug:
        return None
    with _held_lock:
        if _held_bytes + image.nbytes > START_IMAGE_BUDGET:
            return None
        _held_bytes += image.nbytes
    return image


def _release_bytes(nbytes: int) -> None:
    global _held_bytes
    with _held_lock:
        _held_bytes -= nbytes


class Replay:
    """What a scenario's reference solution did from a start: its net changes and answer."""

    __slots__ = ("answer", "changes", "errors")

    def __init__(self, changes: Changes, answer: str | None, errors: list[str]) -> None:
        self.changes = changes
        self.answer = answer
        self.errors = errors


_replays: OrderedDict[tuple[str, int | None, int], Replay] = OrderedDict()
_replays_lock = threading.Lock()


def _replay_known(scenario: Scenario, world: World, seed: int | None) -> bool:
    with _replays_lock:
        return (scenario.hash, seed, id(world)) in _replays


def replay_solution(
    scenario: Scenario, world: World, seed: int | None, *, start: Snapshot | None = None
) -> Replay:
    """Play the scenario's solution on a fresh instance from its start, once per seed.

    The result is kept per process (by scenario hash, seed and world), so a
    thousand trials of one scenario replay it once each seed. ``start``, a
    snapshot of an instance just made from the scenario's start with that seed
    (before any call), is restored instead of making the instance again.
    """
    if scenario.solution is None:
        raise WorldBug(
            f"scenario {scenario.id!r} has no reference solution; give it one (a list of tool "
            "calls) or drop the matches_solution check"
        )
    key = (scenario.hash, seed, id(world))
    with _replays_lock:
        found = _replays.get(key)
        if found is not None:
            _replays.move_to_end(key)
            return found
    replay = _play(scenario, world, seed, start)
    with _replays_lock:
        _replays[key] = replay
        while len(_replays) > SOLUTION_CACHE_SIZE:
            _replays.popitem(last=False)
    return replay


def _play(scenario: Scenario, world: World, seed: int | None, start: Snapshot | None) -> Replay:
    errors: list[str] = []
    instance = (
        _replay_instance(world, start)
        if start is not None
        else world.instance(
            **scenario.start.instance_options(seed=seed), storage=runner_storage(None)
        )
    )
    try:
        # The solution is played as an agent's calls in a trial are, the user and the events
        # acting beside it (their calls recorded one by one). When every change is the
        # agent's (no events, and a user who only talks), only the net state is compared, so
        # the calls are recorded as one net change per row: no change capture per
        # call, and a fold of one record per row.
        play = Play(scenario, instance, seed=seed)
        agent_only = play.cast is None or (not play.cast.user_tools and not scenario.events)
        with instance.record_net() if agent_only else contextlib.nullcontext():
            for step in scenario.solution or ():
                if play.done:
                    break  # the user ended the conversation, or the budget is spent
                if step.tool == SUBMIT_TOOL:
                    # A solution's answer written as a YAML number is submitted as its text.
                    _play_step(
                        scenario,
                        play,
                        SUBMIT_TOOL,
                        {"answer": str(step.arguments.get("answer"))},
                        errors,
                    )
                    break
                _play_step(scenario, play, step.tool, step.arguments, errors)
        changes = fold(instance.change_log())
    except BaseException:
        instance.destroy()
        raise
    if start is not None:
        _shelve(instance)  # for the next replay from a start image
    else:
        instance.destroy()
    return Replay(changes, play.answer, errors)


def _play_step(
    scenario: Scenario, play: Play, tool: str, arguments: dict[str, Any], errors: list[str]
) -> None:
    """One call of a solution's replay; a refusal is noted, a bug in the world raised."""
    try:
        play.call(tool, **arguments)
    except ToolError as error:
        errors.append(f"{tool}: {error.code}: {error.message}")
    except WorldBug as error:
        raise WorldBug(
            f"scenario {scenario.id!r}: its solution's call to {tool} hit a bug in the world: "
            f"{error}"
        ) from None


# Idle replay instances, by world, clock mode and control tool, oldest first. A replay from a
# start image loads the image into one of them (``restore_into``) rather than opening a new
# instance's connections, and puts it back afterwards. Each keeps its world alive, so the
# world's ``id`` in the key cannot be reused while it is here.
_shelf: OrderedDict[tuple[int, str, bool], list[Instance]] = OrderedDict()
_shelf_lock = threading.Lock()


def _shelf_key(world: object, clock_mode: str, control_tools: bool) -> tuple[int, str, bool]:
    return (id(world), clock_mode, control_tools)


def _replay_instance(world: World, start: Snapshot) -> Instance:
    """An instance at ``start``: an idle replay instance restored into, or a new restore."""
    key = _shelf_key(world, start.clock[0], start.control_tools)
    instance: Instance | None = None
    with _shelf_lock:
        idle = _shelf.get(key)
        if idle:
            instance = idle.pop()
            if not idle:
                del _shelf[key]  # no empty lists: the oldest key always has one to evict
    if instance is not None:
        try:
            restore_into(start, instance)
            return instance
        except Exception:
            # Refused (another tree, say) or failed while loading: the restore is made anew
            # below, which says what is wrong if it fails too.
            instance.destroy()
    return start.restore(world, storage="memory")


def _shelve(instance: Instance) -> None:
    """Keep a replay instance for the next replay, or destroy it past ``REPLAY_INSTANCES``.

    Every replay instance is in memory: ``_replay_instance`` restores into memory only.
    """
    key = _shelf_key(instance.world, instance.clock.mode, instance.control_tools)
    evicted: list[Instance] = []
    with _shelf_lock:
        _shelf.setdefault(key, []).append(instance)
        _shelf.move_to_end(key)
        while sum(len(idle) for idle in _shelf.values()) > REPLAY_INSTANCES:
            oldest_key, oldest = next(iter(_shelf.items()))
            evicted.append(oldest.pop(0))
            if not oldest:
                del _shelf[oldest_key]
    for old in evicted:
        old.destroy()


def clear_replay_instances() -> None:
    """Destroy the idle replay instances this process keeps (see ``REPLAY_INSTANCES``)."""
    with _shelf_lock:
        idle = [instance for instances in _shelf.values() for instance in instances]
        _shelf.clear()
    for instance in idle:
        instance.destroy()
