"""Who a check is about: ``by`` and ``not_by``, the actors a change or a call must (not) have.

Every change-log record and call says who acted (``agent``, ``user``,
``event:<name>``, ``setup``), and a row's net change lists everyone who touched
it (``NetChange.actors``). A check given ``by`` counts only the changes (or
calls) one of those actors made; given ``not_by``, only those none of them
made. ``event`` alone stands for every event. So "the user, not the agent,
turned roaming on" is::

    changed(table="settings", store="phone", to={"roaming": 1}, by="user", not_by="agent")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from seahaven.errors import WorldBug
from seahaven.grading.fold import NetChange
from seahaven.stores.names import AGENT, EVENT_PREFIX, check_actor

__all__ = ["ANY_EVENT", "ActorFilter", "actor_filter", "call_actor"]

ANY_EVENT = "event"
"""In ``by`` and ``not_by``: any event, whatever its name."""


def _actors(value: Any, what: str) -> tuple[str, ...] | None:
    """An actor or a list of them, checked; ``None`` when not given."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        raise WorldBug(f"{what} is an actor or a list of actors (agent, user, event:<name>, ...)")
    checked: list[str] = []
    for item in items:
        if item == ANY_EVENT:
            checked.append(ANY_EVENT)
            continue
        try:
            checked.append(check_actor(item))
        except WorldBug as error:
            raise WorldBug(f"{what}: {error}; or event, for any event") from None
    return tuple(dict.fromkeys(checked))


def _matches(actor: str, wanted: tuple[str, ...]) -> bool:
    return actor in wanted or (ANY_EVENT in wanted and actor.startswith(EVENT_PREFIX))


def call_actor(call: Mapping[str, Any]) -> str:
    """Who made a call, as a call log entry says; one saved before entries said was the agent."""
    actor = call.get("actor")
    return actor if isinstance(actor, str) else AGENT


def _shown(actors: tuple[str, ...]) -> str:
    names = [
        "an event" if actor == ANY_EVENT else f"the {actor}" if ":" not in actor else actor
        for actor in actors
    ]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


@dataclass(frozen=True, slots=True)
class ActorFilter:
    """Which actors a check counts: one of ``by`` (when given) and none of ``not_by``."""

    by: tuple[str, ...] | None = None
    not_by: tuple[str, ...] | None = None

    def spec(self) -> dict[str, Any]:
        """The filter as a check's arguments: ``by`` and ``not_by``, an actor or a list."""
        spec: dict[str, Any] = {}
        for name in ("by", "not_by"):
            actors = getattr(self, name)
            if actors is not None:
                spec[name] = actors[0] if len(actors) == 1 else list(actors)
        return spec

    def counts(self, actors: Iterable[str]) -> bool:
        """Whether something done by ``actors`` (everyone who touched it) is counted."""
        done_by = tuple(actors)
        if self.by is not None and not any(_matches(actor, self.by) for actor in done_by):
            return False
        return self.not_by is None or not any(_matches(actor, self.not_by) for actor in done_by)

    def change(self, change: NetChange) -> bool:
        """Whether a net change is counted: the actors who touched its row pass."""
        return self.counts(change.actors)

    def call(self, call: Mapping[str, Any]) -> bool:
        """Whether a call (a call log entry) is counted: its actor passes."""
        return self.counts((call_actor(call),))

    def describe(self) -> str:
        """The filter as the end of a check's title: `` by the user, not by the agent``."""
        parts = []
        if self.by is not None:
            parts.append(f"by {_shown(self.by)}")
        if self.not_by is not None:
            parts.append(f"not by {_shown(self.not_by)}")
        return (" " + ", ".join(parts)) if parts else ""

    def why_not(self, change: NetChange) -> str:
        """Why a change the filter leaves out does not count, naming who made it."""
        who = " and ".join(change.actors) or "nobody"
        return f"{change.where} was changed by {who}, and only changes{self.describe()} count"


def actor_filter(by: Any = None, not_by: Any = None, *, what: str) -> ActorFilter | None:
    """The filter ``by`` and ``not_by`` make, or ``None`` when neither is given.

    Each is an actor (``agent``, ``user``, ``setup``, ``event:<name>``, or
    ``event`` for any event) or a list of them; a mistake is a ``WorldBug``
    naming ``what``.
    """
    wanted = _actors(by, f"{what}: by")
    refused = _actors(not_by, f"{what}: not_by")
    if wanted is None and refused is None:
        return None
    if wanted is not None and refused is not None and set(wanted) & set(refused):
        both = ", ".join(sorted(set(wanted) & set(refused)))
        raise WorldBug(f"{what}: {both} is in both by and not_by")
    return ActorFilter(wanted, refused)
