"""The company at a glance: people, invoices, expenses, and the money on both payments accounts."""

from __future__ import annotations

from typing import get_args

from payments_world.tools.balance import get_balance

import seahaven
from company_world.accounts import account_for, account_name
from company_world.models import (
    AccountBalance,
    CompanySummary,
    ExpenseTotal,
    Headcount,
    InvoiceTotal,
)
from company_world.types import Currency, Department
from company_world.world import CompanyWorlds, world

__all__ = ["get_company_summary"]


@world.tool
def get_company_summary(ctx: seahaven.Ctx[CompanyWorlds]) -> CompanySummary:
    """Summarise the company: headcount, invoices, expenses and both payments balances.

    Returns active and inactive staff counts; active headcount per department
    (every department, zeros included); invoices counted and totalled in cents
    per status and currency; expenses counted and totalled per status; and the
    available and pending balance of the usd account and of the European eur
    account, as their payments accounts report them now.
    """
    people = {
        row["status"]: row["n"]
        for row in ctx.db.rows("SELECT status, count(*) AS n FROM staff GROUP BY status")
    }
    active = {
        row["department"]: row["n"]
        for row in ctx.db.rows(
            "SELECT department, count(*) AS n FROM staff WHERE status = 'active'"
            " GROUP BY department"
        )
    }
    invoices = ctx.db.rows(
        "SELECT status, currency, count(*) AS n, sum(amount) AS total FROM invoices"
        " GROUP BY status, currency ORDER BY status, currency"
    )
    expenses = ctx.db.rows(
        "SELECT status, count(*) AS n, sum(amount) AS total FROM expenses"
        " GROUP BY status ORDER BY status"
    )
    balances = []
    currency: Currency
    for currency in ("usd", "eur"):
        balance = account_for(ctx, currency).call(get_balance)
        balances.append(
            AccountBalance(
                account=account_name(currency),
                currency=currency,
                available=balance.available_in(currency),
                pending=balance.pending_in(currency),
            )
        )
    return CompanySummary(
        active_staff=people.get("active", 0),
        inactive_staff=people.get("inactive", 0),
        headcount=[
            Headcount(department=department, active=active.get(department, 0))
            for department in get_args(Department)
        ],
        invoices=[
            InvoiceTotal(
                status=row["status"], currency=row["currency"], count=row["n"], amount=row["total"]
            )
            for row in invoices
        ],
        expenses=[
            ExpenseTotal(status=row["status"], count=row["n"], amount=row["total"])
            for row in expenses
        ],
        balances=balances,
    )
