"""Issues: the tracker's unit of work, and the rules an eval can rely on.

* A key is ``TEAMKEY-n``, minted by bumping the team's counter in the ``UPDATE ... RETURNING``
  that reads it, so two issues never share a number and a number is never handed back.
* Closing an issue (``done`` or ``canceled``) drops its assignee and records the drop, in the
  same ``UPDATE`` of the row. ``assign_issue`` on a closed issue is ``CONFLICT``;
  ``update_issue`` checks only the ``status`` it is given, so it can assign a closed issue.
* An archived issue keeps its fields and leaves ``list_issues``; no tool changes it again,
  though ``add_comment`` still adds to the conversation about it.
* The writes the audit trail records (create, update, assign, transition) take ``actor_id``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

import seahaven
from projecttracker.errors import Conflict, InvalidInput, NotFound
from projecttracker.startup import acting_user
from projecttracker.tools import _events
from projecttracker.tools._pagination import page, position
from projecttracker.tools._rows import (
    Issue,
    issues_out,
    require_issue,
    require_project,
    require_user,
)
from projecttracker.tools._types import (
    OPEN_STATUSES,
    Actor,
    Cursor,
    Description,
    DueAt,
    Estimate,
    IssueId,
    IssueKey,
    IssueStatus,
    LabelId,
    Limit,
    Priority,
    ProjectId,
    TeamId,
    Title,
    UserId,
)
from projecttracker.tools.labels import refuse_archived
from projecttracker.world import world
from seahaven import toolkit

__all__ = [
    "archive_issue",
    "assign_issue",
    "create_issue",
    "get_issue",
    "list_issues",
    "mint_key",
    "transition_issue",
    "update_issue",
]

ClearableIssueField = Literal["assignee_id", "estimate", "due_at"]
ClearedFields = Annotated[
    list[ClearableIssueField],
    Field(description='Fields to set back to empty, such as ["assignee_id"].'),
]
InitialLabels = Annotated[
    list[LabelId],
    Field(max_length=20, description="Labels to put on the new issue, by id."),
]


def _closed(status: str) -> bool:
    return status not in OPEN_STATUSES


def mint_key(ctx: seahaven.Ctx, team_id: str) -> str:
    """The team's next issue key: the counter is bumped and read in one statement."""
    bumped = ctx.db.one(
        "UPDATE teams SET issue_counter = issue_counter + 1 WHERE id = ? "
        "RETURNING key, issue_counter",
        team_id,
    )
    if bumped is None:
        raise NotFound("team", team_id)
    return f"{bumped['key']}-{bumped['issue_counter']}"


def _require_assignable(ctx: seahaven.Ctx, team_id: str, user_id: str) -> None:
    """An issue is assigned to a member of its team; anyone else is CONFLICT."""
    require_user(ctx, user_id)
    if (
        ctx.db.one("SELECT 1 FROM team_members WHERE team_id = ? AND user_id = ?", team_id, user_id)
        is None
    ):
        team = ctx.db.one("SELECT key FROM teams WHERE id = ?", team_id)
        key = team["key"] if team else team_id
        raise Conflict(
            f"user {user_id} is not a member of team {key}, so cannot be assigned its issues; "
            "add_team_member first, or choose one of list_team_members",
            user_id=user_id,
            team_id=team_id,
        )


def _open_project(ctx: seahaven.Ctx, project_id: str) -> dict[str, Any]:
    project = require_project(ctx, project_id)
    if project["state"] == "done":
        raise Conflict(
            f"project {project['name']!r} is done and takes no more issues; reopen it with "
            "update_project(state='active'), or choose another project",
            project_id=project_id,
        )
    return project


def _instant(moment: datetime) -> str:
    return seahaven.Clock(moment).iso()


