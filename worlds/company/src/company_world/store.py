"""Reading the back office's records: a lookup per kind that raises ``NOT_FOUND``, and row-to-model.

Tools look a record up here before they change anything, so the agent gets
the company's own error rather than a refusal from SQLite.
"""

from __future__ import annotations

from typing import Any

import seahaven
from company_world.errors import NotFound
from company_world.models import Approval, Expense, Invoice, Staff

__all__ = [
    "expense_model",
    "fetch",
    "invoice_model",
    "load_expense",
    "load_invoice",
    "load_staff",
    "staff_model",
]

# The table each kind lives in, and the word an error uses for it.
_KINDS: dict[str, tuple[str, str]] = {
    "staff": ("staff", "member of staff"),
    "invoice": ("invoices", "invoice"),
    "expense": ("expenses", "expense"),
}


def fetch(ctx: seahaven.Ctx[Any], kind: str, record_id: str) -> dict[str, Any]:
    """The row of ``record_id``, or ``NOT_FOUND``."""
    table, word = _KINDS[kind]
    row = ctx.db.one(f"SELECT * FROM {table} WHERE id = ?", record_id)
    if row is None:
        raise NotFound(word, record_id)
    return row


def staff_model(row: dict[str, Any]) -> Staff:
    """A ``staff`` row as the agent sees it."""
    return Staff(
        id=row["id"],
        full_name=row["full_name"],
        email=row["email"],
        title=row["title"],
        role=row["role"],
        department=row["department"],
        manager_id=row["manager_id"],
        chat_user_id=row["chat_user_id"],
        reimbursement_bank_account_id=row["reimbursement_bank_account_id"],
        status=row["status"],
        start_date=row["start_date"],
        end_date=row["end_date"],
        created_at=row["created_at"],
    )


def invoice_model(row: dict[str, Any]) -> Invoice:
    """An ``invoices`` row as the agent sees it."""
    return Invoice(
        id=row["id"],
        number=row["number"],
        customer_email=row["customer_email"],
        customer_name=row["customer_name"],
        payments_customer_id=row["payments_customer_id"],
        amount=row["amount"],
        currency=row["currency"],
        description=row["description"],
        status=row["status"],
        charge_id=row["charge_id"],
        failure_code=row["failure_code"],
        failure_message=row["failure_message"],
        refund_id=row["refund_id"],
        announcement_message_id=row["announcement_message_id"],
        issued_by=row["issued_by"],
        issued_at=row["issued_at"],
        due_date=row["due_date"],
        paid_at=row["paid_at"],
        refunded_at=row["refunded_at"],
    )


def expense_model(row: dict[str, Any], decision: dict[str, Any] | None) -> Expense:
    """An ``expenses`` row, with its ``approvals`` row once decided, as the agent sees it."""
    return Expense(
        id=row["id"],
        staff_id=row["staff_id"],
        submitted_by=row["submitted_by"],
        amount=row["amount"],
        currency=row["currency"],
        category=row["category"],
        description=row["description"],
        incurred_on=row["incurred_on"],
        status=row["status"],
        payout_id=row["payout_id"],
        submitted_at=row["submitted_at"],
        decided_at=row["decided_at"],
        decision=None
        if decision is None
        else Approval(
            id=decision["id"],
            expense_id=decision["expense_id"],
            decided_by=decision["decided_by"],
            decision=decision["decision"],
            note=decision["note"],
            decided_at=decision["decided_at"],
        ),
    )


def load_staff(ctx: seahaven.Ctx[Any], staff_id: str) -> Staff:
    """One member of staff, or ``NOT_FOUND``."""
    return staff_model(fetch(ctx, "staff", staff_id))


def load_invoice(ctx: seahaven.Ctx[Any], invoice_id: str) -> Invoice:
    """One invoice, or ``NOT_FOUND``."""
    return invoice_model(fetch(ctx, "invoice", invoice_id))


def load_expense(ctx: seahaven.Ctx[Any], expense_id: str) -> Expense:
    """One expense with its decision, or ``NOT_FOUND``."""
    row = fetch(ctx, "expense", expense_id)
    decision = ctx.db.one("SELECT * FROM approvals WHERE expense_id = ?", expense_id)
    return expense_model(row, decision)
