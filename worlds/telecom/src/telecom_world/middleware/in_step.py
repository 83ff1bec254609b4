"""After every call that returns, the agent's and the user's: the phone and the carrier in step.

tau2-bench's environment syncs its two sides after every tool call that
succeeds (a refused call changes nothing, and is not followed by a sync), so
this layer does too, around every tool on the surface: the carrier's and the
phone's. What the sync writes is part of the call that led to it, and carries
its actor: the agent's resumed line reaches the phone in the agent's call, the
user's payment reaches the bill in the user's.
"""

from __future__ import annotations

from typing import Any

import seahaven
from seahaven.world import Handler
from telecom_world.sync import sync
from telecom_world.world import TelecomWorlds, world

__all__ = ["keep_in_step"]


@world.middleware
def keep_in_step(ctx: seahaven.Ctx[TelecomWorlds], call: seahaven.Call, next_: Handler) -> Any:
    """Run the call, then bring the phone and the carrier's records into step."""
    result = next_(ctx, call)
    phone_db = ctx.worlds.phone.db
    with ctx.db.transaction(), phone_db.transaction():
        sync(ctx.db, phone_db)
    return result
