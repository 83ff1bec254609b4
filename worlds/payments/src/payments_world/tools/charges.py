"""Charges: authorise a card, capture now or later (in full or in part), release, read and list."""

from __future__ import annotations

from typing import Any

import seahaven
from payments_world import ledger
from payments_world.errors import (
    AmountTooLarge,
    CardDeclined,
    CardError,
    ExpiredCard,
    InsufficientFunds,
    InvalidState,
    NotFound,
    ProcessingError,
)
from payments_world.ids import new_id
from payments_world.models import Charge, Page
from payments_world.money import check_minimum, fee_for
from payments_world.pagination import list_page
from payments_world.store import charge_model, dump_metadata, fetch
from payments_world.tokens import TEST_CARDS, Outcome
from payments_world.types import (
    Amount,
    ChargeId,
    ChargeStatus,
    Currency,
    CustomerId,
    Description,
    Limit,
    Metadata,
    PaymentMethodId,
)
from payments_world.world import world

__all__ = ["cancel_charge", "capture_charge", "create_charge", "get_charge", "list_charges"]

# What the issuer says for each refusal: the error raised, and the message kept on the charge.
_REFUSALS: dict[Outcome, tuple[type[CardError], str]] = {
    "card_declined": (CardDeclined, "Your card was declined."),
    "insufficient_funds": (InsufficientFunds, "Your card has insufficient funds."),
    "expired_card": (ExpiredCard, "Your card has expired."),
    "processing_error": (
        ProcessingError,
        "An error occurred while processing your card. Try again in a little bit.",
    ),
}


def _take_funds(ctx: seahaven.Ctx, charge_id: str, amount: int, currency: str) -> None:
    """Take ``amount`` of an authorised charge: write its ledger row and mark it captured."""
    transaction_id = ledger.record(
        ctx,
        kind="charge",
        source_id=charge_id,
        amount=amount,
        fee=fee_for(amount, currency),
        currency=currency,
        settles_in_days=ledger.settlement_days(ctx),
        description=f"Payment for charge {charge_id}",
    )
    ctx.db.execute(
        "UPDATE charges SET status = 'succeeded', amount_captured = ?, captured_at = ?,"
        " balance_transaction_id = ? WHERE id = ?",
        amount,
        ctx.clock.iso(),
        transaction_id,
        charge_id,
    )


def _payment_method_for(
    ctx: seahaven.Ctx, customer: dict[str, Any], payment_method_id: str | None
) -> dict[str, Any]:
    """The card a charge will use: the one named, or else the customer's default."""
    if payment_method_id is None:
        payment_method_id = customer["default_payment_method_id"]
        if payment_method_id is None:
            raise InvalidState(
                f"customer {customer['id']} has no default payment method; attach a card or "
                "name a payment_method_id",
                customer_id=customer["id"],
            )
    method = fetch(ctx, "payment_method", payment_method_id)
    if method["customer_id"] != customer["id"]:
        raise InvalidState(
            f"payment method {payment_method_id} belongs to another customer",
            payment_method_id=payment_method_id,
            customer_id=customer["id"],
        )
    if method["detached_at"] is not None:
        raise InvalidState(
            f"payment method {payment_method_id} was detached and cannot be charged",
            payment_method_id=payment_method_id,
        )
    return method


# A declined charge is recorded, as a real processor records it, and then the card
# error is raised. A tool transaction would roll the record back with the error, so
# this tool opens its own and raises after it commits.
@world.tool(transaction=False)
def create_charge(
    ctx: seahaven.Ctx,
    customer_id: CustomerId,
    amount: Amount,
    currency: Currency,
    payment_method_id: PaymentMethodId | None = None,
    capture: bool = True,
    description: Description | None = None,
    metadata: Metadata | None = None,
) -> Charge:
    """Charge a customer's card.

    Args:
        customer_id: The customer to charge, such as cus_4fG7kQ2mXw9pLs.
        amount: A positive integer in the currency's minor unit (1999 is $19.99
            in usd), at least the currency's minimum (50 for usd, eur, cad, aud
            and jpy; 30 for gbp).
        currency: One of usd, eur, gbp, cad, aud, jpy.
        payment_method_id: A card attached to this customer (default: the
            customer's default card).
        capture: True (the default) takes the money now; false only authorises
            it, to be captured later.
        description: A note for the merchant, up to 500 characters.
        metadata: Up to 20 string pairs of the merchant's own, such as
            {"order_id": "1042"}.

    Returns the charge (ch_...): status "succeeded" when captured,
    "requires_capture" when only authorised. A capture adds the amount less
    the processing fee (2.9% + a fixed fee) to the balance.

    Errors: CARD_DECLINED, INSUFFICIENT_FUNDS, EXPIRED_CARD or PROCESSING_ERROR
    when the card is refused; the refused charge is still recorded with status
    "failed", and details.charge_id names it. NOT_FOUND for an unknown or
    deleted customer or an unknown payment method; INVALID_STATE when the
    customer has no default card, or the card is detached or belongs to
    someone else; INVALID_INPUT for a malformed argument or an amount below
    the minimum.
    """
    customer = fetch(ctx, "customer", customer_id)
    method = _payment_method_for(ctx, customer, payment_method_id)
    check_minimum("amount", amount, currency)
    outcome = TEST_CARDS[method["token"]].outcome
    charge_id = new_id(ctx, "ch")
    refusal = _REFUSALS.get(outcome)
    with ctx.db.transaction():
        ctx.db.execute(
            "INSERT INTO charges (id, customer_id, payment_method_id, amount, amount_captured,"
            " amount_refunded, currency, status, failure_code, failure_message, description,"
            " metadata, created_at) VALUES (?, ?, ?, ?, 0, 0, ?, ?, ?, ?, ?, ?, ?)",
            charge_id,
            customer_id,
            method["id"],
            amount,
            currency,
            "failed" if refusal is not None else "requires_capture",
            outcome if refusal is not None else None,
            refusal[1] if refusal is not None else None,
            description or None,
            dump_metadata(metadata or {}),
            ctx.clock.iso(),
        )
        if refusal is None and capture:
            _take_funds(ctx, charge_id, amount, currency)
    if refusal is not None:
        error_type, message = refusal
        raise error_type(message, charge_id=charge_id, decline_code=outcome)
    return charge_model(fetch(ctx, "charge", charge_id))


