"""Customers: finding a customer's user id, reading a profile, changing its default address."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

import seahaven
from retail_world import store
from retail_world.errors import NotFound
from retail_world.models import User
from retail_world.world import world

__all__ = [
    "find_user_id_by_email",
    "find_user_id_by_name_zip",
    "get_user_details",
    "modify_user_address",
]

UserId = Annotated[str, Field(description="The customer's user id, such as 'sara_doe_496'.")]


@world.tool
def find_user_id_by_email(
    ctx: seahaven.Ctx,
    email: Annotated[str, Field(description="The customer's email, such as 'ana@example.com'.")],
) -> str:
    """Find a customer's user id by their email (any case). This is the usual way to
    authenticate a customer; use the name and zip code only when the email fails or is not
    known.

    Errors: NOT_FOUND when no customer has that email.
    """
    wanted = email.lower()
    for row in ctx.db.rows("SELECT user_id, email FROM users ORDER BY position"):
        if row["email"].lower() == wanted:
            return str(row["user_id"])
    raise NotFound("User not found")


@world.tool
def find_user_id_by_name_zip(
    ctx: seahaven.Ctx,
    first_name: Annotated[str, Field(description="The customer's first name, such as 'John'.")],
    last_name: Annotated[str, Field(description="The customer's last name, such as 'Doe'.")],
    zip: Annotated[str, Field(description="The customer's zip code, such as '12345'.")],
) -> str:
    """Find a customer's user id by first name, last name (any case) and zip code. Use it only
    when the customer's email cannot be found or they do not remember it.

    Errors: NOT_FOUND when no customer matches.
    """
    rows = ctx.db.rows(
        # CAST: see store.order_items.
        "SELECT user_id, first_name, last_name FROM users WHERE zip = CAST(? AS TEXT)"
        " ORDER BY position",
        zip,
    )
    for row in rows:
        if (row["first_name"].lower(), row["last_name"].lower()) == (
            first_name.lower(),
            last_name.lower(),
        ):
            return str(row["user_id"])
    raise NotFound("User not found")


@world.tool
def get_user_details(ctx: seahaven.Ctx, user_id: UserId) -> User:
    """A customer's profile: name, default address, email, saved payment methods (with gift
    card balances) and the ids of their orders.

    Errors: NOT_FOUND for an unknown user.
    """
    return store.user_model(ctx, store.user(ctx, user_id))


@world.tool
def modify_user_address(
    ctx: seahaven.Ctx,
    user_id: UserId,
    address1: Annotated[str, Field(description="The first line, such as '123 Main St'.")],
    address2: Annotated[str, Field(description="The second line, such as 'Apt 1', or ''.")],
    city: Annotated[str, Field(description="The city, such as 'San Francisco'.")],
    state: Annotated[str, Field(description="The state, such as 'CA'.")],
    country: Annotated[str, Field(description="The country, such as 'USA'.")],
    zip: Annotated[str, Field(description="The zip code, such as '12345'.")],
) -> User:
    """Change a customer's default address. Explain the change and get the customer's
    explicit confirmation first.

    Errors: NOT_FOUND for an unknown user.
    """
    store.user(ctx, user_id)
    ctx.db.execute(
        "UPDATE users SET address1 = ?, address2 = ?, city = ?, state = ?, country = ?, zip = ?"
        " WHERE user_id = ?",
        address1,
        address2,
        city,
        state,
        country,
        zip,
        user_id,
    )
    return store.user_model(ctx, store.user(ctx, user_id))
