"""Projects: a team's bodies of work, each holding issues."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import Field

import seahaven
from projecttracker.errors import Conflict, InvalidInput
from projecttracker.tools._pagination import page, position
from projecttracker.tools._rows import (
    Project,
    project_out,
    projects_out,
    require_project,
    require_team,
    require_user,
)
from projecttracker.tools._types import (
    Cursor,
    Date,
    Description,
    Limit,
    Name,
    ProjectId,
    ProjectState,
    TeamId,
    UserId,
)
from projecttracker.world import world
from seahaven import toolkit

__all__ = ["create_project", "get_project", "list_projects", "update_project"]

ClearableProjectField = Literal["lead_id", "target_date"]
ClearedFields = Annotated[
    list[ClearableProjectField],
    Field(description='Fields to set back to empty, such as ["lead_id"].'),
]


def _calendar_date(field: str, value: str) -> str:
    try:
        date.fromisoformat(value)
    except ValueError:
        raise InvalidInput.on(field, f"{value} is not a calendar date; write YYYY-MM-DD") from None
    return value


def _name_free(ctx: seahaven.Ctx, team_id: str, name: str, project_id: str | None) -> None:
    taken = ctx.db.one(
        "SELECT id FROM projects WHERE team_id = ? AND name = ? AND id IS NOT ?",
        team_id,
        name,
        project_id,
    )
    if taken is not None:
        raise Conflict(
            f"the team already has a project named {name!r} ({taken['id']}); choose another name",
            project_id=taken["id"],
        )


@world.tool
def create_project(
    ctx: seahaven.Ctx,
    team_id: TeamId,
    name: Name,
    description: Description = "",
    state: ProjectState = "planned",
    lead_id: UserId | None = None,
    target_date: Date | None = None,
) -> Project:
    """Create a project in a team. Names are unique within a team (CONFLICT otherwise).

    state is planned, active or done; lead_id is the user who leads it; target_date is the
    date it should be done by (YYYY-MM-DD).
    """
    require_team(ctx, team_id)
    name = name.strip()
    _name_free(ctx, team_id, name, None)
    if lead_id is not None:
        require_user(ctx, lead_id)
    if target_date is not None:
        _calendar_date("target_date", target_date)
    project_id = ctx.ids.uuid()
    now = ctx.clock.iso()
    ctx.db.execute(
        "INSERT INTO projects (id, team_id, name, description, state, lead_id, target_date, "
        "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        project_id,
        team_id,
        name,
        description,
        state,
        lead_id,
        target_date,
        now,
        now,
    )
    return project_out(ctx, require_project(ctx, project_id))


@world.tool
def get_project(ctx: seahaven.Ctx, project_id: ProjectId) -> Project:
    """One project, with issue_counts: how many of its issues (archived ones aside) are in
    each status.
    """
    return project_out(ctx, require_project(ctx, project_id))


@world.tool
def list_projects(
    ctx: seahaven.Ctx,
    team_id: TeamId | None = None,
    state: ProjectState | None = None,
    limit: Limit = 50,
    cursor: Cursor | None = None,
) -> dict[str, Any]:
    """Projects by name (ties by id), optionally of one team or in one state. Answers
    {"projects": [...], "has_next", "next_cursor"}; pass next_cursor back for the next page.
    """
    if team_id is not None:
        require_team(ctx, team_id)
    listing = ("projects", "name", team_id, state)
    after = position(cursor, listing, (str, str))
    where: list[str] = []
    params: list[Any] = []
    if team_id is not None:
        where.append("team_id = ?")
        params.append(team_id)
    if state is not None:
        where.append("state = ?")
        params.append(state)
    rows, more = toolkit.keyset_page(
        ctx.db,
        table="projects",
        where=where,
        params=params,
        order_by="name",
        descending=False,
        limit=limit,
        after=after,
    )
    return page(
        "projects",
        projects_out(ctx, rows),
        more,
        listing,
        lambda: [rows[-1]["name"], rows[-1]["id"]],
    )


@world.tool
def update_project(
    ctx: seahaven.Ctx,
    project_id: ProjectId,
    name: Name | None = None,
    description: Description | None = None,
    state: ProjectState | None = None,
    lead_id: UserId | None = None,
    target_date: Date | None = None,
    clear: ClearedFields | None = None,
) -> Project:
    """Change a project's fields: only the ones given change. To remove the lead or the target
    date, name the field in clear, such as clear=["lead_id"]. A done project can be reopened
    by setting state to active.
    """
    project = require_project(ctx, project_id)
    cleared = set(clear or ())
    changes: dict[str, Any] = {}
    if name is not None:
        name = name.strip()
        _name_free(ctx, project["team_id"], name, project_id)
        changes["name"] = name
    if description is not None:
        changes["description"] = description
    if state is not None:
        changes["state"] = state
    for field, value in (("lead_id", lead_id), ("target_date", target_date)):
        if value is not None and field in cleared:
            raise InvalidInput.on(field, f"{field} is both given and named in clear; pick one")
    if lead_id is not None:
        require_user(ctx, lead_id)
        changes["lead_id"] = lead_id
    if target_date is not None:
        changes["target_date"] = _calendar_date("target_date", target_date)
    for field in sorted(cleared):
        changes[field] = None
    if not changes:
        raise InvalidInput.on("(arguments)", "give at least one field to change")
    changes["updated_at"] = ctx.clock.iso()
    assignments = ", ".join(f"{column} = ?" for column in changes)
    ctx.db.execute(f"UPDATE projects SET {assignments} WHERE id = ?", *changes.values(), project_id)
    return project_out(ctx, require_project(ctx, project_id))
