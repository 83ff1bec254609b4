"""The one write path: every row the chat world writes goes through these functions.

Tools call them with the instance clock's reading; the fixture generator calls
them inside ``inst.bulk()`` with historical instants, so a fixture's rows obey
the same invariants as an agent's (ids, per-channel ``ts``, reply counts,
``#general`` membership). None of them checks permissions or visibility: that
is the tools' job, done before they get here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import seahaven

__all__ = [
    "add_member",
    "add_reaction",
    "archive_channel",
    "deactivate_user",
    "edit_message",
    "insert_channel",
    "insert_message",
    "insert_user",
    "mark_message_deleted",
    "message_ts",
    "mint_id",
    "remove_member",
    "remove_reaction",
    "set_topic",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# Prefix and table per kind of id; the table is where uniqueness is checked.
_ID_TABLES = {"U": "users", "C": "channels", "M": "messages"}


def mint_id(ctx: seahaven.Ctx, prefix: str) -> str:
    """A fresh id such as U3F9A0C1B2D, drawn from the instance's seeded stream."""
    table = _ID_TABLES[prefix]
    while True:
        candidate = prefix + ctx.ids.uuid().replace("-", "")[:10].upper()
        # Forty random bits make a clash rare, not impossible; a retry draws
        # from the same seeded stream, so it replays too.
        if ctx.db.one(f"SELECT 1 FROM {table} WHERE id = ?", candidate) is None:
            return candidate


def _micros(at: str) -> int:
    return (datetime.fromisoformat(at) - _EPOCH) // _MICROSECOND


def message_ts(ctx: seahaven.Ctx, channel_id: str, at: str) -> str:
    """The ``ts`` for a message posted to ``channel_id`` at ``at``: unique and increasing.

    A ``ts`` is the posting instant in microseconds, moved one microsecond past
    the channel's latest when two messages share an instant (a fixed clock, or
    one call posting twice), so history always has one order.
    """
    micros = _micros(at)
    latest = ctx.db.one("SELECT max(ts) AS ts FROM messages WHERE channel_id = ?", channel_id)
    if latest is not None and latest["ts"] is not None:
        seconds, _, fraction = str(latest["ts"]).partition(".")
        micros = max(micros, int(seconds) * 1_000_000 + int(fraction) + 1)
    return f"{micros // 1_000_000:010d}.{micros % 1_000_000:06d}"


def insert_user(
    ctx: seahaven.Ctx,
    *,
    handle: str,
    display_name: str,
    title: str,
    timezone: str,
    role: str,
    at: str,
    deactivated: bool = False,
) -> str:
    """Create an account; an active one joins ``#general`` when the workspace has one."""
    user_id = mint_id(ctx, "U")
    ctx.db.execute(
        "INSERT INTO users (id, handle, display_name, title, timezone, role, deactivated, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        user_id,
        handle,
        display_name,
        title,
        timezone,
        role,
        int(deactivated),
        at,
    )
    general = ctx.db.one("SELECT id FROM channels WHERE is_general = 1")
    if general is not None and not deactivated:
        add_member(ctx, str(general["id"]), user_id, at)
    return user_id


def deactivate_user(ctx: seahaven.Ctx, user_id: str) -> None:
    """Deactivate an account; its memberships and messages stay, as in the real product."""
    ctx.db.execute("UPDATE users SET deactivated = 1 WHERE id = ?", user_id)


def insert_channel(
    ctx: seahaven.Ctx,
    *,
    name: str,
    is_private: bool,
    creator_id: str,
    topic: str,
    purpose: str,
    at: str,
    is_general: bool = False,
) -> str:
    """Create a channel with its creator as the first member."""
    channel_id = mint_id(ctx, "C")
    ctx.db.execute(
        "INSERT INTO channels (id, name, is_private, is_general, topic, topic_set_by, "
        "topic_set_at, purpose, is_archived, archived_at, archived_by, creator_id, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, NULL, ?, ?)",
        channel_id,
        name,
        int(is_private),
        int(is_general),
        topic,
        creator_id if topic else None,
        at if topic else None,
        purpose,
        creator_id,
        at,
    )
    add_member(ctx, channel_id, creator_id, at)
    return channel_id


