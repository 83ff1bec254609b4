"""The balance, and the ledger of balance transactions it is summed from."""

from __future__ import annotations

from typing import Any

import seahaven
from payments_world import ledger
from payments_world.models import Balance, BalanceTransaction, Page
from payments_world.pagination import list_page
from payments_world.store import balance_transaction_model, fetch
from payments_world.types import BalanceTransactionId, BalanceTransactionType, Currency, Limit
from payments_world.world import world

__all__ = ["get_balance", "get_balance_transaction", "list_balance_transactions"]


@world.tool
def get_balance(ctx: seahaven.Ctx) -> Balance:
    """Read the merchant's balance, per currency.

    Returns available, what may be paid out now, and pending, captured funds
    still settling, each a list of {currency, amount} in minor units, sorted by
    currency. Both are sums of the ledger of balance transactions: captures
    add the amount less the fee, refunds and payouts subtract, a canceled
    payout adds back. Available can go below zero when refunds exceed what
    has settled.
    """
    return ledger.balance(ctx)


@world.tool
def get_balance_transaction(
    ctx: seahaven.Ctx, balance_transaction_id: BalanceTransactionId
) -> BalanceTransaction:
    """Fetch one balance transaction (txn_...) by id.

    Errors: NOT_FOUND when no balance transaction has that id.
    """
    row = fetch(ctx, "balance_transaction", balance_transaction_id)
    return balance_transaction_model(row, ctx.clock.iso())


@world.tool
def list_balance_transactions(
    ctx: seahaven.Ctx,
    type: BalanceTransactionType | None = None,
    currency: Currency | None = None,
    source_id: str | None = None,
    limit: Limit = 10,
    starting_after: BalanceTransactionId | None = None,
) -> Page[BalanceTransaction]:
    """List the ledger, every movement of the merchant's money, newest first (ties: id, descending).

    Each entry has type (charge, refund, payout, payout_cancel), source_id (the
    ch_, re_ or po_ that moved the money), amount, fee, net (amount less fee,
    what it did to the balance), currency, available_on and status (available
    or pending).

    Args:
        type: Only entries of this type: charge, refund, payout or payout_cancel.
        currency: Only entries in this currency, such as usd.
        source_id: Only the entries of one charge, refund or payout, by its id
            (ch_..., re_... or po_...).
        limit: How many entries to return, 1 to 100 (default 10).
        starting_after: The next_starting_after of the previous page; leave it
            out for the first page.

    Returns a page: data, has_more, and next_starting_after (null on the last page).

    Errors: INVALID_INPUT when starting_after is not a balance transaction id.
    """
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("type", type), ("currency", currency), ("source_id", source_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    now = ctx.clock.iso()
    return list_page(
        ctx,
        table="balance_transactions",
        where=where,
        params=params,
        limit=limit,
        starting_after=starting_after,
        model=BalanceTransaction,
        to_model=lambda row: balance_transaction_model(row, now),
    )
