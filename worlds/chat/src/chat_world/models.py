"""What the tools return: strict, frozen pydantic models.

A caller in process (a world that adds this one) receives these objects with
their types intact; over the wire they serialise to the same fields.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "Channel",
    "ChannelPage",
    "Message",
    "MessagePage",
    "Reaction",
    "SearchMatch",
    "SearchResults",
    "Thread",
    "User",
    "UserPage",
]


class _Result(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")


class User(_Result):
    """One person's account."""

    id: str
    handle: str
    display_name: str
    title: str
    timezone: str
    role: Literal["owner", "admin", "member"]
    deactivated: bool
    created_at: str


class Channel(_Result):
    """One channel, as the acting user sees it."""

    id: str
    name: str
    is_private: bool
    is_general: bool
    is_archived: bool
    topic: str
    purpose: str
    creator_id: str
    created_at: str
    archived_at: str | None
    member_count: int
    # Whether the acting user is a member.
    is_member: bool


class Reaction(_Result):
    """One emoji on a message, and who added it, earliest first."""

    emoji: str
    count: int
    user_ids: list[str]


class Message(_Result):
    """One message. A deleted message that still has replies is kept as an empty tombstone."""

    id: str
    channel_id: str
    user_id: str
    user_handle: str
    ts: str
    text: str
    # The thread's first message, for a reply; None for a message posted to the channel.
    thread_root_id: str | None
    reply_count: int
    last_reply_at: str | None
    created_at: str
    edited_at: str | None
    deleted: bool
    reactions: list[Reaction]


class UserPage(_Result):
    """A page of users; pass next_cursor back for the next one, None when there is none."""

    users: list[User]
    next_cursor: str | None


class ChannelPage(_Result):
    """A page of channels; pass next_cursor back for the next one, None when there is none."""

    channels: list[Channel]
    next_cursor: str | None


class MessagePage(_Result):
    """A page of a channel's history, newest first."""

    channel_id: str
    messages: list[Message]
    next_cursor: str | None


class Thread(_Result):
    """A thread: its first message and a page of its replies, oldest first."""

    parent: Message
    replies: list[Message]
    next_cursor: str | None


class SearchMatch(_Result):
    """One message that matched a search, with the matching words marked *like this*."""

    message: Message
    channel_name: str
    snippet: str
    # Higher is a better match; only comparable within one search.
    score: float


class SearchResults(_Result):
    """A page of search matches, best first."""

    query: str
    total: int
    matches: list[SearchMatch]
    next_cursor: str | None
