"""Events: what happens in a scenario's world while the agent works, on the instance's clock.

An ``Event`` is something a scenario makes happen at a point of the episode:
``at`` a time on the instance's clock (``"+10m"`` after the episode started,
or an ISO instant) or ``after_call`` the agent's Nth call. It is a tool call
made as the event's own actor (``event:<name>``), or a Python function of the
instance (``python: module:function``) run under that actor. A trial fires
every event that has come due just before it dispatches the agent's next call,
in the order the scenario lists them, so an episode replays exactly for a given
seed: under a ``tick`` clock, time is the number of calls dispatched, and an
event after the third call is after the third call wherever it runs.

``EventRunner`` is the part a trial holds: which events are still to come, and
firing the ones due.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from seahaven.errors import ToolError, WorldBug
from seahaven.registry.targets import import_target, split_target
from seahaven.stores.clock import format_instant, parse_instant
from seahaven.stores.names import EVENT_PREFIX, check_scenario_name

if TYPE_CHECKING:
    from seahaven.instance.instance import Instance

__all__ = ["Event", "EventRunner", "event_offset_ms"]

# "+90s", "+10m", "+1h30m", "+2d": a span after the episode's start, in these units.
_SPAN = re.compile(r"\+((?:\d+[smhd])+)")
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def event_offset_ms(at: str) -> int | None:
    """The milliseconds a relative ``at`` (``+10m``) names; ``None`` for an instant."""
    match = _SPAN.fullmatch(at)
    if match is None:
        return None
    return sum(
        int(amount) * _UNIT_MS[unit]
        for amount, unit in re.findall(r"(\d+)([smhd])", match.group(1))
    )


class Event(BaseModel):
    """One thing a scenario makes happen during an episode, and when.

    ``name`` makes its actor, ``event:<name>``, which every call-log entry and
    change-log record it causes carries. When: ``at`` (``"+30s"``, ``"+10m"``,
    ``"+1h"``, ``"+2d"`` after the episode started, or an ISO instant) or
    ``after_call`` (once the agent has made that many calls). What: ``tool``
    and ``arguments`` (a tool of the world's surface, the ones the agent is not
    offered included) or ``python`` (``module:function``, called with the
    instance).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    at: str | None = None
    after_call: int | None = Field(default=None, ge=0, le=100_000)
    tool: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    python: str | None = None

    @field_validator("name", mode="before")
    @classmethod
    def _spelled(cls, value: Any) -> Any:
        try:
            return check_scenario_name(value, what="event name")
        except WorldBug as error:
            raise ValueError(str(error)) from None

    @field_validator("at", mode="before")
    @classmethod
    def _when(cls, value: Any) -> Any:
        # YAML reads an unquoted timestamp as a datetime; keep an instant's canonical text.
        if value is None:
            return None
        if isinstance(value, str) and event_offset_ms(value.strip()) is not None:
            return value.strip()
        if not isinstance(value, str | datetime):
            raise ValueError('at is "+10m" (s, m, h, d after the start) or an instant')
        try:
            return format_instant(parse_instant(value))
        except WorldBug as error:
            raise ValueError(
                f'at is "+10m" (s, m, h or d after the episode started, as "+1h30m") or an '
                f"instant: {error}"
            ) from None

    @field_validator("after_call", mode="before")
    @classmethod
    def _whole(cls, value: Any) -> Any:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError("after_call is a whole number of the agent's calls")
        return value

    @field_validator("python")
    @classmethod
    def _target(cls, value: str | None) -> str | None:
        if value is not None and split_target(value) is None:
            raise ValueError("python names a function as module:function")
        return value

    @model_validator(mode="after")
    def _one_of_each(self) -> Event:
        if (self.at is None) == (self.after_call is None):
            raise ValueError(f"event {self.name!r} takes one of at or after_call")
        if (self.tool is None) == (self.python is None):
            raise ValueError(f"event {self.name!r} takes one of tool or python")
        if self.python is not None and self.arguments:
            raise ValueError(f"event {self.name!r}: arguments go with a tool, not python")
        return self

    @property
    def actor(self) -> str:
        """Who the event acts as: ``event:<name>``."""
        return EVENT_PREFIX + self.name

    def describe(self) -> str:
        """When the event happens, in words."""
        if self.after_call is not None:
            return f"after the agent's call {self.after_call}"
        return f"at {self.at}"


