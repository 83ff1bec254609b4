"""What the tools return: strict, frozen pydantic models, one per record the back office shows.

In process a caller gets the objects themselves, typed; over the wire they
serialise to the same fields as JSON.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from company_world.types import (
    Category,
    Currency,
    Decision,
    Department,
    ExpenseStatus,
    InvoiceStatus,
    Role,
    StaffStatus,
)

__all__ = [
    "AccountBalance",
    "Approval",
    "CompanySummary",
    "Expense",
    "ExpensePage",
    "ExpenseTotal",
    "Headcount",
    "Invoice",
    "InvoicePage",
    "InvoiceTotal",
    "Staff",
    "StaffPage",
]


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")


class Staff(_Model):
    """A member of staff."""

    id: str
    full_name: str
    email: str
    title: str
    role: Role
    department: Department
    manager_id: str | None
    chat_user_id: str
    # The payout destination (ba_...) in the usd payments account, once one is on file.
    reimbursement_bank_account_id: str | None
    status: StaffStatus
    start_date: str
    end_date: str | None
    created_at: str


class StaffPage(_Model):
    """A page of staff, alphabetical. Pass next_cursor back for the next one; None on the last."""

    staff: list[Staff]
    next_cursor: str | None


class Invoice(_Model):
    """An invoice to a customer, and how collecting it by card went."""

    id: str
    number: str
    customer_email: str
    customer_name: str | None
    payments_customer_id: str
    amount: int
    currency: Currency
    description: str
    status: InvoiceStatus
    # The latest charge made to collect it, in the payments account of its currency.
    charge_id: str
    failure_code: str | None
    failure_message: str | None
    refund_id: str | None
    announcement_message_id: str | None
    issued_by: str
    issued_at: str
    due_date: str
    paid_at: str | None
    refunded_at: str | None


class InvoicePage(_Model):
    """A page of invoices, newest first. Pass next_cursor back for the next one."""

    invoices: list[Invoice]
    next_cursor: str | None


class Approval(_Model):
    """The decision on an expense: who made it, when, and why."""

    id: str
    expense_id: str
    decided_by: str
    decision: Decision
    note: str | None
    decided_at: str


class Expense(_Model):
    """An expense a member of staff paid and wants back, with the decision on it once made."""

    id: str
    staff_id: str
    submitted_by: str
    amount: int
    currency: Literal["usd"]
    category: Category
    description: str
    incurred_on: str
    status: ExpenseStatus
    # The payout that reimbursed it, in the usd payments account.
    payout_id: str | None
    submitted_at: str
    decided_at: str | None
    decision: Approval | None


class ExpensePage(_Model):
    """A page of expenses, newest first. Pass next_cursor back for the next one."""

    expenses: list[Expense]
    next_cursor: str | None


class Headcount(_Model):
    """How many active people work in one department."""

    department: Department
    active: int


class InvoiceTotal(_Model):
    """How many invoices are in one status and currency, and what they add up to, in cents."""

    status: InvoiceStatus
    currency: Currency
    count: int
    amount: int


class ExpenseTotal(_Model):
    """How many expenses are in one status, and what they add up to, in usd cents."""

    status: ExpenseStatus
    count: int
    amount: int


class AccountBalance(_Model):
    """One payments account's balance in its own currency, in cents."""

    account: str
    currency: Currency
    available: int
    pending: int


class CompanySummary(_Model):
    """The company at a glance: people, invoices, expenses and money."""

    active_staff: int
    inactive_staff: int
    headcount: list[Headcount]
    invoices: list[InvoiceTotal]
    expenses: list[ExpenseTotal]
    balances: list[AccountBalance]