@world.tool
def capture_charge(ctx: seahaven.Ctx, charge_id: ChargeId, amount: Amount | None = None) -> Charge:
    """Capture an authorised charge: take the money that was held on the card.

    Arguments: charge_id, a charge with status "requires_capture"; amount, how
    much to take, at most the authorised amount and at least the currency's
    minimum (default: all of it). Capturing less releases the rest to the
    cardholder; a charge is captured once.

    Returns the charge, now "succeeded", with amount_captured set.

    Errors: NOT_FOUND for an unknown charge; INVALID_STATE when the charge is
    not awaiting capture (already captured, failed or canceled);
    AMOUNT_TOO_LARGE when amount exceeds the authorised amount; INVALID_INPUT
    for an amount below the minimum.
    """
    charge = fetch(ctx, "charge", charge_id)
    if charge["status"] != "requires_capture":
        raise InvalidState(
            f"charge {charge_id} is {charge['status']}; only a charge awaiting capture "
            "(requires_capture) can be captured",
            charge_id=charge_id,
            status=charge["status"],
        )
    taken = charge["amount"] if amount is None else amount
    if taken > charge["amount"]:
        raise AmountTooLarge(
            f"cannot capture {taken}; charge {charge_id} authorised {charge['amount']}",
            requested=taken,
            maximum=charge["amount"],
            currency=charge["currency"],
        )
    check_minimum("amount", taken, charge["currency"])
    _take_funds(ctx, charge_id, taken, charge["currency"])
    return charge_model(fetch(ctx, "charge", charge_id))


@world.tool
def cancel_charge(ctx: seahaven.Ctx, charge_id: ChargeId) -> Charge:
    """Release an authorised charge without capturing it. The hold on the card is lifted.

    Arguments: charge_id, a charge with status "requires_capture".

    Returns the charge, now "canceled". Nothing reaches the balance.

    Errors: NOT_FOUND for an unknown charge; INVALID_STATE when the charge is
    not awaiting capture (a captured charge is refunded instead).
    """
    charge = fetch(ctx, "charge", charge_id)
    if charge["status"] != "requires_capture":
        raise InvalidState(
            f"charge {charge_id} is {charge['status']}; only a charge awaiting capture "
            "(requires_capture) can be canceled",
            charge_id=charge_id,
            status=charge["status"],
        )
    ctx.db.execute(
        "UPDATE charges SET status = 'canceled', canceled_at = ? WHERE id = ?",
        ctx.clock.iso(),
        charge_id,
    )
    return charge_model(fetch(ctx, "charge", charge_id))


@world.tool
def get_charge(ctx: seahaven.Ctx, charge_id: ChargeId) -> Charge:
    """Fetch one charge by id, including failed ones.

    Returns the charge: amounts authorised, captured, refunded and still
    refundable, status, and for a failed charge the failure_code and message.

    Errors: NOT_FOUND when no charge has that id.
    """
    return charge_model(fetch(ctx, "charge", charge_id))


@world.tool
def list_charges(
    ctx: seahaven.Ctx,
    customer_id: CustomerId | None = None,
    status: ChargeStatus | None = None,
    limit: Limit = 10,
    starting_after: ChargeId | None = None,
) -> Page[Charge]:
    """List charges, newest first (ties broken by id, descending).

    Args:
        customer_id: Only this customer's charges (a deleted customer's charges
            are still listed).
        status: Only charges in this status: requires_capture, succeeded,
            partially_refunded, refunded, failed or canceled.
        limit: How many charges to return, 1 to 100 (default 10).
        starting_after: The next_starting_after of the previous page; leave it
            out for the first page.

    Returns a page: data, has_more, and next_starting_after (null on the last page).

    Errors: NOT_FOUND when customer_id names no customer; INVALID_INPUT when
    starting_after is not a charge id or status is not one of the above.
    """
    where: list[str] = []
    params: list[Any] = []
    if customer_id is not None:
        if ctx.db.one("SELECT 1 FROM customers WHERE id = ?", customer_id) is None:
            raise NotFound("customer", customer_id)
        where.append("customer_id = ?")
        params.append(customer_id)
    if status is not None:
        where.append("status = ?")
        params.append(status)
    return list_page(
        ctx,
        table="charges",
        where=where,
        params=params,
        limit=limit,
        starting_after=starting_after,
        model=Charge,
        to_model=charge_model,
    )
