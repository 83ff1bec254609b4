"""Labels: a team's tags for its issues, and which issue carries which."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

import seahaven
from projecttracker.errors import Conflict, InvalidInput
from projecttracker.tools._pagination import page, position
from projecttracker.tools._rows import (
    Issue,
    Label,
    issues_out,
    label_out,
    require_issue,
    require_label,
    require_team,
)
from projecttracker.tools._types import (
    Color,
    Cursor,
    Description,
    IssueId,
    LabelId,
    LabelName,
    Limit,
    TeamId,
)
from projecttracker.world import world
from seahaven import toolkit

__all__ = ["create_label", "list_labels", "refuse_archived", "set_issue_labels"]

LabelIds = Annotated[
    list[LabelId],
    Field(
        max_length=20,
        description="Every label the issue should carry, by id; an empty list removes them all.",
    ),
]


def refuse_archived(issue: dict[str, Any]) -> None:
    """An archived issue keeps its fields: CONFLICT for a tool that would change one."""
    if issue["archived_at"] is not None:
        raise Conflict(
            f"issue {issue['key']} was archived at {issue['archived_at']} and can no longer be "
            "changed; comments can still be added",
            issue_id=issue["id"],
        )


@world.tool
def create_label(
    ctx: seahaven.Ctx,
    team_id: TeamId,
    name: LabelName,
    color: Color,
    description: Description = "",
) -> Label:
    """Create a label in a team, such as bug with color #e5484d. Names are unique within a
    team, without regard to case: a name in use is CONFLICT, naming the existing label.
    """
    require_team(ctx, team_id)
    name = name.strip()
    taken = ctx.db.one(
        "SELECT id FROM labels WHERE team_id = ? AND lower(name) = lower(?)", team_id, name
    )
    if taken is not None:
        raise Conflict(
            f"the team already has a label {name!r} ({taken['id']}); use it, or another name",
            label_id=taken["id"],
        )
    label_id = ctx.ids.uuid()
    ctx.db.execute(
        "INSERT INTO labels (id, team_id, name, color, description, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        label_id,
        team_id,
        name,
        color.lower(),
        description,
        ctx.clock.iso(),
    )
    return label_out(require_label(ctx, label_id))


@world.tool
def list_labels(
    ctx: seahaven.Ctx,
    team_id: TeamId | None = None,
    limit: Limit = 50,
    cursor: Cursor | None = None,
) -> dict[str, Any]:
    """Labels by name (ties by id), optionally of one team. Answers {"labels": [...],
    "has_next", "next_cursor"}; pass next_cursor back for the next page.
    """
    if team_id is not None:
        require_team(ctx, team_id)
    listing = ("labels", "name", team_id)
    after = position(cursor, listing, (str, str))
    rows, more = toolkit.keyset_page(
        ctx.db,
        table="labels",
        where=[] if team_id is None else ["team_id = ?"],
        params=[] if team_id is None else [team_id],
        order_by="name",
        descending=False,
        limit=limit,
        after=after,
    )
    return page(
        "labels",
        [label_out(row) for row in rows],
        more,
        listing,
        lambda: [rows[-1]["name"], rows[-1]["id"]],
    )


@world.tool
def set_issue_labels(ctx: seahaven.Ctx, issue_id: IssueId, label_ids: LabelIds) -> Issue:
    """Replace the labels of an issue with exactly label_ids (an empty list removes them all).

    Every label must belong to the issue's team. Returns the issue with its new labels.
    """
    issue = require_issue(ctx, issue_id)
    refuse_archived(issue)
    wanted = list(dict.fromkeys(label_ids))
    for label_id in wanted:
        label = require_label(ctx, label_id)
        if label["team_id"] != issue["team_id"]:
            raise InvalidInput.on(
                "label_ids",
                f"label {label['name']!r} ({label_id}) belongs to another team; "
                f"list_labels(team_id={issue['team_id']!r}) shows the labels {issue['key']} "
                "can carry",
            )
    current = {
        str(row["label_id"])
        for row in ctx.db.rows("SELECT label_id FROM issue_labels WHERE issue_id = ?", issue_id)
    }
    for label_id in sorted(current - set(wanted)):
        ctx.db.execute(
            "DELETE FROM issue_labels WHERE issue_id = ? AND label_id = ?", issue_id, label_id
        )
    for label_id in wanted:
        if label_id not in current:
            ctx.db.execute(
                "INSERT INTO issue_labels (issue_id, label_id) VALUES (?, ?)", issue_id, label_id
            )
    if current != set(wanted):
        ctx.db.execute("UPDATE issues SET updated_at = ? WHERE id = ?", ctx.clock.iso(), issue_id)
    return issues_out(ctx, [require_issue(ctx, issue_id)])[0]
