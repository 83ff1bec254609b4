"""The balance ledger: every movement of the merchant's money is one balance transaction.

The balance is never stored. It is the sum of ``net`` over the ledger, per
currency: available once a row's ``available_on`` has passed on the instance's
clock, pending until then. Captured funds settle after the account's
settlement delay; refunds, payouts and cancelled payouts move available money
at once.
"""

from __future__ import annotations

from datetime import timedelta

import seahaven
from payments_world.ids import new_id
from payments_world.models import Balance, BalanceAmount
from payments_world.timestamps import canonical

__all__ = ["available_balance", "balance", "record", "settlement_days"]


def settlement_days(ctx: seahaven.Ctx) -> int:
    """How many days captured funds stay pending on this instance (set at instance startup)."""
    days: int = ctx.state.get("settlement_days", 0)
    return days


def record(
    ctx: seahaven.Ctx,
    *,
    kind: str,
    source_id: str,
    amount: int,
    currency: str,
    fee: int = 0,
    settles_in_days: int = 0,
    description: str | None = None,
) -> str:
    """Write one ledger row and return its ``txn_`` id. ``amount`` is signed: money in is > 0."""
    transaction_id = new_id(ctx, "txn")
    # One reading of the clock, so an entry that settles at once is available at its own instant.
    now = ctx.clock.now()
    ctx.db.execute(
        "INSERT INTO balance_transactions (id, type, source_id, amount, fee, net, currency,"
        " description, created_at, available_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        transaction_id,
        kind,
        source_id,
        amount,
        fee,
        amount - fee,
        currency,
        description,
        canonical(now),
        canonical(now + timedelta(days=settles_in_days)),
    )
    return transaction_id


def balance(ctx: seahaven.Ctx) -> Balance:
    """The balance per currency, summed from the ledger at the clock's current reading."""
    now = ctx.clock.iso()
    rows = ctx.db.rows(
        "SELECT currency,"
        " SUM(CASE WHEN available_on <= ? THEN net ELSE 0 END) AS available,"
        " SUM(CASE WHEN available_on > ? THEN net ELSE 0 END) AS pending"
        " FROM balance_transactions GROUP BY currency ORDER BY currency",
        now,
        now,
    )
    return Balance(
        available=[
            BalanceAmount(currency=row["currency"], amount=row["available"]) for row in rows
        ],
        pending=[BalanceAmount(currency=row["currency"], amount=row["pending"]) for row in rows],
    )


def available_balance(ctx: seahaven.Ctx, currency: str) -> int:
    """The available balance in one currency: what a payout may take now."""
    row = ctx.db.one(
        "SELECT COALESCE(SUM(net), 0) AS available FROM balance_transactions"
        " WHERE currency = ? AND available_on <= ?",
        currency,
        ctx.clock.iso(),
    )
    return int(row["available"]) if row is not None else 0
