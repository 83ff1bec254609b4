"""Channels: finding them, making them, and who is in them."""

from __future__ import annotations

import seahaven

from chat_world import store
from chat_world.access import (
    VISIBLE_TO,
    acting_user,
    is_member,
    require_active,
    require_member,
    visible_channel,
)
from chat_world.errors import (
    AlreadyInChannel,
    NameTaken,
    NotFound,
    NotInChannel,
    RestrictedAction,
    UserDeactivated,
)
from chat_world.models import Channel, ChannelPage, UserPage
from chat_world.pagination import decode_cursor, encode_cursor, split_page
from chat_world.types import (
    ChannelId,
    ChannelName,
    ChannelNameRef,
    Cursor,
    IncludeArchived,
    IncludePrivate,
    IsPrivate,
    Limit,
    Purpose,
    Topic,
    UserId,
)
from chat_world.views import (
    CHANNEL_SELECT,
    USER_COLUMNS,
    channel_from_row,
    load_channel,
    user_from_row,
)
from chat_world.world import world

__all__ = [
    "archive_channel",
    "create_channel",
    "get_channel",
    "invite_to_channel",
    "join_channel",
    "leave_channel",
    "list_channels",
    "list_members",
    "lookup_channel_by_name",
    "set_channel_topic",
]


@world.tool
def list_channels(
    ctx: seahaven.Ctx,
    limit: Limit = 100,
    cursor: Cursor | None = None,
    include_private: IncludePrivate = False,
    include_archived: IncludeArchived = False,
) -> ChannelPage:
    """List channels alphabetically by name, with whether you are a member of each.

    By default only public, unarchived channels are listed. include_private adds
    the private channels you are a member of (others are never shown);
    include_archived adds archived channels. Returns a page and next_cursor; when
    next_cursor is not null, call again with it and the same other arguments.
    """
    actor = acting_user(ctx)
    scope = ("list_channels", include_private, include_archived)
    after_name, after_id = (
        decode_cursor(cursor, scope, (str, str)) if cursor is not None else ("", "")
    )
    rows = ctx.db.rows(
        f"{CHANNEL_SELECT} WHERE {VISIBLE_TO} AND (? OR c.is_private = 0) "
        "AND (? OR c.is_archived = 0) AND (c.name, c.id) > (?, ?) "
        "ORDER BY c.name, c.id LIMIT ?",
        actor.id,
        actor.id,
        int(include_private),
        int(include_archived),
        after_name,
        after_id,
        limit + 1,
    )
    page, more = split_page(rows, limit)
    last = page[-1] if page else None
    return ChannelPage(
        channels=[channel_from_row(row) for row in page],
        next_cursor=encode_cursor(scope, [last["name"], last["id"]]) if more and last else None,
    )


@world.tool
def get_channel(ctx: seahaven.Ctx, channel_id: ChannelId) -> Channel:
    """Fetch one channel by id: name, privacy, topic, purpose, archive state and member count."""
    actor = acting_user(ctx)
    channel = visible_channel(ctx, channel_id, actor)
    return load_channel(ctx, channel.id, actor.id)


@world.tool
def lookup_channel_by_name(ctx: seahaven.Ctx, name: ChannelNameRef) -> Channel:
    """Find a channel by its name (with or without the #), such as #engineering."""
    actor = acting_user(ctx)
    bare = name.removeprefix("#")
    row = ctx.db.one(
        f"{CHANNEL_SELECT} WHERE c.name = ? AND {VISIBLE_TO}", actor.id, bare, actor.id
    )
    if row is None:
        raise NotFound("channel", f"#{bare}", "list the channels you can see to find its name")
    return channel_from_row(row)


@world.tool
def create_channel(
    ctx: seahaven.Ctx,
    name: ChannelName,
    is_private: IsPrivate = False,
    topic: Topic = "",
    purpose: Purpose = "",
) -> Channel:
    """Create a channel, with you as its first member, and return it.

    A private channel is visible only to its members, who get in by invitation.
    Names are unique across live and archived channels: NAME_TAKEN when one is
    in use.
    """
    actor = acting_user(ctx)
    if ctx.db.one("SELECT 1 FROM channels WHERE name = ?", name) is not None:
        raise NameTaken("channel name", name)
    channel_id = store.insert_channel(
        ctx,
        name=name,
        is_private=is_private,
        creator_id=actor.id,
        topic=topic.strip(),
        purpose=purpose.strip(),
        at=ctx.clock.iso(),
    )
    return load_channel(ctx, channel_id, actor.id)


