"""Expenses: file one, read and list them, and approve (reimbursing it) or reject it.

Approving an expense reimburses it: the usd payments account pays the amount
out to the bank account the person has on file, and the decision is recorded
beside it. Nobody decides on their own expense, and only finance (and admins)
see everybody's.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from payments_world.tools.payouts import create_payout
from pydantic import Field

import seahaven
from company_world import audit
from company_world.access import Actor, require_actor
from company_world.dates import today
from company_world.errors import Forbidden, InvalidInput, InvalidState
from company_world.ids import new_id
from company_world.models import Expense, ExpensePage
from company_world.pagination import keyset_page
from company_world.store import expense_model, fetch, load_expense
from company_world.types import (
    Category,
    Cursor,
    Date,
    Description,
    ExpenseAmount,
    ExpenseId,
    ExpenseStatus,
    Limit,
    Note,
    StaffId,
)
from company_world.world import CompanyWorlds, world

__all__ = ["approve_expense", "get_expense", "list_expenses", "reject_expense", "submit_expense"]

Reason = Annotated[
    str,
    Field(
        min_length=1,
        max_length=500,
        pattern=r"\S",
        description="Why, for the person: 1 to 500 characters.",
    ),
]


def _undecided(ctx: seahaven.Ctx[Any], actor: Actor, expense_id: str) -> dict[str, Any]:
    """An expense still waiting for a decision that ``actor`` may make."""
    row = fetch(ctx, "expense", expense_id)
    if row["status"] != "submitted":
        raise InvalidState(
            f"expense {expense_id} was already decided: it is {row['status']}",
            expense_id=expense_id,
            status=row["status"],
        )
    if row["staff_id"] == actor.id:
        raise Forbidden(
            "nobody decides on their own expense; someone else in finance must",
            expense_id=expense_id,
        )
    return row


def _decide(
    ctx: seahaven.Ctx[Any],
    actor: Actor,
    expense_id: str,
    decision: str,
    note: str | None,
    payout_id: str | None,
) -> None:
    """Record a decision: the expense's new status and its approvals row."""
    now = ctx.clock.iso()
    ctx.db.execute(
        "UPDATE expenses SET status = ?, payout_id = ?, decided_at = ? WHERE id = ?",
        "reimbursed" if decision == "approved" else "rejected",
        payout_id,
        now,
        expense_id,
    )
    ctx.db.execute(
        "INSERT INTO approvals (id, expense_id, decided_by, decision, note, decided_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        new_id(ctx, "apr"),
        expense_id,
        actor.id,
        decision,
        note or None,
        now,
    )
    audit.record(
        ctx,
        actor_id=actor.id,
        action=f"expense.{decision}",
        subject_id=expense_id,
        payout_id=payout_id,
    )


@world.tool
def submit_expense(
    ctx: seahaven.Ctx[CompanyWorlds],
    amount: ExpenseAmount,
    category: Category,
    description: Description,
    incurred_on: Date,
    staff_id: StaffId | None = None,
) -> Expense:
    """File an expense you paid yourself, to be reimbursed once finance approves it.

    Args:
        amount: What was spent, in usd cents: 1 to 1000000 ($10,000).
        category: What it was spent on: travel, meals, equipment, software,
            training, office or other.
        description: What it was for, in a line.
        incurred_on: The date it was spent, YYYY-MM-DD, not in the future.
        staff_id: To file it for someone else, which only admin and finance
            may do (default: you).

    Returns the expense (exp_...), status submitted.

    Errors: FORBIDDEN for filing for someone else without that role;
    NOT_FOUND for an unknown staff_id; INVALID_STATE when that person has
    left; INVALID_INPUT for a date in the future.
    """
    actor = require_actor(ctx)
    owner_id = staff_id if staff_id is not None else actor.id
    if owner_id != actor.id and not actor.in_finance:
        raise Forbidden("only admin and finance may file an expense for someone else")
    owner = fetch(ctx, "staff", owner_id)
    if owner["status"] != "active":
        raise InvalidState(f"{owner['full_name']} ({owner_id}) has left", staff_id=owner_id)
    spent = incurred_on.isoformat()
    if spent > today(ctx):
        raise InvalidInput.on("incurred_on", f"{spent} is in the future; today is {today(ctx)}")
    expense_id = new_id(ctx, "exp")
    ctx.db.execute(
        "INSERT INTO expenses (id, staff_id, submitted_by, amount, currency, category,"
        " description, incurred_on, status, payout_id, submitted_at, decided_at)"
        " VALUES (?, ?, ?, ?, 'usd', ?, ?, ?, 'submitted', NULL, ?, NULL)",
        expense_id,
        owner_id,
        actor.id,
        amount,
        category,
        description.strip(),
        spent,
        ctx.clock.iso(),
    )
    audit.record(
        ctx,
        actor_id=actor.id,
        action="expense.submitted",
        subject_id=expense_id,
        staff_id=owner_id,
        amount=amount,
    )
    return load_expense(ctx, expense_id)


