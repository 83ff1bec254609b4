"""Finding customers, and reading any record by its id."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

import seahaven
from telecom_world import store
from telecom_world.errors import InvalidId
from telecom_world.models import Bill, Customer, Device, Line, Plan
from telecom_world.world import world

__all__ = [
    "get_customer_by_id",
    "get_customer_by_name",
    "get_customer_by_phone",
    "get_details_by_id",
]

CustomerId = Annotated[str, Field(description="The customer's id, such as 'C1001'.")]


@world.tool
def get_customer_by_phone(
    ctx: seahaven.Ctx,
    phone_number: Annotated[
        str, Field(description="A phone number, written as the carrier does: '555-123-2002'.")
    ],
) -> Customer:
    """Find the customer whose contact number, or the number of one of whose lines, this is.

    Errors: NOT_FOUND when no customer has it.
    """
    return store.customer_model(ctx.db, store.customer_by_phone(ctx.db, phone_number))


@world.tool
def get_customer_by_id(ctx: seahaven.Ctx, customer_id: CustomerId) -> Customer:
    """A customer's record: contact details, address, account status, payment methods, and
    the ids of their lines and bills.

    Errors: NOT_FOUND for an unknown customer.
    """
    return store.customer_model(ctx.db, store.customer(ctx.db, customer_id))


@world.tool
def get_customer_by_name(
    ctx: seahaven.Ctx,
    full_name: Annotated[str, Field(description="The customer's full name (any case).")],
    dob: Annotated[str, Field(description="Their date of birth, YYYY-MM-DD.")],
) -> list[Customer]:
    """The customers with this full name (ignoring case) and date of birth; none, one, or
    more when two share both."""
    rows = ctx.db.rows(
        # CAST: see store.line_by_phone.
        "SELECT * FROM customers WHERE date_of_birth = CAST(? AS TEXT) ORDER BY position",
        dob,
    )
    return [
        store.customer_model(ctx.db, row)
        for row in rows
        if row["full_name"].lower() == full_name.lower()
    ]


@world.tool
def get_details_by_id(
    ctx: seahaven.Ctx,
    id: Annotated[
        str,
        Field(
            description="A customer's (C...), line's (L...), device's (D...), bill's (B...) or "
            "plan's (P...) id."
        ),
    ],
) -> Line | Device | Bill | Customer | Plan:
    """The record with this id: a line, device, bill, customer or plan, told apart by the
    id's first letter.

    Errors: NOT_FOUND for an id no record has; INVALID_ID for one that starts with
    another letter.
    """
    if id.startswith("L"):
        return store.line_model(store.line(ctx.db, id))
    if id.startswith("D"):
        return store.device_model(store.device(ctx.db, id))
    if id.startswith("B"):
        return store.bill_model(ctx.db, store.bill(ctx.db, id))
    if id.startswith("C"):
        return store.customer_model(ctx.db, store.customer(ctx.db, id))
    if id.startswith("P"):
        return store.plan_model(store.plan(ctx.db, id))
    raise InvalidId(f"Unknown ID format or type: {id}")
