"""The merchant's own bank accounts, which payouts are sent to."""

from __future__ import annotations

from typing import Any

import seahaven
from payments_world.ids import new_id
from payments_world.models import BankAccount, Page
from payments_world.pagination import list_page
from payments_world.store import bank_account_model, fetch
from payments_world.types import (
    AccountNumber,
    BankAccountId,
    Currency,
    Limit,
    Name,
    RoutingNumber,
)
from payments_world.world import world

__all__ = ["add_bank_account", "list_bank_accounts"]


@world.tool
def add_bank_account(
    ctx: seahaven.Ctx,
    currency: Currency,
    account_holder_name: Name,
    account_number: AccountNumber,
    routing_number: RoutingNumber | None = None,
    set_as_default: bool = False,
) -> BankAccount:
    """Add a bank account of the merchant's, in one currency, for payouts to be sent to.

    Args:
        currency: The only currency the account receives, such as usd.
        account_holder_name: The person or company the bank holds the account
            for, as the bank spells it.
        account_number: 4 to 34 digits or capital letters (an IBAN fits); only
            its last four digits are kept.
        routing_number: 6 to 9 digits, where the bank uses one.
        set_as_default: Make it the account payouts in its currency go to when
            they name none. The first account in a currency becomes its
            default anyway.

    Returns the bank account (ba_...).

    Errors: INVALID_INPUT when an argument is malformed.
    """
    account_id = new_id(ctx, "ba")
    has_default = ctx.db.one(
        "SELECT 1 FROM bank_accounts WHERE currency = ? AND default_for_currency = 1", currency
    )
    becomes_default = set_as_default or has_default is None
    if becomes_default and has_default is not None:
        ctx.db.execute(
            "UPDATE bank_accounts SET default_for_currency = 0"
            " WHERE currency = ? AND default_for_currency = 1",
            currency,
        )
    ctx.db.execute(
        "INSERT INTO bank_accounts (id, currency, account_holder_name, routing_number, last4,"
        " default_for_currency, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        account_id,
        currency,
        account_holder_name,
        routing_number,
        account_number[-4:],
        1 if becomes_default else 0,
        ctx.clock.iso(),
    )
    return bank_account_model(fetch(ctx, "bank_account", account_id))


@world.tool
def list_bank_accounts(
    ctx: seahaven.Ctx,
    currency: Currency | None = None,
    limit: Limit = 10,
    starting_after: BankAccountId | None = None,
) -> Page[BankAccount]:
    """List the merchant's bank accounts, newest first (ties broken by id, descending).

    Args:
        currency: Only accounts receiving this currency, such as eur.
        limit: How many accounts to return, 1 to 100 (default 10).
        starting_after: The next_starting_after of the previous page; leave it
            out for the first page.

    Returns a page: data, has_more, and next_starting_after (null on the last page).
    Each account says whether it is the default for its currency.

    Errors: INVALID_INPUT when starting_after is not a bank account id.
    """
    where: list[str] = []
    params: list[Any] = []
    if currency is not None:
        where.append("currency = ?")
        params.append(currency)
    return list_page(
        ctx,
        table="bank_accounts",
        where=where,
        params=params,
        limit=limit,
        starting_after=starting_after,
        model=BankAccount,
        to_model=bank_account_model,
    )
