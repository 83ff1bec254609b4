"""Bills: reading a customer's, and asking them to pay one.

A payment request reaches the customer's phone after the call, and a payment
made there marks the bill paid (``telecom_world.sync``), as the benchmark's
environment keeps the two in step.
"""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import Field

import seahaven
from telecom_world import store
from telecom_world.errors import InvalidState, NotFound
from telecom_world.models import Bill
from telecom_world.world import world

__all__ = ["get_bills_for_customer", "send_payment_request"]

CustomerId = Annotated[str, Field(description="The customer's id, such as 'C1001'.")]


@world.tool
def get_bills_for_customer(
    ctx: seahaven.Ctx,
    customer_id: CustomerId,
    limit: Annotated[int, Field(description="How many bills at most.")] = 12,
) -> list[Bill]:
    """A customer's bills, the most recently issued first.

    Errors: NOT_FOUND for an unknown customer.
    """
    owner = store.customer(ctx.db, customer_id)
    bills = [store.bill(ctx.db, bill_id) for bill_id in json.loads(owner["bill_ids"])]
    # Stable, as the benchmark's sort: bills issued the same day keep the customer's order.
    ordered = sorted(bills, key=lambda row: row["issue_date"], reverse=True)
    return [store.bill_model(ctx.db, row) for row in ordered[:limit]]


@world.tool
def send_payment_request(
    ctx: seahaven.Ctx,
    customer_id: CustomerId,
    bill_id: Annotated[str, Field(description="The bill to be paid, such as 'B1002'.")],
) -> str:
    """Ask the customer to pay a bill: it awaits payment, and the request reaches their
    phone. It does not check whether the bill is paid already: check its status first.

    Errors: NOT_FOUND for an unknown customer, or a bill that is not theirs;
    INVALID_STATE when another of their bills already awaits payment.
    """
    owner = store.customer(ctx.db, customer_id)
    if store.bills_awaiting_payment(ctx.db, owner):
        raise InvalidState("A bill is already awaiting payment for this customer")
    if bill_id not in json.loads(owner["bill_ids"]):
        raise NotFound(f"Bill {bill_id} not found for customer {customer_id}")
    store.bill(ctx.db, bill_id)
    ctx.db.execute("UPDATE bills SET status = 'Awaiting Payment' WHERE bill_id = ?", bill_id)
    return f"Payment request sent to the customer for bill {bill_id}"
