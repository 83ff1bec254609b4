"""The viewer: who this session is driving the tracker as.

``world.instance(fixture, startup={"user_id": "u_3"})``, or the same ``startup`` on a served
``reset``, names the viewer. The hook keeps it in ``ctx.state["viewer_id"]``; without it the
viewer is the workspace's first admin (the earliest created), looked up again on a call if
there was none when the instance started, so a blank workspace gets one as soon as an admin
is created.

The writes the audit trail records take an optional ``actor_id``, which wins over the viewer,
so one run can have two people writing without two instances. A write with neither, in a
workspace with no admin, is ``INVALID_INPUT``. A ``user_id`` that names nobody is a
``WorldBug``: it comes from the eval's setup, not from the agent, so the instance is refused
before a run starts as the wrong person.
"""

from __future__ import annotations

import seahaven
from projecttracker.errors import InvalidInput, NotFound
from projecttracker.world import world

__all__ = ["VIEWER_KEY", "acting_user", "set_viewer"]

VIEWER_KEY = "viewer_id"
"""Where the hook keeps the viewer's user id in ``ctx.state``."""


def _first_admin(ctx: seahaven.Ctx) -> str | None:
    row = ctx.db.one("SELECT id FROM users WHERE role = 'admin' ORDER BY created_at, rowid LIMIT 1")
    return None if row is None else str(row["id"])


@world.instance_startup
def set_viewer(ctx: seahaven.Ctx, *, user_id: str | None = None) -> None:
    """Remember the viewer the ``user_id`` startup keyword names, or the first admin."""
    if user_id is None:
        ctx.state[VIEWER_KEY] = _first_admin(ctx)
        return
    if not isinstance(user_id, str) or not user_id.strip():
        raise seahaven.WorldBug(f"startup user_id must be a user id such as 'u_1', not {user_id!r}")
    if ctx.db.one("SELECT 1 FROM users WHERE id = ?", user_id) is None:
        known = ctx.db.rows("SELECT id FROM users ORDER BY created_at, rowid LIMIT 5")
        listed = ", ".join(str(row["id"]) for row in known) or "none: this workspace is empty"
        raise seahaven.WorldBug(
            f"startup user_id {user_id!r} names no user of this instance; name one of its "
            f"users (the first are {listed}), or leave user_id out to act as the first admin"
        )
    ctx.state[VIEWER_KEY] = user_id


def acting_user(ctx: seahaven.Ctx, actor_id: str | None) -> str:
    """The user a write is recorded as done by: ``actor_id``, else the viewer."""
    if actor_id is not None:
        if ctx.db.one("SELECT 1 FROM users WHERE id = ?", actor_id) is None:
            raise NotFound("user", actor_id, "actor_id must be a user id from list_users")
        return actor_id
    viewer = ctx.state.get(VIEWER_KEY) or _first_admin(ctx)
    if viewer is None:
        raise InvalidInput.on(
            "actor_id",
            "this workspace has no admin to act as; pass actor_id, or create_user with "
            "role='admin' first",
        )
    ctx.state[VIEWER_KEY] = viewer
    return str(viewer)