def add_member(ctx: seahaven.Ctx, channel_id: str, user_id: str, at: str) -> None:
    """Add one member to a channel."""
    ctx.db.execute(
        "INSERT INTO memberships (channel_id, user_id, joined_at) VALUES (?, ?, ?)",
        channel_id,
        user_id,
        at,
    )


def remove_member(ctx: seahaven.Ctx, channel_id: str, user_id: str) -> None:
    """Take one member out of a channel."""
    ctx.db.execute(
        "DELETE FROM memberships WHERE channel_id = ? AND user_id = ?", channel_id, user_id
    )


def set_topic(ctx: seahaven.Ctx, channel_id: str, topic: str, by: str, at: str) -> None:
    """Replace a channel's topic, recording who set it and when."""
    ctx.db.execute(
        "UPDATE channels SET topic = ?, topic_set_by = ?, topic_set_at = ? WHERE id = ?",
        topic,
        by,
        at,
        channel_id,
    )


def archive_channel(ctx: seahaven.Ctx, channel_id: str, by: str, at: str) -> None:
    """Archive a channel; its members and history stay."""
    ctx.db.execute(
        "UPDATE channels SET is_archived = 1, archived_at = ?, archived_by = ? WHERE id = ?",
        at,
        by,
        channel_id,
    )


def insert_message(
    ctx: seahaven.Ctx,
    *,
    channel_id: str,
    user_id: str,
    text: str,
    at: str,
    thread_root_id: str | None = None,
) -> str:
    """Post a message, or a reply when ``thread_root_id`` names the thread's first message."""
    message_id = mint_id(ctx, "M")
    ctx.db.execute(
        "INSERT INTO messages (id, channel_id, user_id, ts, thread_root_id, text, reply_count, "
        "last_reply_at, created_at, edited_at, deleted_at) "
        "VALUES (?, ?, ?, ?, ?, ?, 0, NULL, ?, NULL, NULL)",
        message_id,
        channel_id,
        user_id,
        message_ts(ctx, channel_id, at),
        thread_root_id,
        text,
        at,
    )
    if thread_root_id is not None:
        ctx.db.execute(
            "UPDATE messages SET reply_count = reply_count + 1, last_reply_at = ? WHERE id = ?",
            at,
            thread_root_id,
        )
    return message_id


def edit_message(ctx: seahaven.Ctx, message_id: str, text: str, at: str) -> None:
    """Replace a message's text and stamp it edited."""
    ctx.db.execute("UPDATE messages SET text = ?, edited_at = ? WHERE id = ?", text, at, message_id)


def mark_message_deleted(ctx: seahaven.Ctx, message_id: str, at: str) -> None:
    """Delete a message: clear its text, stamp it, and take it off its thread's reply count."""
    row = ctx.db.one("SELECT thread_root_id FROM messages WHERE id = ?", message_id)
    ctx.db.execute("UPDATE messages SET text = '', deleted_at = ? WHERE id = ?", at, message_id)
    root = None if row is None else row["thread_root_id"]
    if root is not None:
        ctx.db.execute(
            "UPDATE messages SET reply_count = reply_count - 1, last_reply_at = ("
            "SELECT max(created_at) FROM messages WHERE thread_root_id = ? "
            "AND deleted_at IS NULL) WHERE id = ?",
            root,
            root,
        )


def add_reaction(ctx: seahaven.Ctx, message_id: str, user_id: str, emoji: str, at: str) -> None:
    """Record one person's emoji on one message."""
    ctx.db.execute(
        "INSERT INTO reactions (message_id, emoji, user_id, created_at) VALUES (?, ?, ?, ?)",
        message_id,
        emoji,
        user_id,
        at,
    )


def remove_reaction(ctx: seahaven.Ctx, message_id: str, user_id: str, emoji: str) -> None:
    """Take one person's emoji off one message."""
    ctx.db.execute(
        "DELETE FROM reactions WHERE message_id = ? AND emoji = ? AND user_id = ?",
        message_id,
        emoji,
        user_id,
    )
