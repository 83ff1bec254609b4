"""The argument types every tool spells its parameters with, declared once.

The ``Literal`` types say again what the schema's ``CHECK`` constraints say, deliberately: the
constraint guards the table, and the ``Literal`` puts the allowed values in the tool list, so an
agent reads them before it calls. Each is a plain assignment rather than a ``type`` statement,
which pydantic would publish as a ``$ref`` into ``$defs`` instead of inline. Each annotated
type carries the description an agent reads in the tool's JSON schema.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AwareDatetime, Field

__all__ = [
    "OPEN_STATUSES",
    "Actor",
    "Color",
    "CommentBody",
    "Cursor",
    "Date",
    "Description",
    "DueAt",
    "Email",
    "Estimate",
    "IssueId",
    "IssueKey",
    "IssueStatus",
    "LabelId",
    "LabelName",
    "Limit",
    "Name",
    "Priority",
    "ProjectId",
    "ProjectState",
    "Role",
    "SearchQuery",
    "TeamId",
    "TeamKey",
    "Title",
    "UserId",
]

IssueStatus = Annotated[
    Literal["backlog", "todo", "in_progress", "done", "canceled"],
    Field(description="An issue's status; backlog, todo and in_progress are open ones."),
]
OPEN_STATUSES: tuple[str, ...] = ("backlog", "todo", "in_progress")
"""The statuses of an issue still being worked on; ``done`` and ``canceled`` close it."""

Role = Annotated[
    Literal["admin", "member", "viewer"],
    Field(description="A user's role: an admin manages the workspace, a viewer only reads."),
]
ProjectState = Annotated[
    Literal["planned", "active", "done"],
    Field(description="A project's state: planned, active, or done."),
]

UserId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="A user's id, such as u_3. list_users gives every user's id.",
    ),
]
Actor = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="The user id this write is recorded as done by, such as u_3. Leave it out "
        "to act as this session's user.",
    ),
]
TeamId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="A team's id, as list_teams or get_team returns it (not its key).",
    ),
]
ProjectId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="A project's id, as list_projects or an issue's project_id gives it.",
    ),
]
IssueId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="An issue's id, the `id` field get_issue returns. Not its key: to act on "
        "ENG-12, call get_issue(key='ENG-12') first and pass its id.",
    ),
]
LabelId = Annotated[
    str,
    Field(min_length=1, max_length=64, description="A label's id, as list_labels returns it."),
]
IssueKey = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z]{2,5}-[0-9]{1,9}$",
        description="An issue key: the team's key, a hyphen and the issue's number, such as "
        "ENG-12.",
    ),
]
TeamKey = Annotated[
    str,
    Field(
        pattern=r"^[A-Z]{2,5}$",
        description="A team key: 2 to 5 capital letters, such as ENG. Every issue key of the "
        "team starts with it.",
    ),
]
Email = Annotated[
    str,
    Field(
        pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
        max_length=254,
        description="An email address, such as ada@example.com. Unique in the workspace.",
    ),
]
Name = Annotated[
    str,
    Field(min_length=1, max_length=120, pattern=r"\S", description="A name, 1 to 120 characters."),
]
LabelName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=40,
        pattern=r"\S",
        description="A label name, such as bug or billing: 1 to 40 characters, unique in its team.",
    ),
]
Title = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        pattern=r"\S",
        description="A one-line title, 1 to 200 characters.",
    ),
]
Description = Annotated[
    str, Field(max_length=20_000, description="Longer text in Markdown; may be empty.")
]
CommentBody = Annotated[
    str,
    Field(
        min_length=1,
        max_length=20_000,
        pattern=r"\S",
        description="The comment, in Markdown, 1 to 20000 characters.",
    ),
]
Color = Annotated[
    str,
    Field(
        pattern=r"^#[0-9A-Fa-f]{6}$",
        description="A colour as #rrggbb hex, such as #e5484d.",
    ),
]
Priority = Annotated[
    int,
    Field(ge=0, le=4, description="Priority: 0 none, 1 urgent, 2 high, 3 medium, 4 low."),
]
Estimate = Annotated[int, Field(ge=0, le=100, description="An estimate in points, 0 to 100.")]
Date = Annotated[
    str,
    Field(
        pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        description="A calendar date as YYYY-MM-DD, such as 2026-07-15.",
    ),
]
DueAt = Annotated[
    AwareDatetime,
    Field(
        description="When the issue is due: an ISO-8601 instant with its offset, such as "
        "2026-06-15T17:00:00Z.",
    ),
]
Limit = Annotated[int, Field(ge=1, le=100, description="How many to return, 1 to 100.")]
Cursor = Annotated[
    str,
    Field(
        min_length=1,
        max_length=2_000,
        description="The next_cursor of the previous page, unchanged. Repeat the other "
        "arguments exactly; leave it out for the first page.",
    ),
]
SearchQuery = Annotated[
    str,
    Field(
        min_length=1,
        max_length=500,
        pattern=r"\S",
        description="What to look for in titles and descriptions. Plain words must all match "
        '(word endings are matched loosely); "a phrase" in double quotes, word* for a prefix, '
        "and OR, NOT between terms are FTS5 query syntax.",
    ),
]
