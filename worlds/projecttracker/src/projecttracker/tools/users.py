"""People: create one, read one, list them."""

from __future__ import annotations

from typing import Any

import seahaven
from projecttracker.errors import Conflict, InvalidInput, NotFound
from projecttracker.tools._pagination import page, position
from projecttracker.tools._rows import User, require_team, require_user, user_out
from projecttracker.tools._types import Cursor, Email, Limit, Name, Role, TeamId, UserId
from projecttracker.world import world
from seahaven import toolkit

__all__ = ["create_user", "get_user", "list_users", "next_user_id"]


def next_user_id(ctx: seahaven.Ctx) -> str:
    """``u_<n>``, one past the highest number handed out so far; numbers are never reused."""
    row = ctx.db.one(
        "SELECT coalesce(max(CAST(substr(id, 3) AS INTEGER)), 0) + 1 AS n FROM users "
        "WHERE id GLOB 'u_[0-9]*'"
    )
    return f"u_{row['n'] if row else 1}"


@world.tool
def create_user(ctx: seahaven.Ctx, email: Email, name: Name, role: Role = "member") -> User:
    """Add a person to the workspace and return them, with their new id (u_1, u_2, ...).

    role is admin, member or viewer. Emails are unique, compared without regard to case:
    an email already in use is CONFLICT, naming the user who has it. A new user is in no
    team yet; add_team_member puts them in one.
    """
    taken = ctx.db.one("SELECT id FROM users WHERE email = ?", email)
    if taken is not None:
        raise Conflict(
            f"{email} is already the email of user {taken['id']}; use that user, or another email",
            email=email,
            user_id=taken["id"],
        )
    user = User(
        id=next_user_id(ctx),
        email=email,
        name=name.strip(),
        role=role,
        created_at=ctx.clock.iso(),
    )
    ctx.db.execute(
        "INSERT INTO users (id, email, name, role, created_at) VALUES (?, ?, ?, ?, ?)",
        user["id"],
        user["email"],
        user["name"],
        user["role"],
        user["created_at"],
    )
    return user


@world.tool
def get_user(ctx: seahaven.Ctx, user_id: UserId | None = None, email: Email | None = None) -> User:
    """One user, by user_id or by email: give exactly one of the two."""
    if (user_id is None) == (email is None):
        raise InvalidInput.on("user_id", "give exactly one of user_id and email")
    if user_id is not None:
        return user_out(require_user(ctx, user_id))
    row = ctx.db.one("SELECT * FROM users WHERE email = ?", email)
    if row is None:
        raise NotFound("user", str(email), "list_users shows everyone's email")
    return user_out(row)


@world.tool
def list_users(
    ctx: seahaven.Ctx,
    role: Role | None = None,
    team_id: TeamId | None = None,
    limit: Limit = 50,
    cursor: Cursor | None = None,
) -> dict[str, Any]:
    """The workspace's people by name (ties by id), optionally one role or one team's members.

    Answers {"users": [...], "has_next", "next_cursor"}; when has_next is true, call again with
    cursor=next_cursor and the same other arguments for the next page.
    """
    if team_id is not None:
        require_team(ctx, team_id)
    listing = ("users", "name", role, team_id)
    after = position(cursor, listing, (str, str))
    where: list[str] = []
    params: list[Any] = []
    if role is not None:
        where.append("role = ?")
        params.append(role)
    if team_id is not None:
        where.append("id IN (SELECT user_id FROM team_members WHERE team_id = ?)")
        params.append(team_id)
    rows, more = toolkit.keyset_page(
        ctx.db,
        table="users",
        where=where,
        params=params,
        order_by="name",
        descending=False,
        limit=limit,
        after=after,
    )
    return page(
        "users",
        [user_out(row) for row in rows],
        more,
        listing,
        lambda: [rows[-1]["name"], rows[-1]["id"]],
    )
