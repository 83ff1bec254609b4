"""Episodes of one scenario played cheaply, from its start image, as a trial would play them.

``seahaven scenarios check`` plays dozens of episodes per scenario (the solution,
doing nothing, every mutant). Making each one's instance from the start again
would verify the fixture and run the world's startup hooks every time, so a
``Stage`` makes the start once, snapshots it, and restores that image into one
idle instance in memory before each episode (``restore_into``). An episode's
calls take the path a trial's take (``seahaven.scenarios.play.Play``: every
call counts against the budget, the call that spends it ends the episode,
``submit`` ends it with the answer, and the scenario's user and events, made
afresh for each episode, act as they do in a trial), and it is graded on the
same ``Episode`` a ``Trial`` hands its grader: the end, the start (the instance
the image was taken of, never called), the solution's replay, and the
conversation.

A ``Workbench`` keeps the idle instances between scenarios of one world, so a
whole pack restores into one instance per world and clock mode.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from seahaven.declaration.world import World
from seahaven.errors import ArgumentError, ToolError, WorldBug
from seahaven.grading.episode import Episode
from seahaven.grading.fold import Changes, fold
from seahaven.grading.grade import Grade
from seahaven.instance.instance import Instance
from seahaven.instance.snapshots import Snapshot, restore_into
from seahaven.scenarios.model import SUBMIT_TOOL, Scenario, ToolCall
from seahaven.scenarios.people import has_people
from seahaven.scenarios.play import Play
from seahaven.scenarios.trial import replay_solution
from seahaven.stores.changelog import LogRecord
from seahaven.stores.names import EVENT_PREFIX

__all__ = ["Outcome", "Played", "Stage", "Workbench"]

T = TypeVar("T")


@dataclass
class Outcome:
    """One call of an episode: what it asked, what it changed, and what it raised."""

    tool: str
    arguments: dict[str, Any]
    records: list[LogRecord] = field(default_factory=list)
    #: A refusal (``ToolError``) as ``code: message``; ``None`` when the call returned.
    refused: str | None = None
    #: A bug the world hit (anything but a ``ToolError``), as its type and message.
    crashed: str | None = None
    result: Any = None

    @property
    def wrote(self) -> bool:
        """Whether the call changed a row: the change log, not the tool's name, says so."""
        return bool(self.records)

    def to_dict(self) -> dict[str, Any]:
        """The call as a finding shows it: tool, arguments, and its refusal if any."""
        return {"tool": self.tool, "arguments": self.arguments, "error": self.refused}


@dataclass
class Played:
    """An episode played on a stage: its calls, net changes, ending and grade."""

    outcomes: list[Outcome]
    changes: Changes
    answer: str | None
    submitted: bool
    #: Whether the budget ended the episode before the script did: an agent could not play it.
    cut: bool
    grade: Grade | None = None
    episode: Episode | None = None
    #: The conversation with the scenario's user, each message with its speaker (none without).
    conversation: list[dict[str, Any]] = field(default_factory=list)
    #: How the episode ended, as a trial says it: ``submit``, ``budget``, ``user``, ``finish``.
    ended_by: str | None = None

    def told(self) -> tuple[str, ...]:
        """The texts of the agent's messages to the user, in order."""
        return tuple(
            str(message.get("text"))
            for message in self.conversation
            if message.get("speaker") == "agent"
        )

    def calls(self) -> list[dict[str, Any]]:
        """Every call made, as ``{"tool", "arguments", "error"}``, and the submit last."""
        shown = [outcome.to_dict() for outcome in self.outcomes]
        if self.submitted:
            shown.append({"tool": SUBMIT_TOOL, "arguments": {"answer": self.answer}, "error": None})
        return shown


