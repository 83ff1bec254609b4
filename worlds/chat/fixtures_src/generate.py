"""The committed generator of every chat fixture.

One function per fixture fills a blank instance; ``build`` freezes it at
``NOW`` on a fixed clock with a fixed seed, so a rebuild writes the same bytes
(only the sidecar's ``created_at``, a wall-clock stamp by design, would differ,
and a rebuild in place keeps the committed fixture whole when nothing else does).

History is written inside ``inst.bulk()`` through ``chat_world.store``, the same
write path the tools use, with instants computed from the script (``team_cast``
declares the people and channels, ``team_posts`` the messages): a fixed clock
gives every tool call one instant, and a workspace whose whole history happened
at 09:00 this morning would not read like one. What happens "this
morning" is done through the world's own tools, as the owner.

Rebuild every fixture from the world's directory::

    python fixtures_src/generate.py
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

import seahaven
import seahaven.toolkit

import chat_world
from chat_world import store

if __package__:
    from .team_cast import PEOPLE, ROOMS, Person, Room
    from .team_posts import MORNING_ANNOUNCEMENT, POSTS
else:  # run as a script (python fixtures_src/generate.py): this directory is on the path
    from team_cast import PEOPLE, ROOMS, Person, Room
    from team_posts import MORNING_ANNOUNCEMENT, POSTS

NOW = "2026-06-01T09:00:00.000Z"
SEED = 20260601

PACKAGE_FIXTURES = Path(chat_world.__file__).resolve().parent / "fixtures"


# --- the empty workspace ---------------------------------------------------------------------


def empty(inst: seahaven.Instance) -> None:
    """Nothing: the schema and no rows."""


# --- the team workspace ----------------------------------------------------------------------


def _at(moment: str, minutes: int = 0) -> str:
    """``2026-05-04 09:30`` (UTC) plus ``minutes``, in the world's timestamp format."""
    parsed = datetime.strptime(moment, "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    shifted = parsed + timedelta(minutes=minutes)
    return shifted.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def team_workspace(inst: seahaven.Instance) -> None:
    """Tidewater: ten people, nine channels and a few weeks of conversation."""
    with inst.bulk() as ctx:
        users = _create_people_and_rooms(ctx)
        channels = {
            str(row["name"]): str(row["id"]) for row in ctx.db.rows("SELECT id, name FROM channels")
        }
        _write_history(ctx, users, channels)
        for room in ROOMS:
            if room.archived is not None:
                store.archive_channel(
                    ctx, channels[room.name], users[room.creator], _at(room.archived)
                )
    # This morning, through the product itself: the owner opens the week.
    general = inst.call("lookup_channel_by_name", name="general")
    inst.call("post_message", channel_id=general.id, text=MORNING_ANNOUNCEMENT)


def _create_people_and_rooms(ctx: seahaven.Ctx) -> dict[str, str]:
    """Accounts and channels in the order they came to be, then the channels' members."""
    users: dict[str, str] = {}
    rooms = {room.name: room for room in ROOMS}
    # #general exists before anyone but the owner, so every later account joins it.
    events: list[tuple[str, Person | Room]] = [(person.joined, person) for person in PEOPLE]
    events += [(room.created, room) for room in ROOMS]
    for _, item in sorted(events, key=lambda event: event[0]):
        if isinstance(item, Person):
            users[item.handle] = store.insert_user(
                ctx,
                handle=item.handle,
                display_name=item.display_name,
                title=item.title,
                timezone=item.timezone,
                role=item.role,
                at=_at(item.joined),
            )
        else:
            store.insert_channel(
                ctx,
                name=item.name,
                is_private=item.is_private,
                creator_id=users[item.creator],
                topic=item.topic,
                purpose=item.purpose,
                at=_at(item.created),
                is_general=item.is_general,
            )
    people = {person.handle: person for person in PEOPLE}
    for name, room in rooms.items():
        channel = ctx.db.one("SELECT id FROM channels WHERE name = ?", name)
        assert channel is not None
        for handle in room.members:
            # An hour after both the channel and the account existed.
            joined = max(room.created, people[handle].joined)
            store.add_member(ctx, str(channel["id"]), users[handle], _at(joined, 60))
    for person in PEOPLE:
        if person.deactivated is not None:
            store.deactivate_user(ctx, users[person.handle])
    return users


@dataclass(frozen=True)
class _Event:
    """One thing that happened to a message, placed on the timeline."""

    at: str
    # Breaks ties between events at one instant: a post, then its replies, then reactions.
    order: int
    kind: Literal["post", "reply", "react", "edit", "delete"]
    # (index of the post in POSTS, number of the reply in its thread or -1 for the post).
    key: tuple[int, int]
    author: str = ""
    text: str = ""
    emoji: str = ""


def _timeline() -> list[_Event]:
    """Every post, reply, reaction, edit and deletion in POSTS, in the order they happened."""
    events: list[_Event] = []
    for index, entry in enumerate(POSTS):
        order = index * 100
        root = (index, -1)
        events.append(_Event(_at(entry.when), order, "post", root, entry.author, entry.text))
        reacted = [(root, 0, entry.reactions)]
        for number, answer in enumerate(entry.replies):
            moment = _at(entry.when, answer.minutes)
            key = (index, number)
            events.append(
                _Event(moment, order + 1 + number, "reply", key, answer.author, answer.text)
            )
            reacted.append((key, answer.minutes, answer.reactions))
        for key, minutes, by_emoji in reacted:
            people = [(emoji, handle) for emoji, handles in by_emoji.items() for handle in handles]
            # One reaction a minute, starting two minutes after the message.
            for step, (emoji, handle) in enumerate(people, start=1):
                moment = _at(entry.when, minutes + 2 + step)
                events.append(_Event(moment, order + 50 + step, "react", key, handle, emoji=emoji))
        if entry.edited is not None:
            minutes, text = entry.edited
            events.append(_Event(_at(entry.when, minutes), order + 90, "edit", root, text=text))
        if entry.deleted_after is not None:
            events.append(_Event(_at(entry.when, entry.deleted_after), order + 91, "delete", root))
    return sorted(events, key=lambda event: (event.at, event.order))


def _write_history(ctx: seahaven.Ctx, users: dict[str, str], channels: dict[str, str]) -> None:
    """Replay the timeline through the store, so every invariant holds as it would live."""
    message_ids: dict[tuple[int, int], str] = {}
    for event in _timeline():
        index, _ = event.key
        channel_id = channels[POSTS[index].channel]
        if event.kind in ("post", "reply"):
            message_ids[event.key] = store.insert_message(
                ctx,
                channel_id=channel_id,
                user_id=users[event.author],
                text=event.text,
                at=event.at,
                thread_root_id=message_ids[(index, -1)] if event.kind == "reply" else None,
            )
        elif event.kind == "react":
            store.add_reaction(
                ctx, message_ids[event.key], users[event.author], event.emoji, event.at
            )
        elif event.kind == "edit":
            store.edit_message(ctx, message_ids[event.key], event.text, event.at)
        else:
            store.mark_message_deleted(ctx, message_ids[event.key], event.at)


# --- building ----------------------------------------------------------------------------------

FIXTURES: dict[str, tuple[Callable[[seahaven.Instance], None], str]] = {
    "empty": (
        empty,
        "The chat schema with no rows: no accounts, no channels. The acting user is whoever "
        "create_user makes first (that account becomes the workspace owner). Start here for "
        "workspace setup and onboarding scenarios.",
    ),
    "team_workspace": (
        team_workspace,
        "Tidewater, a ten-person software company (plus one deactivated former employee), owned "
        "by @maya. Nine channels: #general, #random, #engineering, #billing, #incidents, #design, "
        "the private #leadership and #hiring-backend, and the archived #offsite-2026. Four weeks "
        "of conversation (May 4-29 2026, plus older history) with threads, reactions, an edited "
        "and a deleted message, and this morning's all-hands reminder in #general. Acts as @maya "
        "unless startup={'user': <handle>} names someone else. Good for reading and summarising "
        "history and threads, search and its private-channel scoping, posting, replying, "
        "reacting, and channel administration.",
    ),
}


def build(fixture_id: str, *, world: seahaven.World = chat_world.world) -> seahaven.Fixture:
    """Freeze ``fixture_id`` into ``world.fixtures_dir`` from a blank instance at ``NOW``."""
    builder, description = FIXTURES[fixture_id]
    with world.instance(now=NOW, clock_mode="fixed", seed=SEED) as inst:
        builder(inst)
        return inst.freeze(fixture_id, description)


def main(argv: list[str]) -> int:
    """Rebuild the named fixtures (all of them when none is named) in the package."""
    return seahaven.toolkit.rebuild_fixtures(
        chat_world.world, build, list(FIXTURES), argv, into=PACKAGE_FIXTURES
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
