"""Customers: create, read, update, list and delete."""

from __future__ import annotations

from typing import Any

import seahaven
from payments_world.errors import InvalidInput, InvalidState
from payments_world.ids import new_id
from payments_world.models import Customer, DeletedCustomer, Page
from payments_world.pagination import list_page
from payments_world.store import customer_model, dump_metadata, fetch, load_metadata
from payments_world.types import (
    CustomerId,
    Description,
    Email,
    Limit,
    Metadata,
    Name,
    PaymentMethodId,
)
from payments_world.world import world

__all__ = [
    "create_customer",
    "delete_customer",
    "get_customer",
    "list_customers",
    "update_customer",
]


@world.tool
def create_customer(
    ctx: seahaven.Ctx,
    email: Email,
    name: Name | None = None,
    description: Description | None = None,
    metadata: Metadata | None = None,
) -> Customer:
    """Create a customer, the person or company the merchant charges.

    Args:
        email: The customer's email address, such as ada@example.com. Emails
            need not be unique.
        name: The customer's full name or company name, up to 200 characters.
        description: A note for the merchant, up to 500 characters.
        metadata: Up to 20 string pairs of the merchant's own, such as
            {"crm_id": "4411"}.

    Returns the new customer, with an id such as cus_4fG7kQ2mXw9pLs and no
    default payment method yet: attach a card before charging.

    Errors: INVALID_INPUT when an argument is malformed.
    """
    customer_id = new_id(ctx, "cus")
    ctx.db.execute(
        "INSERT INTO customers (id, email, name, description, metadata, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        customer_id,
        email,
        name,
        description or None,
        dump_metadata(metadata or {}),
        ctx.clock.iso(),
    )
    return customer_model(fetch(ctx, "customer", customer_id))


@world.tool
def get_customer(ctx: seahaven.Ctx, customer_id: CustomerId) -> Customer:
    """Fetch one customer by id.

    Returns the customer. Errors: NOT_FOUND when no customer has that id, or it
    was deleted (details.deleted is then true).
    """
    return customer_model(fetch(ctx, "customer", customer_id))


@world.tool
def update_customer(
    ctx: seahaven.Ctx,
    customer_id: CustomerId,
    email: Email | None = None,
    name: Name | None = None,
    description: Description | None = None,
    metadata: Metadata | None = None,
    default_payment_method_id: PaymentMethodId | None = None,
) -> Customer:
    """Change a customer's details. Only the arguments you pass change.

    Args:
        customer_id: The customer to change, such as cus_4fG7kQ2mXw9pLs.
        email: A new email address.
        name: A new full name or company name, up to 200 characters.
        description: A new note for the merchant; "" clears it.
        metadata: Pairs merged into the existing ones key by key; a value of ""
            removes that key.
        default_payment_method_id: A card attached to this customer, for
            charges that name none.

    Returns the updated customer.

    Errors: NOT_FOUND for an unknown or deleted customer, or an unknown payment
    method; INVALID_STATE when the payment method belongs to another customer
    or was detached; INVALID_INPUT when nothing to change was given.
    """
    row = fetch(ctx, "customer", customer_id)
    if all(
        value is None for value in (email, name, description, metadata, default_payment_method_id)
    ):
        raise InvalidInput.on(
            "(arguments)",
            "pass at least one of email, name, description, metadata, default_payment_method_id",
        )
    changes: dict[str, Any] = {}
    if email is not None:
        changes["email"] = email
    if name is not None:
        changes["name"] = name
    if description is not None:
        changes["description"] = description or None
    if metadata is not None:
        merged = load_metadata(row["metadata"])
        for key, value in metadata.items():
            if value == "":
                merged.pop(key, None)
            else:
                merged[key] = value
        if len(merged) > 20:
            raise InvalidInput.on(
                "metadata", f"a customer holds at most 20 keys; this would make {len(merged)}"
            )
        changes["metadata"] = dump_metadata(merged)
    if default_payment_method_id is not None:
        method = fetch(ctx, "payment_method", default_payment_method_id)
        if method["customer_id"] != customer_id:
            raise InvalidState(
                f"payment method {default_payment_method_id} belongs to another customer",
                payment_method_id=default_payment_method_id,
            )
        if method["detached_at"] is not None:
            raise InvalidState(
                f"payment method {default_payment_method_id} was detached and cannot be used",
                payment_method_id=default_payment_method_id,
            )
        changes["default_payment_method_id"] = default_payment_method_id
    assignments = ", ".join(f"{column} = ?" for column in changes)
    ctx.db.execute(
        f"UPDATE customers SET {assignments} WHERE id = ?", *changes.values(), customer_id
    )
    return customer_model(fetch(ctx, "customer", customer_id))


@world.tool
def list_customers(
    ctx: seahaven.Ctx,
    email: Email | None = None,
    limit: Limit = 10,
    starting_after: CustomerId | None = None,
) -> Page[Customer]:
    """List customers, newest first (ties broken by id, descending). Deleted customers are left out.

    Arguments: email, to list only customers with exactly that address;
    limit, 1 to 100 (default 10); starting_after, the next_starting_after of
    the previous page.

    Returns a page: data, has_more, and next_starting_after (null on the last page).

    Errors: INVALID_INPUT when starting_after is not a customer id.
    """
    where = ["deleted_at IS NULL"]
    params: list[Any] = []
    if email is not None:
        where.append("email = ?")
        params.append(email)
    return list_page(
        ctx,
        table="customers",
        where=where,
        params=params,
        limit=limit,
        starting_after=starting_after,
        model=Customer,
        to_model=customer_model,
    )


@world.tool
def delete_customer(ctx: seahaven.Ctx, customer_id: CustomerId) -> DeletedCustomer:
    """Delete a customer. Their saved cards are detached; their charges and refunds remain.

    A deleted customer can no longer be fetched, updated or charged. Charges
    already made stay readable and refundable.

    Returns {"id": ..., "deleted": true}.

    Errors: NOT_FOUND for an unknown customer or one already deleted.
    """
    fetch(ctx, "customer", customer_id)
    now = ctx.clock.iso()
    ctx.db.execute(
        "UPDATE payment_methods SET detached_at = ? WHERE customer_id = ? AND detached_at IS NULL",
        now,
        customer_id,
    )
    ctx.db.execute(
        "UPDATE customers SET deleted_at = ?, default_payment_method_id = NULL WHERE id = ?",
        now,
        customer_id,
    )
    return DeletedCustomer(id=customer_id, deleted=True)
