"""Setting up the merchant's account when an instance starts.

The account has one setting an eval may choose per instance, and one thing
time does to it. Nothing in this world runs in the background, so time is
applied here, once, at the instance's start instant: a payout whose arrival
date has come is paid. Rows written here are starting state, not the
agent's work, so they are not in the change log.
"""

from __future__ import annotations

import seahaven
from payments_world.timestamps import today
from payments_world.world import world

__all__ = ["open_account"]

MAX_SETTLEMENT_DAYS = 30


@world.instance_startup
def open_account(ctx: seahaven.Ctx, *, settlement_days: int = 0) -> None:
    """Apply the account's settlement delay, and pay out what has arrived by the start instant.

    ``settlement_days`` (0 to 30, default 0) is how long captured funds stay
    pending before they can be paid out. 0 makes them available at once;
    2 is what a real card processor usually does.
    """
    if (
        isinstance(settlement_days, bool)
        or not isinstance(settlement_days, int)
        or not 0 <= settlement_days <= MAX_SETTLEMENT_DAYS
    ):
        raise seahaven.WorldBug(
            f"payments: startup settlement_days={settlement_days!r} is not a whole number of days "
            f"from 0 to {MAX_SETTLEMENT_DAYS}; pass startup={{'settlement_days': 2}}, for example"
        )
    ctx.state["settlement_days"] = settlement_days
    ctx.db.execute(
        "UPDATE payouts SET status = 'paid' WHERE status = 'pending' AND arrival_date <= ?",
        today(ctx),
    )
