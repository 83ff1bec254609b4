"""Reading the back office's records: a lookup per kind that raises ``NOT_FOUND``, and row-to-model.

Tools look a record up here before they change anything, so the agent gets
the company's own error rather than a refusal from SQLite. A model is built
from its row with ``seahaven.toolkit.from_row``, column by field name.
"""

from __future__ import annotations

from typing import Any

import seahaven
from company_world.errors import NotFound
from company_world.models import Approval, Expense, Invoice, Staff
from seahaven.toolkit import from_row

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
    return from_row(Staff, row)


def invoice_model(row: dict[str, Any]) -> Invoice:
    """An ``invoices`` row as the agent sees it."""
    return from_row(Invoice, row)


def expense_model(row: dict[str, Any], decision: dict[str, Any] | None) -> Expense:
    """An ``expenses`` row, with its ``approvals`` row once decided, as the agent sees it."""
    approval = None if decision is None else from_row(Approval, decision)
    return from_row(Expense, row, decision=approval)


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
