"""Payouts: send available funds to one of the merchant's bank accounts, read, list and cancel."""

from __future__ import annotations

from typing import Any

import seahaven
from payments_world import ledger
from payments_world.errors import AmountTooLarge, InvalidInput, InvalidState
from payments_world.ids import new_id
from payments_world.models import Page, Payout
from payments_world.pagination import list_page
from payments_world.store import fetch, payout_model
from payments_world.timestamps import date_after
from payments_world.types import (
    Amount,
    BankAccountId,
    Currency,
    Description,
    Limit,
    PayoutId,
    PayoutStatus,
)
from payments_world.world import world

__all__ = ["cancel_payout", "create_payout", "get_payout", "list_payouts"]

ARRIVAL_DAYS = 2
"""Days from creating a payout to the money reaching the bank."""


def _bank_account_for(
    ctx: seahaven.Ctx, currency: str, bank_account_id: str | None
) -> dict[str, Any]:
    """The account a payout goes to: the one named, or else the currency's default."""
    if bank_account_id is None:
        account = ctx.db.one(
            "SELECT * FROM bank_accounts WHERE currency = ? AND default_for_currency = 1",
            currency,
        )
        if account is None:
            raise InvalidState(
                f"there is no default {currency} bank account; add one, or name a bank_account_id",
                currency=currency,
            )
        return account
    account = fetch(ctx, "bank_account", bank_account_id)
    if account["currency"] != currency:
        raise InvalidInput.on(
            "currency",
            f"bank account {bank_account_id} receives {account['currency']}, not {currency}",
        )
    return account


@world.tool
def create_payout(
    ctx: seahaven.Ctx,
    amount: Amount,
    currency: Currency,
    bank_account_id: BankAccountId | None = None,
    description: Description | None = None,
) -> Payout:
    """Pay out part of the available balance to one of the merchant's bank accounts.

    Args:
        amount: In the currency's minor unit, at most the available balance in
            that currency (pending funds cannot be paid out yet).
        currency: The currency to pay out, such as usd.
        bank_account_id: An account receiving that currency (default: the
            currency's default bank account).
        description: A note for the merchant, up to 500 characters.

    Returns the payout (po_...), status "pending", with the arrival_date two
    days out. The amount leaves the available balance at once.

    Errors: AMOUNT_TOO_LARGE when amount exceeds the available balance
    (details.maximum is what is available); NOT_FOUND for an unknown bank
    account; INVALID_STATE when no bank account was named and the currency
    has no default; INVALID_INPUT when the bank account takes another currency.
    """
    account = _bank_account_for(ctx, currency, bank_account_id)
    available = ledger.available_balance(ctx, currency)
    if amount > available:
        raise AmountTooLarge(
            f"cannot pay out {amount}; the available {currency} balance is {available}",
            requested=amount,
            maximum=max(available, 0),
            currency=currency,
        )
    payout_id = new_id(ctx, "po")
    transaction_id = ledger.record(
        ctx,
        kind="payout",
        source_id=payout_id,
        amount=-amount,
        currency=currency,
        description=f"Payout to bank account {account['id']}",
    )
    ctx.db.execute(
        "INSERT INTO payouts (id, bank_account_id, amount, currency, status, arrival_date,"
        " description, balance_transaction_id, created_at)"
        " VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
        payout_id,
        account["id"],
        amount,
        currency,
        date_after(ctx, ARRIVAL_DAYS),
        description or None,
        transaction_id,
        ctx.clock.iso(),
    )
    return payout_model(fetch(ctx, "payout", payout_id))


@world.tool
def cancel_payout(ctx: seahaven.Ctx, payout_id: PayoutId) -> Payout:
    """Cancel a pending payout. Its amount returns to the available balance.

    Arguments: payout_id, a payout with status "pending".

    Returns the payout, now "canceled".

    Errors: NOT_FOUND for an unknown payout; INVALID_STATE when the payout is
    already paid or canceled.
    """
    payout = fetch(ctx, "payout", payout_id)
    if payout["status"] != "pending":
        raise InvalidState(
            f"payout {payout_id} is {payout['status']}; only a pending payout can be canceled",
            payout_id=payout_id,
            status=payout["status"],
        )
    ledger.record(
        ctx,
        kind="payout_cancel",
        source_id=payout_id,
        amount=payout["amount"],
        currency=payout["currency"],
        description=f"Canceled payout {payout_id}",
    )
    ctx.db.execute(
        "UPDATE payouts SET status = 'canceled', canceled_at = ? WHERE id = ?",
        ctx.clock.iso(),
        payout_id,
    )
    return payout_model(fetch(ctx, "payout", payout_id))


@world.tool
def get_payout(ctx: seahaven.Ctx, payout_id: PayoutId) -> Payout:
    """Fetch one payout by id.

    Errors: NOT_FOUND when no payout has that id.
    """
    return payout_model(fetch(ctx, "payout", payout_id))


@world.tool
def list_payouts(
    ctx: seahaven.Ctx,
    status: PayoutStatus | None = None,
    limit: Limit = 10,
    starting_after: PayoutId | None = None,
) -> Page[Payout]:
    """List payouts, newest first (ties broken by id, descending).

    Args:
        status: Only payouts in this status: pending, paid or canceled.
        limit: How many payouts to return, 1 to 100 (default 10).
        starting_after: The next_starting_after of the previous page; leave it
            out for the first page.

    Returns a page: data, has_more, and next_starting_after (null on the last page).

    Errors: INVALID_INPUT when starting_after is not a payout id.
    """
    return list_page(
        ctx,
        table="payouts",
        where=["status = ?"] if status is not None else [],
        params=[status] if status is not None else [],
        limit=limit,
        starting_after=starting_after,
        model=Payout,
        to_model=payout_model,
    )