def _apply(
    ctx: seahaven.Ctx,
    issue: dict[str, Any],
    actor: str,
    changes: dict[str, Any],
) -> Issue:
    """Write ``changes`` to the issue in one UPDATE, with the trail for status and assignee.

    A move to a closed status (from an open one or from the other closed one) drops the
    assignee in that same UPDATE, records the drop after the status change, and stamps
    completed_at; a move to an open status clears completed_at.
    """
    now = ctx.clock.iso()
    before_status = str(issue["status"])
    after_status = str(changes.get("status", before_status))
    if after_status != before_status:
        if _closed(after_status):
            changes["completed_at"] = now
            changes.setdefault("assignee_id", None)
        else:
            changes["completed_at"] = None
    changes["updated_at"] = now
    assignments = ", ".join(f"{column} = ?" for column in changes)
    ctx.db.execute(f"UPDATE issues SET {assignments} WHERE id = ?", *changes.values(), issue["id"])
    if after_status != before_status:
        _events.record(
            ctx, issue["id"], actor, "status", {"from": before_status, "to": after_status}
        )
    if "assignee_id" in changes and changes["assignee_id"] != issue["assignee_id"]:
        _events.record(
            ctx,
            issue["id"],
            actor,
            "assignee",
            {"from": issue["assignee_id"], "to": changes["assignee_id"]},
        )
    return issues_out(ctx, [require_issue(ctx, issue["id"])])[0]


@world.tool
def create_issue(
    ctx: seahaven.Ctx,
    project_id: ProjectId,
    title: Title,
    description: Description = "",
    status: IssueStatus = "backlog",
    priority: Priority = 0,
    assignee_id: UserId | None = None,
    label_ids: InitialLabels | None = None,
    estimate: Estimate | None = None,
    due_at: DueAt | None = None,
    actor_id: Actor | None = None,
) -> Issue:
    """Create an issue in a project and return it, with its new key (such as ENG-42).

    The key comes from the project's team. assignee_id must be a member of that team, and a
    closed issue (done or canceled) has no assignee. A done project takes no new issues.
    The audit trail records the creation as done by actor_id, or by this session's user.
    """
    actor = acting_user(ctx, actor_id)
    project = _open_project(ctx, project_id)
    team_id = str(project["team_id"])
    if assignee_id is not None:
        if _closed(status):
            raise Conflict(
                f"a {status} issue has no assignee; leave assignee_id out, or create it open",
                status=status,
            )
        _require_assignable(ctx, team_id, assignee_id)
    wanted_labels = list(dict.fromkeys(label_ids or ()))
    for label_id in wanted_labels:
        label = ctx.db.one("SELECT team_id, name FROM labels WHERE id = ?", label_id)
        if label is None:
            raise NotFound("label", label_id, "list_labels gives every label's id")
        if label["team_id"] != team_id:
            raise InvalidInput.on(
                "label_ids", f"label {label['name']!r} ({label_id}) belongs to another team"
            )
    issue_id = ctx.ids.uuid()
    key = mint_key(ctx, team_id)
    now = ctx.clock.iso()
    ctx.db.execute(
        "INSERT INTO issues (id, key, team_id, project_id, title, description, status, "
        "priority, assignee_id, creator_id, estimate, due_at, created_at, updated_at, "
        "completed_at, archived_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        issue_id,
        key,
        team_id,
        project_id,
        title.strip(),
        description,
        status,
        priority,
        assignee_id,
        actor,
        estimate,
        None if due_at is None else _instant(due_at),
        now,
        now,
        now if _closed(status) else None,
    )
    for label_id in wanted_labels:
        ctx.db.execute(
            "INSERT INTO issue_labels (issue_id, label_id) VALUES (?, ?)", issue_id, label_id
        )
    _events.record(
        ctx,
        issue_id,
        actor,
        "created",
        {"key": key, "status": status, "assignee_id": assignee_id},
    )
    return issues_out(ctx, [require_issue(ctx, issue_id)])[0]


