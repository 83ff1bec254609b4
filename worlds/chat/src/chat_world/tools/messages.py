"""Messages: posting, replying in threads, reading history, editing and deleting."""

from __future__ import annotations

import seahaven

from chat_world import store
from chat_world.access import (
    Actor,
    MessageRow,
    acting_user,
    require_active,
    require_member,
    visible_channel,
    visible_message,
)
from chat_world.errors import InvalidInput, NotAuthor, NotFound
from chat_world.models import Message, MessagePage, Thread
from chat_world.pagination import decode_cursor, encode_cursor, split_page
from chat_world.types import ChannelId, Cursor, Instant, Limit, MessageId, MessageText, instant_text
from chat_world.views import MESSAGE_SELECT, load_message, messages_from_rows
from chat_world.world import world

__all__ = [
    "delete_message",
    "edit_message",
    "get_message",
    "get_thread",
    "list_messages",
    "post_message",
    "reply_in_thread",
]


@world.tool
def post_message(ctx: seahaven.Ctx, channel_id: ChannelId, text: MessageText) -> Message:
    """Post a message to a channel you are a member of, and return it.

    Join a public channel before posting in it (NOT_IN_CHANNEL otherwise);
    archived channels refuse new messages. To answer a particular message,
    reply in its thread instead.
    """
    actor = acting_user(ctx)
    channel = visible_channel(ctx, channel_id, actor)
    require_active(channel)
    require_member(ctx, channel, actor)
    message_id = store.insert_message(
        ctx, channel_id=channel.id, user_id=actor.id, text=text, at=ctx.clock.iso()
    )
    return load_message(ctx, message_id)


def _thread_root(ctx: seahaven.Ctx, message_id: str, actor: Actor) -> MessageRow:
    """The first message of the thread ``message_id`` belongs to, as the actor sees it."""
    message, _ = visible_message(ctx, message_id, actor, allow_deleted=True)
    if message.thread_root_id is not None:
        if message.deleted:
            raise NotFound("message", message_id)
        message, _ = visible_message(ctx, message.thread_root_id, actor, allow_deleted=True)
    return message


@world.tool
def reply_in_thread(ctx: seahaven.Ctx, message_id: MessageId, text: MessageText) -> Message:
    """Reply in the thread under a message, and return the reply.

    message_id is the message you are answering; if it is itself a reply, the
    answer goes into the same thread. You must be a member of the channel.
    """
    actor = acting_user(ctx)
    root = _thread_root(ctx, message_id, actor)
    if root.deleted:
        raise NotFound("message", root.id, "it was deleted, so its thread takes no new replies")
    channel = visible_channel(ctx, root.channel_id, actor)
    require_active(channel)
    require_member(ctx, channel, actor)
    reply_id = store.insert_message(
        ctx,
        channel_id=channel.id,
        user_id=actor.id,
        text=text,
        at=ctx.clock.iso(),
        thread_root_id=root.id,
    )
    return load_message(ctx, reply_id)


@world.tool
def list_messages(
    ctx: seahaven.Ctx,
    channel_id: ChannelId,
    limit: Limit = 50,
    cursor: Cursor | None = None,
    before: Instant | None = None,
    after: Instant | None = None,
) -> MessagePage:
    """Read a channel's history, newest first: the messages posted to the channel itself.

    Thread replies are not listed here; a message with replies shows reply_count,
    and reading its thread shows them. after and before narrow the history to messages
    posted at or after `after` and strictly before `before`. Messages are ordered
    by ts (their posting order), newest first, with the id breaking ties. Works for
    any public channel, joined or not, and private channels you are a member of.
    Returns a page and next_cursor; when next_cursor is not null, call again with
    it and the same other arguments for older messages.
    """
    actor = acting_user(ctx)
    channel = visible_channel(ctx, channel_id, actor)
    before_text = instant_text(before) if before is not None else None
    after_text = instant_text(after) if after is not None else None
    if before_text is not None and after_text is not None and after_text >= before_text:
        raise InvalidInput.field("after", "must be earlier than before")
    scope = ("list_messages", channel.id, before_text, after_text)
    position = decode_cursor(cursor, scope, (str, str)) if cursor is not None else None
    rows = ctx.db.rows(
        f"{MESSAGE_SELECT} WHERE m.channel_id = ? AND m.thread_root_id IS NULL "
        # A deleted message stays in history only as the tombstone of a live thread.
        "AND (m.deleted_at IS NULL OR m.reply_count > 0) "
        "AND (? IS NULL OR m.created_at < ?) AND (? IS NULL OR m.created_at >= ?) "
        "AND (? IS NULL OR (m.ts, m.id) < (?, ?)) "
        "ORDER BY m.ts DESC, m.id DESC LIMIT ?",
        channel.id,
        before_text,
        before_text,
        after_text,
        after_text,
        None if position is None else 1,
        None if position is None else position[0],
        None if position is None else position[1],
        limit + 1,
    )
    page, more = split_page(rows, limit)
    last = page[-1] if page else None
    return MessagePage(
        channel_id=channel.id,
        messages=messages_from_rows(ctx, page),
        next_cursor=encode_cursor(scope, [last["ts"], last["id"]]) if more and last else None,
    )


