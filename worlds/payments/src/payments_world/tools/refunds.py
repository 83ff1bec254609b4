"""Refunds: return some or all of a captured charge to the card, read and list them."""

from __future__ import annotations

from typing import Any

import seahaven
from payments_world import ledger
from payments_world.errors import AmountTooLarge, InvalidState
from payments_world.ids import new_id
from payments_world.models import Page, Refund
from payments_world.pagination import list_page
from payments_world.store import fetch, refund_model
from payments_world.types import Amount, ChargeId, Limit, RefundId, RefundReason
from payments_world.world import world

__all__ = ["create_refund", "get_refund", "list_refunds"]

_REFUNDABLE = ("succeeded", "partially_refunded")


@world.tool
def create_refund(
    ctx: seahaven.Ctx,
    charge_id: ChargeId,
    amount: Amount | None = None,
    reason: RefundReason | None = None,
) -> Refund:
    """Refund a captured charge, in full or in part. The money goes back to the card it came from.

    A charge may be refunded several times until nothing is left.

    Args:
        charge_id: A charge with status "succeeded" or "partially_refunded".
        amount: In the charge's minor unit, at most what is still refundable
            (default: everything still refundable).
        reason: Why the money goes back: duplicate, fraudulent or
            requested_by_customer.

    Returns the refund (re_...). The charge becomes "partially_refunded", or
    "refunded" once everything captured has been returned, and the amount
    leaves the available balance at once. The processing fee is not returned.

    Errors: NOT_FOUND for an unknown charge; INVALID_STATE when the charge was
    never captured (failed, canceled or still awaiting capture: release an
    authorisation instead of refunding it) or is already fully refunded;
    AMOUNT_TOO_LARGE when amount exceeds what is still refundable
    (details.maximum).
    """
    charge = fetch(ctx, "charge", charge_id)
    if charge["status"] not in _REFUNDABLE:
        if charge["status"] == "refunded":
            message = f"charge {charge_id} is already fully refunded"
        else:
            message = f"charge {charge_id} is {charge['status']} and has nothing captured to refund"
        raise InvalidState(message, charge_id=charge_id, status=charge["status"])
    refundable = charge["amount_captured"] - charge["amount_refunded"]
    returned = refundable if amount is None else amount
    if returned > refundable:
        raise AmountTooLarge(
            f"cannot refund {returned}; charge {charge_id} has {refundable} "
            f"{charge['currency']} left to refund",
            requested=returned,
            maximum=refundable,
            currency=charge["currency"],
        )
    refund_id = new_id(ctx, "re")
    transaction_id = ledger.record(
        ctx,
        kind="refund",
        source_id=refund_id,
        amount=-returned,
        currency=charge["currency"],
        description=f"Refund for charge {charge_id}",
    )
    ctx.db.execute(
        "INSERT INTO refunds (id, charge_id, amount, currency, reason, status,"
        " balance_transaction_id, created_at) VALUES (?, ?, ?, ?, ?, 'succeeded', ?, ?)",
        refund_id,
        charge_id,
        returned,
        charge["currency"],
        reason,
        transaction_id,
        ctx.clock.iso(),
    )
    refunded = charge["amount_refunded"] + returned
    ctx.db.execute(
        "UPDATE charges SET amount_refunded = ?, status = ? WHERE id = ?",
        refunded,
        "refunded" if refunded == charge["amount_captured"] else "partially_refunded",
        charge_id,
    )
    return refund_model(fetch(ctx, "refund", refund_id))


@world.tool
def get_refund(ctx: seahaven.Ctx, refund_id: RefundId) -> Refund:
    """Fetch one refund by id.

    Errors: NOT_FOUND when no refund has that id.
    """
    return refund_model(fetch(ctx, "refund", refund_id))


@world.tool
def list_refunds(
    ctx: seahaven.Ctx,
    charge_id: ChargeId | None = None,
    limit: Limit = 10,
    starting_after: RefundId | None = None,
) -> Page[Refund]:
    """List refunds, newest first (ties broken by id, descending).

    Arguments: charge_id, only the refunds of that charge; limit, 1 to 100
    (default 10); starting_after, the next_starting_after of the previous page.

    Returns a page: data, has_more, and next_starting_after (null on the last page).

    Errors: NOT_FOUND when charge_id names no charge; INVALID_INPUT when
    starting_after is not a refund id.
    """
    where: list[str] = []
    params: list[Any] = []
    if charge_id is not None:
        fetch(ctx, "charge", charge_id)
        where.append("charge_id = ?")
        params.append(charge_id)
    return list_page(
        ctx,
        table="refunds",
        where=where,
        params=params,
        limit=limit,
        starting_after=starting_after,
        model=Refund,
        to_model=refund_model,
    )
