"""Row shapes, and the ``require_*`` lookups that turn a missing record into ``NOT_FOUND``.

Every tool answers plain JSON (dicts and lists), typed here as ``TypedDict`` so a caller in
process indexes the same keys an agent reads over the wire. Tools look a record up with
``require_*`` before they write, so the agent reads a sentence it can act on instead of a
foreign key's refusal, which the error handler could only report as ``INTERNAL``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, TypedDict

import seahaven
from projecttracker.errors import NotFound

__all__ = [
    "Comment",
    "Issue",
    "IssueLabel",
    "Label",
    "Member",
    "Project",
    "Team",
    "User",
    "comment_out",
    "issues_out",
    "label_out",
    "project_out",
    "projects_out",
    "require_issue",
    "require_label",
    "require_project",
    "require_team",
    "require_user",
    "team_out",
    "user_out",
]

_KEY = re.compile(r"^[A-Za-z]{2,5}-[0-9]+$")


class User(TypedDict):
    """A person in the workspace."""

    id: str
    email: str
    name: str
    role: str
    created_at: str


class Member(User):
    """A user as a member of one team."""

    joined_at: str


class Team(TypedDict):
    """A team: its key prefixes every issue key it mints."""

    id: str
    key: str
    name: str
    description: str
    member_count: int
    created_at: str


class Project(TypedDict):
    """A project of one team, with how many of its issues are in each status."""

    id: str
    team_id: str
    name: str
    description: str
    state: str
    lead_id: str | None
    target_date: str | None
    issue_counts: dict[str, int]
    created_at: str
    updated_at: str


class Label(TypedDict):
    """A label a team puts on its issues."""

    id: str
    team_id: str
    name: str
    color: str
    description: str
    created_at: str


class IssueLabel(TypedDict):
    """A label as an issue carries it."""

    id: str
    name: str
    color: str


class Issue(TypedDict):
    """An issue, with its labels."""

    id: str
    key: str
    team_id: str
    project_id: str
    title: str
    description: str
    status: str
    priority: int
    assignee_id: str | None
    creator_id: str
    estimate: int | None
    due_at: str | None
    labels: list[IssueLabel]
    created_at: str
    updated_at: str
    completed_at: str | None
    archived_at: str | None


class Comment(TypedDict):
    """A comment on an issue."""

    id: str
    issue_id: str
    author_id: str
    body: str
    created_at: str


# --- rows to shapes -------------------------------------------------------------------------------


def user_out(row: dict[str, Any]) -> User:
    """A ``users`` row as the tools return it."""
    return User(
        id=row["id"],
        email=row["email"],
        name=row["name"],
        role=row["role"],
        created_at=row["created_at"],
    )


def team_out(ctx: seahaven.Ctx, row: dict[str, Any]) -> Team:
    """A ``teams`` row, with its member count."""
    counted = ctx.db.one("SELECT count(*) AS n FROM team_members WHERE team_id = ?", row["id"])
    return Team(
        id=row["id"],
        key=row["key"],
        name=row["name"],
        description=row["description"],
        member_count=int(counted["n"]) if counted else 0,
        created_at=row["created_at"],
    )


def projects_out(ctx: seahaven.Ctx, rows: Sequence[dict[str, Any]]) -> list[Project]:
    """``projects`` rows, each with its issue counts by status, in one query for all of them."""
    counts: dict[str, dict[str, int]] = {str(row["id"]): {} for row in rows}
    if rows:
        for counted in ctx.db.rows(
            "SELECT project_id, status, count(*) AS n FROM issues "
            "WHERE project_id IN (SELECT value FROM json_each(?)) AND archived_at IS NULL "
            "GROUP BY project_id, status ORDER BY project_id, status",
            json.dumps(list(counts)),
        ):
            counts[str(counted["project_id"])][str(counted["status"])] = int(counted["n"])
    return [
        Project(
            id=row["id"],
            team_id=row["team_id"],
            name=row["name"],
            description=row["description"],
            state=row["state"],
            lead_id=row["lead_id"],
            target_date=row["target_date"],
            issue_counts=counts[str(row["id"])],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )
        for row in rows
    ]


def project_out(ctx: seahaven.Ctx, row: dict[str, Any]) -> Project:
    """One ``projects`` row, with its issue counts."""
    return projects_out(ctx, [row])[0]


def label_out(row: dict[str, Any]) -> Label:
    """A ``labels`` row as the tools return it."""
    return Label(
        id=row["id"],
        team_id=row["team_id"],
        name=row["name"],
        color=row["color"],
        description=row["description"],
        created_at=row["created_at"],
    )


def issues_out(ctx: seahaven.Ctx, rows: Sequence[dict[str, Any]]) -> list[Issue]:
    """``issues`` rows with their labels, read in one query for the lot."""
    labels: dict[str, list[IssueLabel]] = {str(row["id"]): [] for row in rows}
    if rows:
        for label in ctx.db.rows(
            "SELECT il.issue_id, l.id, l.name, l.color FROM issue_labels AS il "
            "JOIN labels AS l ON l.id = il.label_id "
            "WHERE il.issue_id IN (SELECT value FROM json_each(?)) ORDER BY l.name, l.id",
            json.dumps(list(labels)),
        ):
            labels[str(label["issue_id"])].append(
                IssueLabel(id=label["id"], name=label["name"], color=label["color"])
            )
    return [
        Issue(
            id=row["id"],
            key=row["key"],
            team_id=row["team_id"],
            project_id=row["project_id"],
            title=row["title"],
            description=row["description"],
            status=row["status"],
            priority=row["priority"],
            assignee_id=row["assignee_id"],
            creator_id=row["creator_id"],
            estimate=row["estimate"],
            due_at=row["due_at"],
            labels=labels[str(row["id"])],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            completed_at=row["completed_at"],
            archived_at=row["archived_at"],
        )
        for row in rows
    ]


def comment_out(row: dict[str, Any]) -> Comment:
    """A ``comments`` row as the tools return it."""
    return Comment(
        id=row["id"],
        issue_id=row["issue_id"],
        author_id=row["author_id"],
        body=row["body"],
        created_at=row["created_at"],
    )


# --- lookups ------------------------------------------------------------------------------------


def require_user(ctx: seahaven.Ctx, user_id: str) -> dict[str, Any]:
    """The ``users`` row of ``user_id``, or ``NOT_FOUND``."""
    row = ctx.db.one("SELECT * FROM users WHERE id = ?", user_id)
    if row is None:
        raise NotFound("user", user_id, "list_users gives every user's id")
    return row


def require_team(ctx: seahaven.Ctx, team_id: str) -> dict[str, Any]:
    """The ``teams`` row of ``team_id``, or ``NOT_FOUND``; a key in its place is pointed out."""
    row = ctx.db.one("SELECT * FROM teams WHERE id = ?", team_id)
    if row is None:
        by_key = ctx.db.one("SELECT id FROM teams WHERE key = ?", team_id.upper())
        hint = (
            f"{team_id} is a team key; this argument takes the team's id, {by_key['id']}"
            if by_key is not None
            else "list_teams gives every team's id"
        )
        raise NotFound("team", team_id, hint)
    return row


def require_project(ctx: seahaven.Ctx, project_id: str) -> dict[str, Any]:
    """The ``projects`` row of ``project_id``, or ``NOT_FOUND``."""
    row = ctx.db.one("SELECT * FROM projects WHERE id = ?", project_id)
    if row is None:
        raise NotFound("project", project_id, "list_projects gives every project's id")
    return row


def require_label(ctx: seahaven.Ctx, label_id: str) -> dict[str, Any]:
    """The ``labels`` row of ``label_id``, or ``NOT_FOUND``."""
    row = ctx.db.one("SELECT * FROM labels WHERE id = ?", label_id)
    if row is None:
        raise NotFound("label", label_id, "list_labels gives every label's id")
    return row


def require_issue(ctx: seahaven.Ctx, issue_id: str) -> dict[str, Any]:
    """The ``issues`` row of ``issue_id``, or ``NOT_FOUND``; a key in its place is pointed out."""
    row = ctx.db.one("SELECT * FROM issues WHERE id = ?", issue_id)
    if row is None:
        hint = "get_issue(key=...) or list_issues gives an issue's id"
        if _KEY.match(issue_id):
            by_key = ctx.db.one("SELECT id FROM issues WHERE key = ?", issue_id.upper())
            if by_key is not None:
                hint = f"{issue_id} is an issue key; this argument takes its id, {by_key['id']}"
        raise NotFound("issue", issue_id, hint)
    return row
