"""Teams and who is in them. A team's key (ENG) prefixes every issue key it mints."""

from __future__ import annotations

from typing import Any

import seahaven
from projecttracker.errors import Conflict, InvalidInput, NotFound
from projecttracker.tools._pagination import page, position
from projecttracker.tools._rows import (
    Member,
    Team,
    require_team,
    require_user,
    team_out,
)
from projecttracker.tools._types import Cursor, Description, Limit, Name, TeamId, TeamKey, UserId
from projecttracker.world import world
from seahaven import toolkit

__all__ = ["add_team_member", "create_team", "get_team", "list_team_members", "list_teams"]


@world.tool
def create_team(ctx: seahaven.Ctx, key: TeamKey, name: Name, description: Description = "") -> Team:
    """Create a team. key (2 to 5 capitals, such as ENG) starts every issue key it will mint,
    and cannot be changed later; a key already in use is CONFLICT. The team has no members
    until add_team_member adds them.
    """
    taken = ctx.db.one("SELECT id FROM teams WHERE key = ?", key)
    if taken is not None:
        raise Conflict(
            f"team key {key} is already used by team {taken['id']}; choose another key",
            key=key,
            team_id=taken["id"],
        )
    team_id = ctx.ids.uuid()
    ctx.db.execute(
        "INSERT INTO teams (id, key, name, description, issue_counter, created_at) "
        "VALUES (?, ?, ?, ?, 0, ?)",
        team_id,
        key,
        name.strip(),
        description,
        ctx.clock.iso(),
    )
    return team_out(ctx, require_team(ctx, team_id))


@world.tool
def get_team(ctx: seahaven.Ctx, team_id: TeamId | None = None, key: TeamKey | None = None) -> Team:
    """One team, by team_id or by its key (such as ENG): give exactly one of the two."""
    if (team_id is None) == (key is None):
        raise InvalidInput.on("team_id", "give exactly one of team_id and key")
    if team_id is not None:
        return team_out(ctx, require_team(ctx, team_id))
    row = ctx.db.one("SELECT * FROM teams WHERE key = ?", key)
    if row is None:
        raise NotFound("team", str(key), "list_teams shows every team's key")
    return team_out(ctx, row)


@world.tool
def list_teams(
    ctx: seahaven.Ctx, limit: Limit = 50, cursor: Cursor | None = None
) -> dict[str, Any]:
    """Every team, by key. Answers {"teams": [...], "has_next", "next_cursor"}; pass
    next_cursor back as cursor for the next page.
    """
    listing = ("teams", "key")
    after = position(cursor, listing, (str, str))
    rows, more = toolkit.keyset_page(
        ctx.db,
        table="teams",
        where=[],
        params=[],
        order_by="key",
        descending=False,
        limit=limit,
        after=after,
    )
    return page(
        "teams",
        [team_out(ctx, row) for row in rows],
        more,
        listing,
        lambda: [rows[-1]["key"], rows[-1]["id"]],
    )


@world.tool
def add_team_member(ctx: seahaven.Ctx, team_id: TeamId, user_id: UserId) -> Member:
    """Add a user to a team, so issues of the team can be assigned to them. A user already in
    the team is CONFLICT. Returns the membership: the user, and when they joined.
    """
    team = require_team(ctx, team_id)
    user = require_user(ctx, user_id)
    if ctx.db.one("SELECT 1 FROM team_members WHERE team_id = ? AND user_id = ?", team_id, user_id):
        raise Conflict(
            f"user {user_id} is already a member of team {team['key']}",
            team_id=team_id,
            user_id=user_id,
        )
    joined_at = ctx.clock.iso()
    ctx.db.execute(
        "INSERT INTO team_members (team_id, user_id, joined_at) VALUES (?, ?, ?)",
        team_id,
        user_id,
        joined_at,
    )
    return Member(
        id=user["id"],
        email=user["email"],
        name=user["name"],
        role=user["role"],
        created_at=user["created_at"],
        joined_at=joined_at,
    )


@world.tool
def list_team_members(
    ctx: seahaven.Ctx, team_id: TeamId, limit: Limit = 50, cursor: Cursor | None = None
) -> dict[str, Any]:
    """A team's members by name (ties by id), each with when they joined. Answers
    {"members": [...], "has_next", "next_cursor"}; pass next_cursor back for the next page.
    """
    require_team(ctx, team_id)
    listing = ("team_members", "name", team_id)
    after = position(cursor, listing, (str, str))
    rows = ctx.db.rows(
        "SELECT u.id, u.email, u.name, u.role, u.created_at, m.joined_at "
        "FROM team_members AS m JOIN users AS u ON u.id = m.user_id "
        "WHERE m.team_id = ? AND (? IS NULL OR (u.name, u.id) > (?, ?)) "
        "ORDER BY u.name, u.id LIMIT ?",
        team_id,
        None if after is None else 1,
        None if after is None else after[0],
        None if after is None else after[1],
        limit + 1,
    )
    shown, more = toolkit.split_page(rows, limit)
    members = [
        Member(
            id=row["id"],
            email=row["email"],
            name=row["name"],
            role=row["role"],
            created_at=row["created_at"],
            joined_at=row["joined_at"],
        )
        for row in shown
    ]
    return page("members", members, more, listing, lambda: [shown[-1]["name"], shown[-1]["id"]])
