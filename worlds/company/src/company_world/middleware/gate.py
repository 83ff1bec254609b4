"""The gate: every call the agent makes is checked against the principal's role before it runs.

It sits inside the error handler and in front of everything else, on the
company's own tools and on every tool the added worlds contribute. It runs
with the company's context whichever world owns the tool, so it reads the
principal from the company's own state and store, and ``call.node`` tells it
which world it is guarding without touching that world's store.
"""

from __future__ import annotations

from typing import Any

import seahaven
from company_world.access import FIRST_HIRE_TOOLS, acting_staff, allowed_roles
from company_world.errors import Forbidden
from company_world.world import world
from seahaven.world import Handler

__all__ = ["gate"]


@world.middleware
def gate(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
    """Let the call through if the principal's role may make it; FORBIDDEN otherwise."""
    roles = allowed_roles(call)
    actor = acting_staff(ctx)
    if actor is None:
        nobody_yet = ctx.db.one("SELECT 1 FROM staff LIMIT 1") is None
        if nobody_yet and call.node == "main" and call.name in FIRST_HIRE_TOOLS:
            return next_(ctx, call)
        raise Forbidden(
            "the company has no staff yet: onboard its first administrator (role admin) with "
            "onboard_employee before anything else"
            if nobody_yet
            else "nobody is acting: the company has no active administrator and no principal "
            "was named when this instance started",
            tool=call.name,
        )
    if actor.status != "active":
        raise Forbidden(
            f"{actor.full_name} ({actor.id}) has left the company and can do nothing here",
            tool=call.name,
            principal=actor.id,
        )
    if actor.role not in roles:
        raise Forbidden(
            f"{call.name} needs the role {' or '.join(sorted(roles))}; you act as "
            f"{actor.full_name} ({actor.id}), whose role is {actor.role}",
            tool=call.name,
            principal=actor.id,
            role=actor.role,
            allowed_roles=sorted(roles),
        )
    return next_(ctx, call)