class EventRunner:
    """A trial's events still to come, and firing those due before the agent's next call.

    ``fired`` lists what happened: each event's name, the number of calls the
    instance had dispatched when it fired (``at_call``), and the refusal its
    tool call (or its function) met, if any.
    """

    def __init__(self, scenario_id: str, events: Iterable[Event], instance: Instance) -> None:
        self._scenario = scenario_id
        self._pending = list(events)
        self._instance = instance
        # Relative times count from the clock's reading as the episode starts.
        self._start_ms = instance.clock.reading_ms()
        self._due_ms = {
            event.name: self._when_ms(event) for event in self._pending if event.at is not None
        }
        self._functions: dict[str, Callable[..., Any]] = {}
        self.fired: list[dict[str, Any]] = []
        if self._due_ms and instance.clock.mode == "fixed":
            timed = next(event for event in self._pending if event.at is not None)
            raise WorldBug(
                f"scenario {scenario_id!r}: event {timed.name!r} happens at {timed.at}, and a "
                "fixed clock never gets there; start it with clock_mode tick (deterministic) "
                "or running, or use after_call"
            )
        surface = {entry.name for entry in instance.world.composition().surface}
        for event in self._pending:
            if event.tool is not None and event.tool not in surface:
                raise WorldBug(
                    f"scenario {scenario_id!r}: event {event.name!r} calls {event.tool!r}, "
                    f"which world {instance.world.name!r} does not serve"
                )
            if event.python is not None:
                self._functions[event.name] = self._function(event)

    def _when_ms(self, event: Event) -> int:
        assert event.at is not None
        offset = event_offset_ms(event.at)
        return self._start_ms + offset if offset is not None else parse_instant(event.at)

    def _function(self, event: Event) -> Callable[..., Any]:
        assert event.python is not None
        found = import_target(
            event.python,
            label=f"scenario {self._scenario!r}: event {event.name!r}",
            what="a function of the instance",
            example="my_world.events:card_declined",
        )
        if not callable(found):
            raise WorldBug(
                f"scenario {self._scenario!r}: event {event.name!r}: {event.python!r} is not a "
                "function; it names a function called with the instance"
            )
        return found

    @property
    def pending(self) -> list[Event]:
        """The events that have not happened yet, in the scenario's order."""
        return list(self._pending)

    def due(self, agent_calls: int) -> list[Event]:
        """The pending events due once the agent has made ``agent_calls`` calls, now."""
        if not self._pending:
            return []
        now = self._instance.clock.reading_ms() if self._due_ms else 0
        return [
            event
            for event in self._pending
            if (event.after_call is not None and agent_calls >= event.after_call)
            or (event.at is not None and now >= self._due_ms[event.name])
        ]

    def fire_due(self, agent_calls: int) -> None:
        """Fire every event due now, in the scenario's order, each as its own actor."""
        for event in self.due(agent_calls):
            self._pending.remove(event)
            self.fire(event)

    def fire(self, event: Event) -> None:
        """Make one event happen now; a refusal is noted, a bug in the world raised."""
        instance = self._instance
        refused: str | None = None
        at_call = instance.call_count
        try:
            with instance.acting_as(event.actor):
                if event.tool is not None:
                    instance.call(event.tool, **event.arguments)
                else:
                    self._functions[event.name](instance)
        except ToolError as error:
            refused = f"{error.code}: {error.message}"
        except WorldBug as error:
            raise WorldBug(
                f"scenario {self._scenario!r}: event {event.name!r} hit a bug: {error}"
            ) from None
        except Exception as error:
            raise WorldBug(
                f"scenario {self._scenario!r}: event {event.name!r} raised "
                f"{type(error).__name__}: {error}"
            ) from error
        self.fired.append({"name": event.name, "at_call": at_call, "error": refused})