@world.tool
def archive_channel(ctx: seahaven.Ctx, channel_id: ChannelId) -> Channel:
    """Archive a channel: it stays readable and searchable, but nothing in it can change.

    Only the channel's creator or a workspace admin can archive it, and #general
    can never be archived.
    """
    actor = acting_user(ctx)
    channel = visible_channel(ctx, channel_id, actor)
    require_active(channel)
    if channel.is_general:
        raise RestrictedAction("#general cannot be archived", "general_channel")
    if channel.creator_id != actor.id and not actor.is_admin:
        raise RestrictedAction(
            f"only the creator of #{channel.name} or a workspace admin can archive it",
            "creator_or_admin_only",
        )
    store.archive_channel(ctx, channel.id, actor.id, ctx.clock.iso())
    return load_channel(ctx, channel.id, actor.id)


@world.tool
def set_channel_topic(ctx: seahaven.Ctx, channel_id: ChannelId, topic: Topic) -> Channel:
    """Set the topic shown at the top of a channel you are a member of; empty clears it."""
    actor = acting_user(ctx)
    channel = visible_channel(ctx, channel_id, actor)
    require_active(channel)
    require_member(ctx, channel, actor)
    store.set_topic(ctx, channel.id, topic.strip(), actor.id, ctx.clock.iso())
    return load_channel(ctx, channel.id, actor.id)


@world.tool
def join_channel(ctx: seahaven.Ctx, channel_id: ChannelId) -> Channel:
    """Join a public channel so you can post in it. Private channels need an invitation."""
    actor = acting_user(ctx)
    channel = visible_channel(ctx, channel_id, actor)
    require_active(channel)
    if is_member(ctx, channel.id, actor.id):
        raise AlreadyInChannel(channel.id, channel.name, actor.id)
    store.add_member(ctx, channel.id, actor.id, ctx.clock.iso())
    return load_channel(ctx, channel.id, actor.id)


@world.tool
def leave_channel(ctx: seahaven.Ctx, channel_id: ChannelId) -> Channel:
    """Leave a channel you are a member of; nobody can leave #general.

    A private channel you leave disappears from your view until a member invites
    you back.
    """
    actor = acting_user(ctx)
    channel = visible_channel(ctx, channel_id, actor)
    require_active(channel)
    if channel.is_general:
        raise RestrictedAction("nobody can leave #general", "general_channel")
    if not is_member(ctx, channel.id, actor.id):
        raise NotInChannel(channel.id, channel.name, hint="")
    store.remove_member(ctx, channel.id, actor.id)
    return load_channel(ctx, channel.id, actor.id)


@world.tool
def invite_to_channel(ctx: seahaven.Ctx, channel_id: ChannelId, user_id: UserId) -> Channel:
    """Add someone to a channel you are a member of (the way into a private channel)."""
    actor = acting_user(ctx)
    channel = visible_channel(ctx, channel_id, actor)
    require_active(channel)
    require_member(ctx, channel, actor)
    invitee = ctx.db.one("SELECT id, handle, deactivated FROM users WHERE id = ?", user_id)
    if invitee is None:
        raise NotFound("user", user_id, "list users or look up a handle to find an id")
    if invitee["deactivated"]:
        raise UserDeactivated(user_id, str(invitee["handle"]))
    if is_member(ctx, channel.id, user_id):
        raise AlreadyInChannel(channel.id, channel.name, user_id)
    store.add_member(ctx, channel.id, user_id, ctx.clock.iso())
    return load_channel(ctx, channel.id, actor.id)


@world.tool
def list_members(
    ctx: seahaven.Ctx,
    channel_id: ChannelId,
    limit: Limit = 100,
    cursor: Cursor | None = None,
) -> UserPage:
    """List the active members of a channel you can see, alphabetically by handle.

    Returns a page and next_cursor; when next_cursor is not null, call again with
    it and the same channel_id.
    """
    actor = acting_user(ctx)
    channel = visible_channel(ctx, channel_id, actor)
    scope = ("list_members", channel.id)
    after_handle, after_id = (
        decode_cursor(cursor, scope, (str, str)) if cursor is not None else ("", "")
    )
    rows = ctx.db.rows(
        f"SELECT {USER_COLUMNS} FROM memberships AS m JOIN users AS u ON u.id = m.user_id "
        "WHERE m.channel_id = ? AND u.deactivated = 0 AND (u.handle, u.id) > (?, ?) "
        "ORDER BY u.handle, u.id LIMIT ?",
        channel.id,
        after_handle,
        after_id,
        limit + 1,
    )
    page, more = split_page(rows, limit)
    last = page[-1] if page else None
    return UserPage(
        users=[user_from_row(row) for row in page],
        next_cursor=encode_cursor(scope, [last["handle"], last["id"]]) if more and last else None,
    )
