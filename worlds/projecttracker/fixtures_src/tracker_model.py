"""What a fixture is made of, as the generator's script declares it: people, teams,
projects, labels and issues (each with the ``Step``s of its life), gathered in a ``Tracker``;
and ``day``, the script's way of writing a date.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta


def day(text: str, hour: int = 9) -> datetime:
    """A weekday morning, as the script declares dates: ``2026-04-01``."""
    return datetime.fromisoformat(text).replace(hour=hour, tzinfo=UTC)


@dataclass(frozen=True)
class Person:
    """One account, and the teams (by key) it belongs to."""

    name: str
    email: str
    role: str
    joined: str
    teams: tuple[str, ...]


@dataclass(frozen=True)
class TeamSpec:
    """A team, as the script declares it."""

    key: str
    name: str
    description: str
    created: str


@dataclass(frozen=True)
class ProjectSpec:
    """A project of one team; a ``done`` project is finished by ``finished``."""

    team: str
    name: str
    description: str
    state: str
    lead: str
    created: str
    target_date: str | None = None
    finished: str | None = None


@dataclass(frozen=True)
class LabelSpec:
    """A label of one team."""

    team: str
    name: str
    color: str
    description: str


@dataclass
class IssueSpec:
    """One issue before its life is replayed: where it is, what it says, when it began."""

    team: str
    project: str
    title: str
    description: str
    created: datetime
    priority: int
    labels: tuple[str, ...]
    estimate: int | None = None
    due: datetime | None = None
    # The issue never closes (set from the tracker's pins once the key is known).
    keep_open: bool = False
    # The issue is archived this long after it closed, if it closes.
    archive_after: timedelta | None = None
    key: str = ""
    history: list[Step] = field(default_factory=list)


@dataclass(frozen=True)
class Step:
    """One thing that happened to an issue: a status change, an assignment or a comment."""

    at: datetime
    kind: str
    actor: str
    value: str | None = None


@dataclass
class Tracker:
    """Everything one fixture holds, declared; ``load`` writes it."""

    people: Sequence[Person]
    teams: Sequence[TeamSpec]
    projects: Sequence[ProjectSpec]
    labels: Sequence[LabelSpec]
    issues: list[IssueSpec]
    comment_count: int
    comment_texts: Sequence[str]
    # Issues (by key) that must end open in this status, with an assignee: the documentation's
    # examples close them, and expect someone to be assigned.
    pins: dict[str, str] = field(default_factory=dict)
