"""Payment methods: cards saved on a customer from a test token, listed and detached."""

from __future__ import annotations

import seahaven
from payments_world.errors import InvalidState, NotFound
from payments_world.ids import new_id
from payments_world.models import Page, PaymentMethod
from payments_world.pagination import list_page
from payments_world.store import fetch, payment_method_model
from payments_world.tokens import TEST_CARDS
from payments_world.types import CustomerId, Limit, PaymentMethodId, Token
from payments_world.world import world

__all__ = [
    "attach_payment_method",
    "detach_payment_method",
    "get_payment_method",
    "list_payment_methods",
]


@world.tool
def attach_payment_method(
    ctx: seahaven.Ctx,
    customer_id: CustomerId,
    token: Token,
    set_as_default: bool = False,
) -> PaymentMethod:
    """Save a card on a customer from a card token, so the customer can be charged.

    Args:
        customer_id: The customer to save the card on, such as cus_4fG7kQ2mXw9pLs.
        token: The card token the checkout form produced. Test tokens:
            tok_visa, tok_visa_debit, tok_mastercard and tok_amex are approved;
            tok_chargeDeclined, tok_chargeDeclinedInsufficientFunds,
            tok_chargeDeclinedExpiredCard and tok_processingError attach fine
            but are refused when charged.
        set_as_default: Make it the card charges use when they name none. A
            customer's first card becomes the default anyway.

    Returns the payment method (pm_...), showing the brand and last four digits.

    Errors: NOT_FOUND for an unknown or deleted customer, or a token the
    processor does not know.
    """
    fetch(ctx, "customer", customer_id)
    card = TEST_CARDS.get(token)
    if card is None:
        raise NotFound("token", token)
    method_id = new_id(ctx, "pm")
    ctx.db.execute(
        "INSERT INTO payment_methods (id, customer_id, type, token, brand, last4, exp_month,"
        " exp_year, created_at) VALUES (?, ?, 'card', ?, ?, ?, ?, ?, ?)",
        method_id,
        customer_id,
        card.token,
        card.brand,
        card.last4,
        card.exp_month,
        card.exp_year,
        ctx.clock.iso(),
    )
    ctx.db.execute(
        "UPDATE customers SET default_payment_method_id = ?"
        " WHERE id = ? AND (? OR default_payment_method_id IS NULL)",
        method_id,
        customer_id,
        set_as_default,
    )
    return payment_method_model(fetch(ctx, "payment_method", method_id))


@world.tool
def get_payment_method(ctx: seahaven.Ctx, payment_method_id: PaymentMethodId) -> PaymentMethod:
    """Fetch one payment method by id, attached or detached.

    Errors: NOT_FOUND when no payment method has that id.
    """
    return payment_method_model(fetch(ctx, "payment_method", payment_method_id))


@world.tool
def list_payment_methods(
    ctx: seahaven.Ctx,
    customer_id: CustomerId,
    limit: Limit = 10,
    starting_after: PaymentMethodId | None = None,
) -> Page[PaymentMethod]:
    """List the cards attached to a customer, newest first (ties broken by id, descending).

    Detached cards are left out. Arguments: customer_id; limit, 1 to 100
    (default 10); starting_after, the next_starting_after of the previous page.

    Returns a page: data, has_more, and next_starting_after (null on the last page).

    Errors: NOT_FOUND for an unknown or deleted customer; INVALID_INPUT when
    starting_after is not a payment method id.
    """
    fetch(ctx, "customer", customer_id)
    return list_page(
        ctx,
        table="payment_methods",
        where=["customer_id = ?", "detached_at IS NULL"],
        params=[customer_id],
        limit=limit,
        starting_after=starting_after,
        model=PaymentMethod,
        to_model=payment_method_model,
    )


@world.tool
def detach_payment_method(ctx: seahaven.Ctx, payment_method_id: PaymentMethodId) -> PaymentMethod:
    """Detach a card from its customer. It can no longer be charged; past charges keep it.

    If it was the customer's default card, the customer is left with no default
    until another card is made the default.

    Returns the payment method, with detached_at set.

    Errors: NOT_FOUND when no payment method has that id; INVALID_STATE when it
    is already detached.
    """
    method = fetch(ctx, "payment_method", payment_method_id)
    if method["detached_at"] is not None:
        raise InvalidState(
            f"payment method {payment_method_id} is already detached",
            payment_method_id=payment_method_id,
            detached_at=method["detached_at"],
        )
    ctx.db.execute(
        "UPDATE payment_methods SET detached_at = ? WHERE id = ?",
        ctx.clock.iso(),
        payment_method_id,
    )
    ctx.db.execute(
        "UPDATE customers SET default_payment_method_id = NULL"
        " WHERE id = ? AND default_payment_method_id = ?",
        method["customer_id"],
        payment_method_id,
    )
    return payment_method_model(fetch(ctx, "payment_method", payment_method_id))
