"""Reactions: one emoji per person per message."""

from __future__ import annotations

import seahaven

from chat_world import store
from chat_world.access import (
    acting_user,
    require_active,
    require_member,
    visible_message,
)
from chat_world.errors import AlreadyReacted, NoReaction
from chat_world.models import Message
from chat_world.types import Emoji, MessageId
from chat_world.views import load_message
from chat_world.world import world

__all__ = ["add_reaction", "remove_reaction"]


def _bare(emoji: str) -> str:
    # People write :tada: as often as tada; the product stores the bare name.
    return emoji.strip(":")


@world.tool
def add_reaction(ctx: seahaven.Ctx, message_id: MessageId, emoji: Emoji) -> Message:
    """React to a message with an emoji, such as thumbsup or :eyes:, and return the message.

    You must be a member of the message's channel. Each person can add each emoji
    once per message (ALREADY_REACTED otherwise).
    """
    actor = acting_user(ctx)
    message, channel = visible_message(ctx, message_id, actor)
    require_active(channel)
    require_member(ctx, channel, actor)
    name = _bare(emoji)
    existing = ctx.db.one(
        "SELECT 1 FROM reactions WHERE message_id = ? AND emoji = ? AND user_id = ?",
        message.id,
        name,
        actor.id,
    )
    if existing is not None:
        raise AlreadyReacted(message.id, name)
    store.add_reaction(ctx, message.id, actor.id, name, ctx.clock.iso())
    return load_message(ctx, message.id)


@world.tool
def remove_reaction(ctx: seahaven.Ctx, message_id: MessageId, emoji: Emoji) -> Message:
    """Take back an emoji reaction you added to a message, and return the message.

    NO_REACTION when you had not reacted with that emoji.
    """
    actor = acting_user(ctx)
    message, channel = visible_message(ctx, message_id, actor)
    require_active(channel)
    name = _bare(emoji)
    existing = ctx.db.one(
        "SELECT 1 FROM reactions WHERE message_id = ? AND emoji = ? AND user_id = ?",
        message.id,
        name,
        actor.id,
    )
    if existing is None:
        raise NoReaction(message.id, name)
    store.remove_reaction(ctx, message.id, actor.id, name)
    return load_message(ctx, message.id)
