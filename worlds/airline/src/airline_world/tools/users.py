"""Customers: reading a profile, and sending a travel certificate as compensation."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

import seahaven
from airline_world import store
from airline_world.errors import LimitReached
from airline_world.models import User
from airline_world.world import world

__all__ = ["CERTIFICATE_IDS", "get_user_details", "send_certificate"]

UserId = Annotated[str, Field(description="The customer's user id, such as 'sara_doe_496'.")]

CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
"""The benchmark's ids for new certificates, tried in order: at most three per episode."""


@world.tool
def get_user_details(ctx: seahaven.Ctx, user_id: UserId) -> User:
    """A customer's profile: name, address, email, date of birth, membership level, saved
    payment methods (with gift card and certificate balances), saved passengers and the ids
    of their reservations.

    Errors: NOT_FOUND for an unknown user.
    """
    return store.user_model(ctx, store.user(ctx, user_id))


@world.tool
def send_certificate(
    ctx: seahaven.Ctx,
    user_id: UserId,
    amount: Annotated[int, Field(description="The certificate's value in whole dollars.")],
) -> str:
    """Add a travel certificate worth `amount` dollars to a customer's payment methods. Be
    careful: this gives the customer money to spend.

    Errors: NOT_FOUND for an unknown user; LIMIT_REACHED once three certificates
    have been sent to the same customer.
    """
    store.user(ctx, user_id)
    methods = store.user_payment_methods(ctx, user_id)
    for payment_id in CERTIFICATE_IDS:
        if payment_id in methods:
            continue
        ctx.db.execute(
            "INSERT INTO payment_methods (user_id, id, source, amount, position)"
            " VALUES (?, ?, 'certificate', ?, (SELECT COALESCE(MAX(position), -1) + 1"
            " FROM payment_methods WHERE user_id = ?))",
            user_id,
            payment_id,
            float(amount),
            user_id,
        )
        return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    raise LimitReached("Too many certificates")
