"""A small typed composite world, checked by mypy (see ``[tool.mypy]`` in pyproject.toml).

It has no ``from __future__ import annotations`` on purpose: its tools register
with real annotation objects, where the test modules register string ones.
"""

from pydantic import BaseModel

import seahaven

CHARGES = "CREATE TABLE charges (id TEXT PRIMARY KEY, amount INTEGER NOT NULL) STRICT;"
INVOICES = "CREATE TABLE invoices (id TEXT PRIMARY KEY, charge_id TEXT NOT NULL) STRICT;"


class Charge(BaseModel):
    """One charge, as the payments world returns it."""

    id: str
    amount: int


class Invoice(BaseModel):
    """One invoice, and the charge it was filed against."""

    id: str
    charge: Charge


payments = seahaven.World(
    name="payments", version="1.0.0", schema=CHARGES, state_format="seahaven.state/1"
)


@payments.tool
def create_charge(ctx: seahaven.Ctx, amount: int) -> Charge:
    """Charge the account and return the charge."""
    charge = Charge(id=ctx.ids.uuid(), amount=amount)
    ctx.db.execute("INSERT INTO charges (id, amount) VALUES (?, ?)", charge.id, charge.amount)
    return charge


class CompanyWorlds(seahaven.Worlds):
    """The company's children, named for a type checker."""

    payments: seahaven.WorldHandle


company = seahaven.World(
    name="company", version="0.1.0", schema=INVOICES, state_format="seahaven.state/1"
)
company.add_world(payments, name="payments", tool_prefix="pay_")


@company.tool
def invoice(ctx: seahaven.Ctx[CompanyWorlds], amount: int) -> Invoice:
    """Charge the company's account and file an invoice against the charge."""
    charge: Charge = ctx.worlds.payments.call(create_charge, amount=amount)
    filed = Invoice(id=ctx.ids.uuid(), charge=charge)
    ctx.db.execute("INSERT INTO invoices (id, charge_id) VALUES (?, ?)", filed.id, charge.id)
    return filed


def invoice_and_charge(amount: int) -> tuple[Invoice, Charge]:
    """File one invoice and take one direct charge, each called by its function."""
    with company.instance(seed=1) as inst:
        filed = inst.call(invoice, amount=amount)
        charged = inst.call(create_charge, amount)
        return filed, charged
