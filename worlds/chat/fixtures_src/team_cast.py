"""The team workspace's people and channels, as the generator's script declares them.

``Person`` and ``Room`` are the accounts and channels of Tidewater (``PEOPLE``,
``ROOMS``); ``Post`` and ``Reply`` are what ``team_posts.POSTS`` is written in.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Person:
    """One account, as the script declares it."""

    handle: str
    display_name: str
    title: str
    timezone: str
    role: str
    joined: str
    # When the account was deactivated, if it was.
    deactivated: str | None = None


@dataclass(frozen=True)
class Room:
    """One channel, as the script declares it."""

    name: str
    creator: str
    created: str
    purpose: str
    topic: str
    members: tuple[str, ...]
    is_private: bool = False
    is_general: bool = False
    archived: str | None = None


@dataclass(frozen=True)
class Reply:
    """A reply in a thread, ``minutes`` after the message it answers."""

    minutes: int
    author: str
    text: str
    reactions: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Post:
    """A message posted to a channel, with its reactions and its thread."""

    when: str
    channel: str
    author: str
    text: str
    reactions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    replies: tuple[Reply, ...] = ()
    # Minutes after posting that the author fixed the text, and the text it became.
    edited: tuple[int, str] | None = None
    # Minutes after posting that the author deleted it.
    deleted_after: int | None = None


PEOPLE = (
    Person(
        "maya", "Maya Okafor", "CEO & Co-founder", "America/New_York", "owner", "2025-09-01 08:00"
    ),
    Person(
        "dev", "Dev Raman", "CTO & Co-founder", "America/Los_Angeles", "admin", "2025-09-01 10:00"
    ),
    Person(
        "lena", "Lena Fischer", "Engineering Manager", "Europe/Berlin", "member", "2025-10-06 09:00"
    ),
    Person(
        "carla", "Carla Mendes", "Head of Finance", "Europe/Lisbon", "admin", "2025-10-20 09:00"
    ),
    Person(
        "sam", "Sam Whitaker", "Backend Engineer", "America/Chicago", "member", "2025-11-03 15:00"
    ),
    Person(
        "priya",
        "Priya Natarajan",
        "Frontend Engineer",
        "Asia/Kolkata",
        "member",
        "2025-11-17 05:00",
    ),
    Person(
        "nina",
        "Nina Kowalski",
        "Support Engineer",
        "Europe/Warsaw",
        "member",
        "2025-12-01 08:00",
        deactivated="2026-03-27 18:00",
    ),
    Person(
        "rafael",
        "Rafael Ortiz",
        "Customer Success Lead",
        "America/Sao_Paulo",
        "member",
        "2026-01-05 12:00",
    ),
    Person(
        "jonas",
        "Jonas Berg",
        "Site Reliability Engineer",
        "Europe/Stockholm",
        "member",
        "2026-01-12 08:00",
    ),
    Person(
        "tom", "Tom Becker", "Billing Operations", "Europe/Berlin", "member", "2026-02-02 08:00"
    ),
    Person("aiko", "Aiko Tanaka", "Product Designer", "Asia/Tokyo", "member", "2026-05-04 00:30"),
)

ROOMS = (
    Room(
        "general",
        "maya",
        "2025-09-01 08:05",
        purpose="Company-wide announcements. Everyone is here.",
        topic="Announcements and company news",
        members=(),
        is_general=True,
    ),
    Room(
        "random",
        "maya",
        "2025-09-01 08:06",
        purpose="Lunch, pets, books and everything that is not work.",
        topic="Lunch, pets, books and everything else",
        members=("dev", "lena", "sam", "priya", "jonas", "tom", "rafael", "aiko", "nina"),
    ),
    Room(
        "engineering",
        "dev",
        "2025-09-02 16:00",
        purpose="Engineering discussion, code reviews and releases.",
        topic="Sprint 19: usage-based billing · Postgres 16 · flaky tests",
        members=("lena", "sam", "priya", "jonas", "aiko"),
    ),
    Room(
        "leadership",
        "maya",
        "2025-10-20 17:00",
        purpose="Leadership team: board, budget, strategy.",
        topic="Board meeting June 10",
        members=("dev", "carla", "lena"),
        is_private=True,
    ),
    Room(
        "billing",
        "carla",
        "2025-10-21 09:30",
        purpose="Billing operations and questions about invoices, refunds and payments.",
        topic="Billing ops: refunds, invoices, dunning",
        members=("tom", "sam", "rafael", "maya"),
    ),
    Room(
        "design",
        "priya",
        "2025-12-01 10:00",
        purpose="Product design reviews and research.",
        topic="Onboarding flow redesign",
        members=("aiko", "lena", "maya"),
    ),
    Room(
        "incidents",
        "dev",
        "2026-01-12 09:00",
        purpose="Live incidents and postmortems.",
        topic="On-call this week: @jonas",
        members=("lena", "sam", "jonas", "priya", "rafael", "nina"),
    ),
    Room(
        "offsite-2026",
        "maya",
        "2026-02-16 09:50",
        purpose="Planning the 2026 company offsite.",
        topic="Lisbon, March 18–20",
        members=("dev", "lena", "carla", "rafael", "sam"),
        archived="2026-04-06 10:00",
    ),
    Room(
        "hiring-backend",
        "lena",
        "2026-04-13 11:00",
        purpose="Backend engineer hiring pipeline.",
        topic="",
        members=("dev", "sam"),
        is_private=True,
    ),
)
