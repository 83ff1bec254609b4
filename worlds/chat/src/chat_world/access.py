"""Who the agent acts as, and what that person may see and change.

The rules, in the order every tool applies them:

1. A channel the acting user cannot see does not exist for them: a private
   channel they are not in answers ``NOT_FOUND``, exactly like a channel id
   nobody ever issued, so a tool never confirms that a private channel exists.
2. An archived channel answers ``CHANNEL_ARCHIVED`` to every change.
3. Writing into a channel (posting, replying, reacting, inviting, setting the
   topic) needs membership: ``NOT_IN_CHANNEL`` for a public channel the acting
   user has not joined. Reading a public channel does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import seahaven

from chat_world.errors import ChannelArchived, NoActingUser, NotFound, NotInChannel

__all__ = [
    "ACTING_HANDLE_KEY",
    "ACTING_USER_KEY",
    "VISIBLE_TO",
    "Actor",
    "ChannelRow",
    "MessageRow",
    "acting_user",
    "is_member",
    "require_active",
    "require_member",
    "visible_channel",
    "visible_message",
]

# Where the startup hook leaves the acting user's id and handle. An id of None
# means "the workspace owner", looked up per call: a workspace with no accounts
# yet gets its owner from the first create_user.
ACTING_USER_KEY = "user_id"
ACTING_HANDLE_KEY = "user_handle"

# A predicate on channels AS c, with the acting user's id bound once.
VISIBLE_TO = (
    "(c.is_private = 0 OR EXISTS (SELECT 1 FROM memberships AS vm "
    "WHERE vm.channel_id = c.id AND vm.user_id = ?))"
)


@dataclass(frozen=True, slots=True)
class Actor:
    """The person the agent is acting as for this call."""

    id: str
    handle: str
    role: str

    @property
    def is_admin(self) -> bool:
        """Owners and admins administer the workspace."""
        return self.role in ("owner", "admin")


@dataclass(frozen=True, slots=True)
class ChannelRow:
    """The columns of a channel the access rules need."""

    id: str
    name: str
    is_private: bool
    is_general: bool
    is_archived: bool
    creator_id: str


@dataclass(frozen=True, slots=True)
class MessageRow:
    """The columns of a message the access rules need."""

    id: str
    channel_id: str
    user_id: str
    thread_root_id: str | None
    deleted: bool


def acting_user(ctx: seahaven.Ctx) -> Actor:
    """The acting user: the one named at startup, else the workspace owner."""
    pinned = ctx.state.get(ACTING_USER_KEY)
    if pinned is None:
        row = ctx.db.one("SELECT id, handle, role FROM users WHERE role = 'owner'")
        if row is None:
            raise NoActingUser()
    else:
        row = ctx.db.one("SELECT id, handle, role FROM users WHERE id = ?", pinned)
        if row is None:
            # Only SQL from outside the product (setup_sql, a bulk block) removes
            # an account; the tools never do.
            raise seahaven.WorldBug(
                f"the acting user {pinned} was removed from the workspace after startup; "
                "start a new instance naming an existing user"
            )
    return Actor(id=str(row["id"]), handle=str(row["handle"]), role=str(row["role"]))


def _channel_row(row: dict[str, Any]) -> ChannelRow:
    return ChannelRow(
        id=str(row["id"]),
        name=str(row["name"]),
        is_private=bool(row["is_private"]),
        is_general=bool(row["is_general"]),
        is_archived=bool(row["is_archived"]),
        creator_id=str(row["creator_id"]),
    )


def visible_channel(ctx: seahaven.Ctx, channel_id: str, actor: Actor) -> ChannelRow:
    """The channel, if the acting user can see it; ``NOT_FOUND`` otherwise."""
    row = ctx.db.one(
        "SELECT c.id, c.name, c.is_private, c.is_general, c.is_archived, c.creator_id "
        f"FROM channels AS c WHERE c.id = ? AND {VISIBLE_TO}",
        channel_id,
        actor.id,
    )
    if row is None:
        raise NotFound("channel", channel_id, "list the channels you can see to find its id")
    return _channel_row(row)


def is_member(ctx: seahaven.Ctx, channel_id: str, user_id: str) -> bool:
    """Whether ``user_id`` is a member of ``channel_id``."""
    found = ctx.db.one(
        "SELECT 1 FROM memberships WHERE channel_id = ? AND user_id = ?", channel_id, user_id
    )
    return found is not None


def require_active(channel: ChannelRow) -> None:
    """Refuse a change to an archived channel."""
    if channel.is_archived:
        raise ChannelArchived(channel.id, channel.name)


def require_member(ctx: seahaven.Ctx, channel: ChannelRow, actor: Actor) -> None:
    """Refuse a write by someone outside the channel."""
    if not is_member(ctx, channel.id, actor.id):
        raise NotInChannel(channel.id, channel.name)


def visible_message(
    ctx: seahaven.Ctx, message_id: str, actor: Actor, *, allow_deleted: bool = False
) -> tuple[MessageRow, ChannelRow]:
    """The message and its channel, if the acting user can see both; ``NOT_FOUND`` otherwise."""
    row = ctx.db.one(
        "SELECT m.id, m.channel_id, m.user_id, m.thread_root_id, m.deleted_at, "
        "c.name, c.is_private, c.is_general, c.is_archived, c.creator_id "
        "FROM messages AS m JOIN channels AS c ON c.id = m.channel_id "
        f"WHERE m.id = ? AND {VISIBLE_TO}",
        message_id,
        actor.id,
    )
    if row is None or (row["deleted_at"] is not None and not allow_deleted):
        raise NotFound("message", message_id)
    message = MessageRow(
        id=str(row["id"]),
        channel_id=str(row["channel_id"]),
        user_id=str(row["user_id"]),
        thread_root_id=row["thread_root_id"],
        deleted=row["deleted_at"] is not None,
    )
    channel = _channel_row({**row, "id": row["channel_id"]})
    return message, channel
