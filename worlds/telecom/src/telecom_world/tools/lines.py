"""Lines: suspending and resuming them, their data use, roaming, and refuelling data.

Each tool checks what tau2-bench's checks, in the same order, with the same
messages, and writes what it writes. A line's suspension and roaming reach the
customer's phone after the call (``telecom_world.sync``), as the benchmark's
environment keeps the two in step.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated

from pydantic import Field

import seahaven
from telecom_world import store
from telecom_world.charges import apply_one_time_charge
from telecom_world.errors import InvalidRequest, InvalidState
from telecom_world.models import DataUsage, RefuelResult, SuspensionResult
from telecom_world.times import today
from telecom_world.world import world

__all__ = [
    "disable_roaming",
    "enable_roaming",
    "get_data_usage",
    "refuel_data",
    "resume_line",
    "suspend_line",
]

CustomerId = Annotated[str, Field(description="The id of the customer who owns the line.")]
LineId = Annotated[str, Field(description="The line's id, such as 'L1002'.")]


@world.tool
def suspend_line(
    ctx: seahaven.Ctx,
    customer_id: CustomerId,
    line_id: LineId,
    reason: Annotated[str, Field(description="Why the line is suspended.")],
) -> SuspensionResult:
    """Suspend an active line, for at most six months; a $5 monthly holding fee applies.

    Errors: NOT_FOUND for an unknown customer or line, or a line that is not the
    customer's; INVALID_STATE for a line that is not active.
    """
    target = store.target_line(ctx.db, customer_id, line_id)
    if target["status"] != "Active":
        raise InvalidState("Line must be active to suspend")
    ctx.db.execute(
        "UPDATE lines SET status = 'Suspended', suspension_start_date = ? WHERE line_id = ?",
        today(ctx).isoformat(),
        line_id,
    )
    return SuspensionResult(
        message="Line suspended successfully. $5/month holding fee will apply.",
        line=store.line_model(store.line(ctx.db, line_id)),
    )


@world.tool
def resume_line(ctx: seahaven.Ctx, customer_id: CustomerId, line_id: LineId) -> SuspensionResult:
    """Resume a suspended line (or one pending activation): it is active again.

    Errors: NOT_FOUND for an unknown customer or line, or a line that is not the
    customer's; INVALID_STATE for a line that is neither suspended nor pending.
    """
    target = store.target_line(ctx.db, customer_id, line_id)
    if target["status"] not in ("Suspended", "Pending Activation"):
        raise InvalidState("Line must be suspended to resume")
    ctx.db.execute(
        "UPDATE lines SET status = 'Active', suspension_start_date = NULL WHERE line_id = ?",
        line_id,
    )
    return SuspensionResult(
        message="Line resumed successfully", line=store.line_model(store.line(ctx.db, line_id))
    )


@world.tool
def get_data_usage(ctx: seahaven.Ctx, customer_id: CustomerId, line_id: LineId) -> DataUsage:
    """A line's data use this billing cycle: used, the plan's allowance, refuelled, and the
    cycle's last day.

    Errors: NOT_FOUND for an unknown customer, line or plan, or a line that is not the
    customer's.
    """
    target = store.target_line(ctx.db, customer_id, line_id)
    plan = store.plan(ctx.db, target["plan_id"])
    now = today(ctx)
    # The first of next month, less a day; in December the benchmark keeps the year, and so
    # does this (its "today" is in February).
    cycle_end = date(now.year, now.month + 1 if now.month < 12 else 1, 1) - timedelta(days=1)
    return DataUsage(
        line_id=line_id,
        data_used_gb=str(target["data_used_gb"]),
        data_limit_gb=str(plan["data_limit_gb"]),
        data_refueling_gb=str(target["data_refueling_gb"]),
        cycle_end_date=cycle_end.isoformat(),
    )


@world.tool
def enable_roaming(ctx: seahaven.Ctx, customer_id: CustomerId, line_id: LineId) -> str:
    """Turn international roaming on for a line.

    Errors: NOT_FOUND for an unknown customer or line, or a line that is not the
    customer's.
    """
    target = store.target_line(ctx.db, customer_id, line_id)
    if target["roaming_enabled"]:
        return "Roaming was already enabled"
    ctx.db.execute("UPDATE lines SET roaming_enabled = 1 WHERE line_id = ?", line_id)
    return "Roaming enabled successfully"


@world.tool
def disable_roaming(ctx: seahaven.Ctx, customer_id: CustomerId, line_id: LineId) -> str:
    """Turn international roaming off for a line.

    Errors: NOT_FOUND for an unknown customer or line, or a line that is not the
    customer's.
    """
    target = store.target_line(ctx.db, customer_id, line_id)
    if not target["roaming_enabled"]:
        return "Roaming was already disabled"
    ctx.db.execute("UPDATE lines SET roaming_enabled = 0 WHERE line_id = ?", line_id)
    return "Roaming disabled successfully"


@world.tool
def refuel_data(
    ctx: seahaven.Ctx,
    customer_id: CustomerId,
    line_id: LineId,
    gb_amount: Annotated[float, Field(description="Gigabytes of data to add.")],
) -> RefuelResult:
    """Add data to a line for this billing cycle, charged on the customer's next bill at
    the plan's refuelling price.

    Errors: NOT_FOUND for an unknown customer, line or plan, or a line that is not the
    customer's; INVALID_REQUEST for an amount that is not positive.
    """
    target = store.target_line(ctx.db, customer_id, line_id)
    if gb_amount <= 0:
        raise InvalidRequest("Refuel amount must be positive")
    plan = store.plan(ctx.db, target["plan_id"])
    price = plan["data_refueling_price_per_gb"]
    charge = gb_amount * price
    refuelled = target["data_refueling_gb"] + gb_amount
    ctx.db.execute("UPDATE lines SET data_refueling_gb = ? WHERE line_id = ?", refuelled, line_id)
    apply_one_time_charge(
        ctx, customer_id, charge, f"Data refueling: {gb_amount} GB at ${price}/GB"
    )
    return RefuelResult(
        message=f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
        new_data_refueling_gb=str(refuelled),
        charge=str(charge),
    )
