"""The startup hook that decides who the agent acts as.

``startup={"user": "maya"}`` (a handle, ``@maya``, or a user id) pins the acting
user for the instance's life. Without it the agent acts as the workspace owner;
a workspace with no accounts yet (the ``empty`` fixture) has no one to act as
until ``create_user`` makes the first account, which becomes the owner. A name
that matches nobody, or a deactivated account, is the author's mistake: the
instance is refused before it starts.
"""

from __future__ import annotations

import seahaven

from chat_world.access import ACTING_HANDLE_KEY, ACTING_USER_KEY
from chat_world.world import world

__all__ = ["acting_user"]


@world.instance_startup
def acting_user(ctx: seahaven.Ctx, *, user: str | None = None) -> None:
    """Pin the acting user named by the ``user`` startup keyword, or else the owner."""
    if user is None:
        row = ctx.db.one("SELECT id, handle FROM users WHERE role = 'owner'")
        ctx.state[ACTING_USER_KEY] = None if row is None else str(row["id"])
        ctx.state[ACTING_HANDLE_KEY] = None if row is None else str(row["handle"])
        return
    if not isinstance(user, str) or not user.strip():
        raise seahaven.WorldBug(
            f"startup user must be a handle or a user id, such as 'maya', not {user!r}"
        )
    wanted = user.strip()
    row = ctx.db.one(
        "SELECT id, handle, deactivated FROM users WHERE id = ? OR handle = ?",
        wanted,
        wanted.removeprefix("@"),
    )
    if row is None:
        raise seahaven.WorldBug(
            f"startup user {user!r} is not an account in this workspace; name an existing "
            "user's handle or id (the fixture's users are listed by list_users)"
        )
    if row["deactivated"]:
        raise seahaven.WorldBug(
            f"startup user {user!r} is deactivated, and a deactivated account cannot act; "
            "name an active user"
        )
    ctx.state[ACTING_USER_KEY] = str(row["id"])
    ctx.state[ACTING_HANDLE_KEY] = str(row["handle"])
