"""Charging a customer's next bill: the draft bill a one-time charge or credit goes on."""

from __future__ import annotations

import json
from datetime import timedelta

import seahaven
from telecom_world import store
from telecom_world.times import today

__all__ = ["apply_one_time_charge"]


def apply_one_time_charge(
    ctx: seahaven.Ctx, customer_id: str, amount: float, description: str
) -> None:
    """Add a charge (or, negative, a credit) to the customer's draft bill, making one for
    next month when they have none."""
    owner = store.customer(ctx.db, customer_id)
    bill_ids = json.loads(owner["bill_ids"])
    draft = None
    for bill_id in bill_ids:
        if store.bill(ctx.db, bill_id)["status"] == "Draft":
            draft = bill_id
            break
    now = today(ctx)
    if draft is None:
        next_month = (now.replace(day=1) + timedelta(days=32)).replace(day=1)
        following = next_month.replace(
            month=next_month.month + 1 if next_month.month < 12 else 1,
            year=next_month.year if next_month.month < 12 else next_month.year + 1,
        )
        # The benchmark draws a random id; this draws it from the instance's seeded ids.
        draft = "B" + ctx.ids.uuid().replace("-", "")[:8]
        ctx.db.execute(
            "INSERT INTO bills (bill_id, customer_id, period_start, period_end, issue_date,"
            " total_due, due_date, status, position) VALUES (?, ?, ?, ?, ?, 0.0, ?, 'Draft',"
            " (SELECT COALESCE(MAX(position), -1) + 1 FROM bills))",
            draft,
            customer_id,
            next_month.isoformat(),
            (following - timedelta(days=1)).isoformat(),
            next_month.isoformat(),
            (next_month + timedelta(days=14)).isoformat(),
        )
        ctx.db.execute(
            "UPDATE customers SET bill_ids = ? WHERE customer_id = ?",
            json.dumps([*bill_ids, draft], separators=(",", ":")),
            customer_id,
        )
    ctx.db.execute(
        "INSERT INTO bill_line_items (bill_id, position, description, amount, date, item_type)"
        " VALUES (?, (SELECT COUNT(*) FROM bill_line_items WHERE bill_id = ?), ?, ?, ?, ?)",
        draft,
        draft,
        description,
        amount,
        now.isoformat(),
        "Credit" if amount < 0 else "Charge",
    )
    total = store.bill(ctx.db, draft)["total_due"] + amount
    ctx.db.execute("UPDATE bills SET total_due = ? WHERE bill_id = ?", total, draft)
