"""What happens at Acme while the agent works: the events the pack's conversation scenarios name.

Each is a function of the instance, named in a scenario's YAML as
``python: company_world.scenarios.events:<name>`` and run as that event's actor
when it comes due. A colleague's message in chat is written through the chat
world's own write path (``chat_world.store``) in a ``bulk()`` block, since the
back office's chat integration posts only as itself: the message is the
colleague's, and the change log says the event wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from chat_world import store

import seahaven

__all__ = ["conference_hold", "rafael_trip_cancelled", "say_in_chat"]


@dataclass(frozen=True)
class _ChatStore:
    """What ``chat_world.store`` reads of a context: the chat store's db, and an id stream."""

    db: seahaven.Db
    ids: Any


def say_in_chat(instance: seahaven.Instance, handle: str, channel: str, text: str) -> None:
    """``@handle`` posts ``text`` in ``#channel`` now, as that person."""
    with instance.bulk() as ctx:
        chat = ctx.worlds.chat.db
        person = chat.one("SELECT id FROM users WHERE handle = ?", handle)
        room = chat.one("SELECT id FROM channels WHERE name = ?", channel)
        if person is None or room is None:
            raise seahaven.WorldBug(f"the workspace has no @{handle} or no #{channel}")
        store.insert_message(
            cast(seahaven.Ctx, _ChatStore(chat, ctx.ids)),
            channel_id=str(room["id"]),
            user_id=str(person["id"]),
            text=text,
            at=ctx.clock.iso(),
        )


def rafael_trip_cancelled(instance: seahaven.Instance) -> None:
    """Rafael says in #finance that his Hamburg trip was called off and refunded."""
    say_in_chat(
        instance,
        "rafael",
        "finance",
        "Heads up: the Hansa visit in Hamburg is cancelled. The booking site refunded my train "
        "and hotel in full, so please don't pay that claim.",
    )


def conference_hold(instance: seahaven.Instance) -> None:
    """Dana puts every conference registration on hold in #finance."""
    say_in_chat(
        instance,
        "dana",
        "finance",
        "Please hold every conference registration until the Q3 budget review: none of them "
        "gets paid this week.",
    )