@world.tool
def list_expenses(
    ctx: seahaven.Ctx[CompanyWorlds],
    status: ExpenseStatus | None = None,
    staff_id: StaffId | None = None,
    limit: Limit = 20,
    cursor: Cursor | None = None,
) -> ExpensePage:
    """List expenses, newest first (ties broken by id, descending), each with its decision.

    Admin and finance see everybody's, or one person's with staff_id; anyone
    else sees only their own.

    Args:
        status: Only expenses in this status: submitted, reimbursed or rejected.
        staff_id: Only this person's expenses (admin and finance only).
        limit: How many expenses to return in this page, 1 to 100 (default 20).
        cursor: The next_cursor of the previous page. Leave it out for the first
            page, and pass the other arguments unchanged.

    Returns a page: expenses, and next_cursor (null on the last page).

    Errors: FORBIDDEN for someone else's expenses without admin or finance;
    INVALID_INPUT for a cursor from another listing.
    """
    actor = require_actor(ctx)
    if not actor.in_finance:
        if staff_id is not None and staff_id != actor.id:
            raise Forbidden("only admin and finance see other people's expenses")
        staff_id = actor.id
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("status", status), ("staff_id", staff_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    rows, next_cursor = keyset_page(
        ctx,
        scope=("list_expenses", status, staff_id),
        table="expenses",
        where=where,
        params=params,
        order_by="submitted_at",
        descending=True,
        limit=limit,
        cursor=cursor,
    )
    decisions = {
        decision["expense_id"]: decision
        for decision in ctx.db.rows(
            "SELECT * FROM approvals WHERE expense_id IN (SELECT value FROM json_each(?))",
            json.dumps([row["id"] for row in rows]),
        )
    }
    return ExpensePage(
        expenses=[expense_model(row, decisions.get(row["id"])) for row in rows],
        next_cursor=next_cursor,
    )


@world.tool
def get_expense(ctx: seahaven.Ctx[CompanyWorlds], expense_id: ExpenseId) -> Expense:
    """Fetch one expense by id, with the decision on it once made.

    Errors: NOT_FOUND when no expense has that id; FORBIDDEN for someone
    else's expense without admin or finance.
    """
    actor = require_actor(ctx)
    expense = load_expense(ctx, expense_id)
    if expense.staff_id != actor.id and not actor.in_finance:
        raise Forbidden("only admin and finance see other people's expenses")
    return expense


@world.tool
def approve_expense(
    ctx: seahaven.Ctx[CompanyWorlds], expense_id: ExpenseId, note: Note | None = None
) -> Expense:
    """Approve an expense and reimburse it: the usd account pays it out to the person's bank.

    Arguments: expense_id, an expense with status submitted that is not your
    own; note, for the record.

    The payout goes to the reimbursement account the person has on file and
    arrives in two days; the expense becomes reimbursed, with payout_id, and
    the decision is recorded with your name.

    Returns the expense, with its decision.

    Errors: NOT_FOUND for an unknown expense; FORBIDDEN for your own expense;
    INVALID_STATE when it was already decided, or the person has no
    reimbursement account on file (set_reimbursement_account adds one); the
    payments account's own AMOUNT_TOO_LARGE when its available usd balance
    cannot cover the payout (nothing is recorded then).
    """
    actor = require_actor(ctx)
    row = _undecided(ctx, actor, expense_id)
    owner = fetch(ctx, "staff", row["staff_id"])
    bank_account_id = owner["reimbursement_bank_account_id"]
    if bank_account_id is None:
        raise InvalidState(
            f"{owner['full_name']} has no reimbursement account on file; they (or hr, finance) "
            "must set one first with set_reimbursement_account",
            staff_id=owner["id"],
        )
    payout = ctx.worlds.payments.call(
        create_payout,
        amount=row["amount"],
        currency="usd",
        bank_account_id=bank_account_id,
        description=f"Reimbursement of expense {expense_id} for {owner['full_name']}",
    )
    _decide(ctx, actor, expense_id, "approved", note, payout.id)
    return load_expense(ctx, expense_id)


@world.tool
def reject_expense(
    ctx: seahaven.Ctx[CompanyWorlds], expense_id: ExpenseId, reason: Reason
) -> Expense:
    """Reject an expense, saying why. Nothing is paid.

    Arguments: expense_id, an expense with status submitted that is not your
    own; reason, shown to the person.

    Returns the expense, now rejected, with its decision.

    Errors: NOT_FOUND for an unknown expense; FORBIDDEN for your own expense;
    INVALID_STATE when it was already decided.
    """
    actor = require_actor(ctx)
    _undecided(ctx, actor, expense_id)
    _decide(ctx, actor, expense_id, "rejected", reason.strip(), None)
    return load_expense(ctx, expense_id)
