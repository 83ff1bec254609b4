"""Reading rows into the models the tools return.

The SELECT fragments here are shared by every tool that returns a user, a
channel or a message, so one kind of record always has one shape. Each
fragment names its columns as the model names its fields, so
``seahaven.toolkit.from_row`` builds the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import seahaven
from seahaven.toolkit import from_row

from chat_world.models import Channel, Message, Reaction, User

__all__ = [
    "CHANNEL_SELECT",
    "MESSAGE_SELECT",
    "USER_COLUMNS",
    "channel_from_row",
    "load_channel",
    "load_message",
    "load_user",
    "messages_from_rows",
    "user_from_row",
]

USER_COLUMNS = (
    "u.id, u.handle, u.display_name, u.title, u.timezone, u.role, u.deactivated, u.created_at"
)

# Bind the acting user's id once, for is_member. Members are counted among active accounts.
CHANNEL_SELECT = (
    "SELECT c.id, c.name, c.is_private, c.is_general, c.is_archived, c.topic, c.purpose, "
    "c.creator_id, c.created_at, c.archived_at, "
    "(SELECT count(*) FROM memberships AS mc JOIN users AS mu ON mu.id = mc.user_id "
    " WHERE mc.channel_id = c.id AND mu.deactivated = 0) AS member_count, "
    "EXISTS (SELECT 1 FROM memberships AS mm WHERE mm.channel_id = c.id AND mm.user_id = ?) "
    "AS is_member "
    "FROM channels AS c"
)

MESSAGE_SELECT = (
    "SELECT m.id, m.channel_id, m.user_id, u.handle AS user_handle, m.ts, m.text, "
    "m.thread_root_id, m.reply_count, m.last_reply_at, m.created_at, m.edited_at, m.deleted_at "
    "FROM messages AS m JOIN users AS u ON u.id = m.user_id"
)


def user_from_row(row: Mapping[str, Any]) -> User:
    """A ``User`` from a row selected with ``USER_COLUMNS``."""
    return from_row(User, row)


def load_user(ctx: seahaven.Ctx, user_id: str) -> User | None:
    """The user with this id, or ``None``."""
    row = ctx.db.one(f"SELECT {USER_COLUMNS} FROM users AS u WHERE u.id = ?", user_id)
    return None if row is None else user_from_row(row)


def channel_from_row(row: Mapping[str, Any]) -> Channel:
    """A ``Channel`` from a row selected with ``CHANNEL_SELECT``."""
    return from_row(Channel, row)


def load_channel(ctx: seahaven.Ctx, channel_id: str, actor_id: str) -> Channel:
    """The channel with this id as ``actor_id`` sees it; the caller has checked it exists."""
    row = ctx.db.one(f"{CHANNEL_SELECT} WHERE c.id = ?", actor_id, channel_id)
    if row is None:
        raise LookupError(f"channel {channel_id} vanished inside its own call")
    return channel_from_row(row)


def messages_from_rows(ctx: seahaven.Ctx, rows: Sequence[Mapping[str, Any]]) -> list[Message]:
    """``Message``s from rows selected with ``MESSAGE_SELECT``, reactions included."""
    if not rows:
        return []
    ids = [str(row["id"]) for row in rows]
    # Emojis appear in the order they were first added; each one's people likewise.
    reaction_rows = ctx.db.rows(
        "SELECT message_id, emoji, user_id FROM reactions "
        "WHERE message_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY message_id, created_at, emoji, user_id",
        json.dumps(ids),
    )
    grouped: dict[str, dict[str, list[str]]] = {}
    for reaction in reaction_rows:
        by_emoji = grouped.setdefault(str(reaction["message_id"]), {})
        by_emoji.setdefault(str(reaction["emoji"]), []).append(str(reaction["user_id"]))
    return [
        from_row(
            Message,
            row,
            deleted=row["deleted_at"] is not None,
            reactions=[
                Reaction(emoji=emoji, count=len(users), user_ids=users)
                for emoji, users in grouped.get(str(row["id"]), {}).items()
            ],
        )
        for row in rows
    ]


def load_message(ctx: seahaven.Ctx, message_id: str) -> Message:
    """The message with this id; the caller has checked it exists."""
    row = ctx.db.one(f"{MESSAGE_SELECT} WHERE m.id = ?", message_id)
    if row is None:
        raise LookupError(f"message {message_id} vanished inside its own call")
    return messages_from_rows(ctx, [row])[0]