class Workbench:
    """Idle instances in memory, one per world and clock mode, restored into for each episode."""

    def __init__(self) -> None:
        self._idle: dict[tuple[int, str, bool], Instance] = {}
        self._kept: dict[tuple[object, ...], tuple[World, object]] = {}

    def remember(self, world: World, key: tuple[object, ...], make: Callable[[], T]) -> T:
        """What ``make`` gives for ``key`` about ``world``, made once while the bench lives.

        The panel keeps here what is a function of a start alone (its rows, what
        its tools do), keyed by the start's bytes. The world is kept with it, so
        its ``id`` in a key is not reused while the bench lives.
        """
        full = (id(world), *key)
        found = self._kept.get(full)
        if found is None:
            found = self._kept[full] = (world, make())
        return found[1]  # type: ignore[return-value]

    def instance_at(self, image: Snapshot, world: World) -> Instance:
        """An instance brought to ``image``: the idle one restored into, or a new restore."""
        key = (id(world), image.clock[0], image.control_tools)
        idle = self._idle.get(key)
        if idle is not None:
            try:
                restore_into(image, idle)
                return idle
            except WorldBug:
                # Refused (a store with no pages yet, say): the instance is as it was.
                pass
            except Exception:
                # A failed load destroyed it; a new restore below says what is wrong.
                del self._idle[key]
        fresh = image.restore(world, storage="memory")
        if idle is None:
            self._idle[key] = fresh
        return fresh

    def release(self, instance: Instance) -> None:
        """Destroy an instance that is not one the bench keeps idle."""
        if not any(instance is idle for idle in self._idle.values()):
            instance.destroy()

    def close(self) -> None:
        """Destroy every idle instance."""
        for instance in self._idle.values():
            instance.destroy()
        self._idle.clear()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Stage:
    """One scenario's start, made once; episodes played from its image and graded."""

    def __init__(
        self, scenario: Scenario, world: World, seed: int | None, bench: Workbench
    ) -> None:
        self.scenario = scenario
        self.world = world
        self.seed = seed
        self.bench = bench
        self._options = scenario.start.instance_options(seed=seed)
        try:
            # The start as the episode finds it: the ``start`` view graders read, never called.
            self.start: Instance = world.instance(**self._options)
        except WorldBug as error:
            raise WorldBug(f"scenario {scenario.id!r} cannot start: {error}") from None
        try:
            self.image: Snapshot | None = self.start.snapshot()
        except WorldBug:
            # ``ctx.state`` holds something that cannot be copied: each episode starts afresh.
            self.image = None
        self._work: Instance | None = None

    def close(self) -> None:
        """Destroy the start instance (the bench keeps the idle one)."""
        self.start.destroy()
        if self._work is not None:
            self.bench.release(self._work)
            self._work = None

    def __enter__(self) -> Stage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- playing ----------------------------------------------------------------------------

    def instance_at(self, image: Snapshot | None) -> Instance:
        """The instance an episode plays on, brought to ``image`` (the start when ``None``)."""
        if self._work is not None:
            self.bench.release(self._work)
            self._work = None
        image = image if image is not None else self.image
        if image is None:
            self._work = self.world.instance(**self._options)
        else:
            self._work = self.bench.instance_at(image, self.world)
        return self._work

    def play(
        self,
        calls: Sequence[ToolCall],
        *,
        answer: str | None = None,
        submitted: bool = False,
        grade: bool = True,
        after: Snapshot | None = None,
        made: int = 0,
        pause: float = 0.0,
    ) -> Played:
        """Play ``calls`` (then submit ``answer`` when ``submitted``) and grade the episode.

        The calls take the path a trial's take (``seahaven.scenarios.play.Play``),
        the scenario's user and events beside them, afresh for each episode. A
        call after the user ended the conversation is not made: the episode
        ended there. ``after`` is an image of an episode already ``made`` calls
        into this scenario (the solution's end, say), to go on from rather than
        the start; a scenario with people has none (``snapshot``). ``pause``
        waits that many seconds before the first call, so that values read from
        a running clock differ from another run's.
        """
        instance = self.instance_at(after)
        play = Play(self.scenario, instance, seed=self.seed, calls_made=made)
        if pause:
            time.sleep(pause)
        outcomes: list[Outcome] = []
        cut = False
        for step in calls:
            if play.done:
                cut = play.ended_by == "budget"
                break
            outcomes.append(self._step(play, step))
        if submitted and not play.done:
            try:
                play.submit(answer if answer is not None else "")
            except ArgumentError as error:
                raise WorldBug(
                    f"scenario {self.scenario.id!r}: a submitted answer is refused: {error.message}"
                ) from None
        elif submitted and play.ended_by == "budget":
            cut = True  # the call that spent the budget ended the episode before the submit
        play.finish()
        played = Played(
            outcomes=outcomes,
            changes=fold(instance.change_log()),
            answer=play.answer,
            submitted=play.submitted,
            cut=cut,
            conversation=play.conversation,
            ended_by=play.ended_by,
        )
        if grade:
            played.episode = play.episode(start=self.start.inspect, solution=self._solution_changes)
            played.grade = self.grade(played.episode)
        return played

    def grade(self, episode: Episode) -> Grade:
        """Grade an episode; a grader that raises is the scenario's bug, named as a trial does."""
        try:
            return self.scenario.grader.grade(episode)
        except WorldBug as error:
            raise WorldBug(f"scenario {self.scenario.id!r}: grading failed: {error}") from None
        except Exception as error:
            raise WorldBug(
                f"scenario {self.scenario.id!r}: grading raised {type(error).__name__}: {error}"
            ) from error

    def snapshot(self) -> Snapshot | None:
        """An image of the episode just played, to go on from (``None`` when it cannot be).

        A scenario with a user or events has none: what the user was told and
        which events are still to come are not in an instance's image.
        """
        if self._work is None or self.image is None or has_people(self.scenario):
            return None
        try:
            return self._work.snapshot()
        except WorldBug:
            return None

    def _solution_changes(self) -> Changes:
        return replay_solution(self.scenario, self.world, self.seed, start=self.image).changes

    @staticmethod
    def call(instance: Instance, step: ToolCall) -> Outcome:
        """Make one call on ``instance`` directly, and note what it changed, returned or raised.

        The probe of a start (``extras.py``) makes its calls this way: they are
        no agent's, in no episode.
        """
        return _noted(step, instance, lambda: instance.call(step.tool, **step.arguments))

    @staticmethod
    def _step(play: Play, step: ToolCall) -> Outcome:
        """One of the agent's calls in an episode, as a trial takes it.

        What the events due before it changed is not the call's: only the
        records of the call itself (and of the user's calls its message led to)
        are noted.
        """
        return _noted(step, play.instance, lambda: play.call(step.tool, **step.arguments))


def _noted(step: ToolCall, instance: Instance, make: Callable[[], Any]) -> Outcome:
    outcome = Outcome(step.tool, dict(step.arguments))
    log = instance.calls.log
    known = len(log)
    try:
        outcome.result = make()
    except ToolError as error:
        outcome.refused = f"{error.code}: {error.message}"
    except Exception as error:
        outcome.crashed = f"{type(error).__name__}: {error}"
    outcome.records = [
        record for record in log.records[known:] if not record.actor.startswith(EVENT_PREFIX)
    ]
    return outcome
