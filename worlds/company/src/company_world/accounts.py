"""Working with the two payments accounts: choosing one, finding the customer, collecting by card.

Everything here goes through the payments world's own tools, by function, so
the processor's rules (its minimums, its fees, its ledger) hold for what the
back office does exactly as they do for the agent. Each call commits in the
payments store when it returns, whatever the company's tool does next.
"""

from __future__ import annotations

from dataclasses import dataclass

from payments_world.errors import CardError
from payments_world.models import Customer
from payments_world.tools.charges import create_charge
from payments_world.tools.customers import create_customer, list_customers
from payments_world.tools.payment_methods import attach_payment_method

import seahaven
from company_world.errors import InvalidInput, InvalidState
from company_world.types import Currency
from company_world.world import CompanyWorlds

__all__ = ["Collection", "account_for", "account_name", "collect", "customer_for", "money"]

_SYMBOLS = {"usd": "$", "eur": "€"}


def account_name(currency: Currency) -> str:
    """The node that holds money in ``currency``: the company's own, or the European entity's."""
    return "payments" if currency == "usd" else "payments_eu"


def account_for(ctx: seahaven.Ctx[CompanyWorlds], currency: Currency) -> seahaven.WorldHandle:
    """The payments account that collects ``currency``."""
    return ctx.worlds.payments if currency == "usd" else ctx.worlds.payments_eu


def money(amount: int, currency: str) -> str:
    """An amount in cents as people write it: $1,250.00, €80.00."""
    return f"{_SYMBOLS.get(currency, currency.upper() + ' ')}{amount // 100:,}.{amount % 100:02d}"


def customer_for(
    account: seahaven.WorldHandle, *, email: str, name: str | None, card_token: str | None
) -> Customer:
    """The account's customer with this email (the newest, if several), made if there is none.

    ``card_token`` is attached and made the default card; a customer new to the
    account must come with one, and a known one without a default card too.
    """
    known = account.call(list_customers, email=email, limit=1).data
    if known:
        customer = known[0]
        if card_token is not None:
            account.call(
                attach_payment_method,
                customer_id=customer.id,
                token=card_token,
                set_as_default=True,
            )
        elif customer.default_payment_method_id is None:
            raise InvalidState(
                f"customer {email} ({customer.id}) has no card on file; pass card_token with the "
                "card from their payment form",
                payments_customer_id=customer.id,
            )
        return customer
    if card_token is None:
        raise InvalidInput.on(
            "card_token",
            f"{email} is not a customer of this account yet; pass the card token from their "
            "payment form to save their card",
        )
    customer = account.call(create_customer, email=email, name=name)
    account.call(attach_payment_method, customer_id=customer.id, token=card_token)
    return customer


@dataclass(frozen=True, slots=True)
class Collection:
    """How collecting one payment went: the charge made, and why the card refused it, if it did."""

    charge_id: str
    paid: bool
    failure_code: str | None
    failure_message: str | None


def collect(
    account: seahaven.WorldHandle,
    *,
    customer_id: str,
    amount: int,
    currency: Currency,
    description: str,
    metadata: dict[str, str],
) -> Collection:
    """Charge the customer's default card. A refusal is an outcome to record, not an error."""
    try:
        charge = account.call(
            create_charge,
            customer_id=customer_id,
            amount=amount,
            currency=currency,
            description=description,
            metadata=metadata,
        )
    except CardError as refused:
        # The processor keeps the refused charge; its id is what a retry or a person cites.
        return Collection(refused.charge_id, False, refused.decline_code, refused.message)
    return Collection(charge.id, True, None, None)
