"""Argument types shared by the tools, declared once so every tool validates alike.

Each carries a description, which is what an agent reads in the tool's JSON
schema, and constraints the framework checks before a tool runs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Literal

from pydantic import AwareDatetime, Field

__all__ = [
    "ChannelId",
    "ChannelName",
    "ChannelNameRef",
    "Cursor",
    "DisplayName",
    "Emoji",
    "Handle",
    "HandleRef",
    "IncludeArchived",
    "IncludeDeactivated",
    "IncludePrivate",
    "Instant",
    "IsPrivate",
    "Limit",
    "MessageId",
    "MessageText",
    "Purpose",
    "Role",
    "SearchLimit",
    "SearchQuery",
    "Timezone",
    "Title",
    "Topic",
    "UserId",
    "instant_text",
]

HANDLE_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"
CHANNEL_NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,79}$"
MAX_MESSAGE_LENGTH = 4000

UserId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="A user's id, such as U3F9A0C1B2D. Find one by listing users or looking "
        "up a handle.",
    ),
]
ChannelId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="A channel's id, such as C8E21D04A7F. Find one by listing channels or "
        "looking up a channel name.",
    ),
]
MessageId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="A message's id, such as M51B07E9C3A, as returned with a channel's "
        "history, a thread or search results.",
    ),
]
Handle = Annotated[
    str,
    Field(
        pattern=HANDLE_PATTERN,
        description="A handle: 1 to 32 lowercase letters, digits, '-' or '_', starting with a "
        "letter or digit, without the @.",
    ),
]
HandleRef = Annotated[
    str,
    Field(
        pattern=r"^@?[a-z0-9][a-z0-9_-]{0,31}$",
        description="A handle, with or without the leading @, such as @maya or maya.",
    ),
]
ChannelName = Annotated[
    str,
    Field(
        pattern=CHANNEL_NAME_PATTERN,
        description="A channel name: 1 to 80 lowercase letters, digits, '-' or '_', starting "
        "with a letter or digit, without the #.",
    ),
]
ChannelNameRef = Annotated[
    str,
    Field(
        pattern=r"^#?[a-z0-9][a-z0-9_-]{0,79}$",
        description="A channel name, with or without the leading #, such as #general.",
    ),
]
DisplayName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=80,
        pattern=r"\S",
        description="The name colleagues see, such as Maya Okafor. 1 to 80 characters.",
    ),
]
Title = Annotated[
    str, Field(max_length=100, description="A job title, such as Backend Engineer. Optional.")
]
Timezone = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$",
        max_length=64,
        description="A time zone label such as Europe/Berlin or UTC.",
    ),
]
Role = Annotated[
    Literal["member", "admin"],
    Field(description="member, or admin to let the account administer the workspace."),
]
IsPrivate = Annotated[
    bool,
    Field(description="true for a channel only its members can see and find; false for public."),
]
IncludePrivate = Annotated[
    bool,
    Field(description="Also list the private channels you are a member of."),
]
IncludeArchived = Annotated[bool, Field(description="Also list archived channels.")]
IncludeDeactivated = Annotated[bool, Field(description="Also list deactivated accounts.")]
Topic = Annotated[
    str,
    Field(max_length=250, description="A channel topic, up to 250 characters; empty clears it."),
]
Purpose = Annotated[
    str, Field(max_length=250, description="What the channel is for, up to 250 characters.")
]
MessageText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_MESSAGE_LENGTH,
        pattern=r"\S",
        description=f"The message text: 1 to {MAX_MESSAGE_LENGTH} characters, not only "
        "whitespace. Mention people as @handle.",
    ),
]
Emoji = Annotated[
    str,
    Field(
        pattern=r"^:?[a-z0-9_+-]{1,64}:?$",
        description="An emoji's short name, with or without colons, such as thumbsup or "
        ":white_check_mark:.",
    ),
]
Limit = Annotated[
    int, Field(ge=1, le=200, description="How many items to return in this page, 1 to 200.")
]
SearchLimit = Annotated[
    int, Field(ge=1, le=200, description="How many matches to return in this page, 1 to 200.")
]
Cursor = Annotated[
    str,
    Field(
        min_length=1,
        max_length=1000,
        description="The next_cursor of the previous page, to continue a listing. Leave it out "
        "for the first page, and pass the other arguments unchanged.",
    ),
]
Instant = Annotated[
    AwareDatetime,
    Field(description="An ISO 8601 instant with a time zone, such as 2026-05-20T14:00:00Z."),
]
SearchQuery = Annotated[
    str,
    Field(
        min_length=1,
        max_length=500,
        description="Words to find; every word must appear. Put an exact phrase in double "
        'quotes ("release freeze") and end a word with * to match its prefix (deploy*).',
    ),
]


def instant_text(moment: datetime) -> str:
    """An ``Instant`` argument in the world's timestamp format, such as 2026-06-01T09:00:00.000Z."""
    utc = moment.astimezone(UTC)
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:"
        f"{utc.second:02d}.{utc.microsecond // 1000:03d}Z"
    )