@world.tool
def get_message(ctx: seahaven.Ctx, message_id: MessageId) -> Message:
    """Fetch one message by id, with its reactions and reply count."""
    actor = acting_user(ctx)
    message, _ = visible_message(ctx, message_id, actor)
    return load_message(ctx, message.id)


@world.tool
def get_thread(
    ctx: seahaven.Ctx,
    message_id: MessageId,
    limit: Limit = 50,
    cursor: Cursor | None = None,
) -> Thread:
    """Read a thread: its first message and its replies, oldest first.

    message_id may be the thread's first message or any reply in it. A deleted
    first message whose thread still has replies comes back empty, with deleted
    true. Returns a page of replies and next_cursor; when next_cursor is not null,
    call again with it and the same message_id for later replies.
    """
    actor = acting_user(ctx)
    root = _thread_root(ctx, message_id, actor)
    parent = load_message(ctx, root.id)
    if parent.deleted and parent.reply_count == 0:
        raise NotFound("message", message_id)
    scope = ("get_thread", root.id)
    after_ts, after_id = (
        decode_cursor(cursor, scope, (str, str)) if cursor is not None else ("", "")
    )
    rows = ctx.db.rows(
        f"{MESSAGE_SELECT} WHERE m.thread_root_id = ? AND m.deleted_at IS NULL "
        "AND (m.ts, m.id) > (?, ?) ORDER BY m.ts, m.id LIMIT ?",
        root.id,
        after_ts,
        after_id,
        limit + 1,
    )
    page, more = split_page(rows, limit)
    last = page[-1] if page else None
    return Thread(
        parent=parent,
        replies=messages_from_rows(ctx, page),
        next_cursor=encode_cursor(scope, [last["ts"], last["id"]]) if more and last else None,
    )


def _own_message(ctx: seahaven.Ctx, message_id: str, actor: Actor) -> MessageRow:
    """A live message the actor wrote, in a channel that can still change."""
    message, channel = visible_message(ctx, message_id, actor)
    require_active(channel)
    if message.user_id != actor.id:
        raise NotAuthor(message_id)
    return message


@world.tool
def edit_message(ctx: seahaven.Ctx, message_id: MessageId, text: MessageText) -> Message:
    """Replace the text of a message you wrote, and return it marked edited.

    Only the author can edit a message (NOT_AUTHOR otherwise).
    """
    actor = acting_user(ctx)
    message = _own_message(ctx, message_id, actor)
    store.edit_message(ctx, message.id, text, ctx.clock.iso())
    return load_message(ctx, message.id)


@world.tool
def delete_message(ctx: seahaven.Ctx, message_id: MessageId) -> Message:
    """Delete a message you wrote, and return what is left of it.

    Only the author can delete a message (NOT_AUTHOR otherwise). The text is gone
    for good; a message with replies stays in the channel as an empty, deleted
    placeholder so its thread can still be read.
    """
    actor = acting_user(ctx)
    message = _own_message(ctx, message_id, actor)
    store.mark_message_deleted(ctx, message.id, ctx.clock.iso())
    return load_message(ctx, message.id)