@world.tool
def get_issue(
    ctx: seahaven.Ctx, key: IssueKey | None = None, issue_id: IssueId | None = None
) -> Issue:
    """One issue, by its key (such as ENG-12) or by its id: give exactly one of the two.

    Archived issues are found too (archived_at is then set).
    """
    if (key is None) == (issue_id is None):
        raise InvalidInput.on("key", "give exactly one of key and issue_id")
    if issue_id is not None:
        return issues_out(ctx, [require_issue(ctx, issue_id)])[0]
    wanted = str(key).upper()
    row = ctx.db.one("SELECT * FROM issues WHERE key = ?", wanted)
    if row is None:
        raise NotFound("issue", wanted)
    return issues_out(ctx, [row])[0]


@world.tool
def list_issues(
    ctx: seahaven.Ctx,
    team_id: TeamId | None = None,
    project_id: ProjectId | None = None,
    status: IssueStatus | None = None,
    assignee_id: UserId | None = None,
    label_id: LabelId | None = None,
    priority: Priority | None = None,
    limit: Limit = 50,
    cursor: Cursor | None = None,
) -> dict[str, Any]:
    """Issues, newest first (ties by id), filtered by any of team, project, status, assignee,
    label and priority. Archived issues are left out (get_issue and search_issues still find
    them).

    Answers {"issues": [...], "has_next", "next_cursor"}; when has_next is true, call again
    with cursor=next_cursor and the same other arguments for the next page.
    """
    listing = (
        "issues",
        "created_desc",
        team_id,
        project_id,
        status,
        assignee_id,
        label_id,
        priority,
    )
    after = position(cursor, listing, (str, str))
    where = ["archived_at IS NULL"]
    params: list[Any] = []
    for column, value in (
        ("team_id", team_id),
        ("project_id", project_id),
        ("status", status),
        ("assignee_id", assignee_id),
        ("priority", priority),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if label_id is not None:
        where.append("id IN (SELECT issue_id FROM issue_labels WHERE label_id = ?)")
        params.append(label_id)
    rows, more = toolkit.keyset_page(
        ctx.db,
        table="issues",
        where=where,
        params=params,
        order_by="created_at",
        descending=True,
        limit=limit,
        after=after,
    )
    return page(
        "issues",
        issues_out(ctx, rows),
        more,
        listing,
        lambda: [rows[-1]["created_at"], rows[-1]["id"]],
    )


@world.tool
def update_issue(
    ctx: seahaven.Ctx,
    issue_id: IssueId,
    title: Title | None = None,
    description: Description | None = None,
    status: IssueStatus | None = None,
    priority: Priority | None = None,
    assignee_id: UserId | None = None,
    project_id: ProjectId | None = None,
    estimate: Estimate | None = None,
    due_at: DueAt | None = None,
    clear: ClearedFields | None = None,
    actor_id: Actor | None = None,
) -> Issue:
    """Change an issue's fields: only the ones given change. To empty assignee_id, estimate
    or due_at, name it in clear, such as clear=["due_at"].

    Moving to done or canceled drops the assignee, as transition_issue does; giving a closed
    status and an assignee together is CONFLICT. project_id moves the issue to another open
    project of the same team (its key stays). Archived issues cannot be changed. Changes of
    status and assignee are recorded in the audit trail as done by actor_id, or by this
    session's user.
    """
    actor = acting_user(ctx, actor_id)
    issue = require_issue(ctx, issue_id)
    refuse_archived(issue)
    cleared = set(clear or ())
    for field, value in (("assignee_id", assignee_id), ("estimate", estimate), ("due_at", due_at)):
        if value is not None and field in cleared:
            raise InvalidInput.on(field, f"{field} is both given and named in clear; pick one")
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = title.strip()
    if description is not None:
        changes["description"] = description
    if priority is not None:
        changes["priority"] = priority
    if estimate is not None:
        changes["estimate"] = estimate
    if due_at is not None:
        changes["due_at"] = _instant(due_at)
    if project_id is not None and project_id != issue["project_id"]:
        project = _open_project(ctx, project_id)
        if project["team_id"] != issue["team_id"]:
            raise Conflict(
                f"project {project['name']!r} belongs to another team, and an issue stays in "
                f"the team its key ({issue['key']}) names; create a new issue there instead",
                project_id=project_id,
            )
        changes["project_id"] = project_id
    if status is not None and status != issue["status"]:
        changes["status"] = status
    if assignee_id is not None:
        if status is not None and _closed(status):
            raise Conflict(
                f"a {status} issue has no assignee; leave assignee_id out (closing removes the "
                "assignee) or choose an open status",
                status=status,
            )
        _require_assignable(ctx, issue["team_id"], assignee_id)
        changes["assignee_id"] = assignee_id
    for field in sorted(cleared):
        changes[field] = None
    if not changes:
        if status is None:
            raise InvalidInput.on("(arguments)", "give at least one field to change")
        return issues_out(ctx, [issue])[0]  # the status it already has: nothing to do
    return _apply(ctx, issue, actor, changes)


@world.tool
def assign_issue(
    ctx: seahaven.Ctx,
    issue_id: IssueId,
    assignee_id: UserId | None,
    actor_id: Actor | None = None,
) -> Issue:
    """Assign an open issue to a member of its team, or pass assignee_id null to unassign it.

    A closed issue (done or canceled) cannot be assigned: reopen it with transition_issue
    first. Assigning the current assignee again changes nothing. The audit trail records the
    change as done by actor_id, or by this session's user.
    """
    actor = acting_user(ctx, actor_id)
    issue = require_issue(ctx, issue_id)
    refuse_archived(issue)
    if _closed(str(issue["status"])):
        raise Conflict(
            f"issue {issue['key']} is {issue['status']}, and a closed issue has no assignee; "
            "move it to an open status with transition_issue first",
            issue_id=issue_id,
            status=issue["status"],
        )
    if assignee_id is not None:
        _require_assignable(ctx, issue["team_id"], assignee_id)
    if assignee_id == issue["assignee_id"]:
        return issues_out(ctx, [issue])[0]
    return _apply(ctx, issue, actor, {"assignee_id": assignee_id})


@world.tool
def transition_issue(
    ctx: seahaven.Ctx,
    issue_id: IssueId,
    status: IssueStatus,
    actor_id: Actor | None = None,
) -> Issue:
    """Move an issue to another status: backlog, todo, in_progress, done or canceled.

    Moving it to done or canceled closes it: its assignee is removed and completed_at set.
    Moving it back to an open status reopens it, unassigned. Moving to the status it already
    has is CONFLICT. The audit trail records the change as done by actor_id, or by this
    session's user.
    """
    actor = acting_user(ctx, actor_id)
    issue = require_issue(ctx, issue_id)
    refuse_archived(issue)
    if issue["status"] == status:
        raise Conflict(
            f"issue {issue['key']} is already {status}", issue_id=issue_id, status=status
        )
    return _apply(ctx, issue, actor, {"status": status})


@world.tool
def archive_issue(ctx: seahaven.Ctx, issue_id: IssueId) -> Issue:
    """Archive an issue: it keeps every field, leaves list_issues, and can no longer be
    changed; get_issue and search_issues still find it, and comments can still be added.
    Archiving is permanent: an archived issue is CONFLICT here.
    """
    issue = require_issue(ctx, issue_id)
    if issue["archived_at"] is not None:
        raise Conflict(
            f"issue {issue['key']} is already archived (at {issue['archived_at']})",
            issue_id=issue_id,
        )
    now = ctx.clock.iso()
    ctx.db.execute(
        "UPDATE issues SET archived_at = ?, updated_at = ? WHERE id = ?", now, now, issue_id
    )
    return issues_out(ctx, [require_issue(ctx, issue_id)])[0]
