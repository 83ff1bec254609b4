"""Reading the store's records: lookups that refuse as the benchmark does, and row-to-model.

Each lookup raises ``NOT_FOUND`` with tau2-bench's message for a record that is
not there, so a tool reads what it needs before it writes anything.
"""

from __future__ import annotations

import json
from typing import Any

import seahaven
from retail_world.errors import NotFound
from retail_world.models import (
    CreditCard,
    GiftCard,
    Order,
    OrderFulfillment,
    OrderItem,
    OrderPayment,
    PaymentMethod,
    Paypal,
    Product,
    User,
    UserAddress,
    UserName,
    Variant,
)

__all__ = [
    "ADDRESS",
    "dump",
    "item",
    "order",
    "order_items",
    "order_model",
    "order_payments",
    "payment_method",
    "product",
    "product_model",
    "user",
    "user_model",
    "variant",
    "variant_model",
]

ADDRESS = ("address1", "address2", "city", "country", "state", "zip")
"""An address's columns, in the benchmark's order."""


def dump(value: Any) -> str:
    """JSON as the store keeps it: compact, in the order given."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def user(ctx: seahaven.Ctx, user_id: str) -> dict[str, Any]:
    """The ``users`` row, or ``NOT_FOUND``: "User not found"."""
    found = ctx.db.one("SELECT * FROM users WHERE user_id = ?", user_id)
    if found is None:
        raise NotFound("User not found")
    return found


def order(ctx: seahaven.Ctx, order_id: str) -> dict[str, Any]:
    """The ``orders`` row, or ``NOT_FOUND``: "Order not found"."""
    found = ctx.db.one("SELECT * FROM orders WHERE order_id = ?", order_id)
    if found is None:
        raise NotFound("Order not found")
    return found


def product(ctx: seahaven.Ctx, product_id: str) -> dict[str, Any]:
    """The ``products`` row, or ``NOT_FOUND``: "Product not found"."""
    found = ctx.db.one("SELECT * FROM products WHERE product_id = ?", product_id)
    if found is None:
        raise NotFound("Product not found")
    return found


def variant(ctx: seahaven.Ctx, product_id: str, item_id: str) -> dict[str, Any]:
    """One item of one product; ``NOT_FOUND`` for an unknown product, then "Variant not found"."""
    product(ctx, product_id)
    found = ctx.db.one(
        "SELECT * FROM variants WHERE product_id = ? AND item_id = ?", product_id, item_id
    )
    if found is None:
        raise NotFound("Variant not found")
    return found


def item(ctx: seahaven.Ctx, item_id: str) -> dict[str, Any]:
    """The item of any product, or ``NOT_FOUND``: "Item not found"."""
    found = ctx.db.one("SELECT * FROM variants WHERE item_id = ?", item_id)
    if found is None:
        raise NotFound("Item not found")
    return found


def payment_method(ctx: seahaven.Ctx, user_id: str, payment_method_id: str) -> dict[str, Any]:
    """A customer's payment method; "User not found", then "Payment method not found"."""
    user(ctx, user_id)
    found = ctx.db.one(
        "SELECT * FROM payment_methods WHERE user_id = ? AND id = ?", user_id, payment_method_id
    )
    if found is None:
        raise NotFound("Payment method not found")
    return found


def order_items(ctx: seahaven.Ctx, order_id: str) -> list[dict[str, Any]]:
    """An order's item rows, in order."""
    # The key is bound as CAST(? AS TEXT): with a bare "col = ?" beside an ORDER BY, SQLite's
    # planner looks at the bound value, so the statement would be prepared again at every
    # execution. The column is TEXT, so the comparison and the rows are the same.
    return ctx.db.rows(
        "SELECT * FROM order_items WHERE order_id = CAST(? AS TEXT) ORDER BY position", order_id
    )


def order_payments(ctx: seahaven.Ctx, order_id: str) -> list[dict[str, Any]]:
    """An order's payment and refund rows, in order."""
    return ctx.db.rows(
        "SELECT * FROM order_payments WHERE order_id = CAST(? AS TEXT) ORDER BY position", order_id
    )


def variant_model(row: dict[str, Any]) -> Variant:
    """A ``variants`` row as the benchmark's ``Variant``."""
    return Variant(
        item_id=row["item_id"],
        options=json.loads(row["options"]),
        available=bool(row["available"]),
        price=row["price"],
    )


def product_model(ctx: seahaven.Ctx, row: dict[str, Any]) -> Product:
    """A ``products`` row and its items as the benchmark's ``Product``."""
    items = ctx.db.rows(
        "SELECT * FROM variants WHERE product_id = CAST(? AS TEXT) ORDER BY position",
        row["product_id"],
    )
    return Product(
        name=row["name"],
        product_id=row["product_id"],
        variants={entry["item_id"]: variant_model(entry) for entry in items},
    )


def _payment_method_model(row: dict[str, Any]) -> PaymentMethod:
    if row["source"] == "credit_card":
        return CreditCard(
            source="credit_card", id=row["id"], brand=row["brand"], last_four=row["last_four"]
        )
    if row["source"] == "gift_card":
        return GiftCard(source="gift_card", id=row["id"], balance=row["balance"])
    return Paypal(source="paypal", id=row["id"])


def _address(row: dict[str, Any]) -> UserAddress:
    return UserAddress(**{column: row[column] for column in ADDRESS})


def user_model(ctx: seahaven.Ctx, row: dict[str, Any]) -> User:
    """A ``users`` row and its payment methods as the benchmark's ``User``."""
    methods = ctx.db.rows(
        "SELECT * FROM payment_methods WHERE user_id = CAST(? AS TEXT) ORDER BY position",
        row["user_id"],
    )
    return User(
        user_id=row["user_id"],
        name=UserName(first_name=row["first_name"], last_name=row["last_name"]),
        address=_address(row),
        email=row["email"],
        payment_methods={method["id"]: _payment_method_model(method) for method in methods},
        orders=json.loads(row["orders"]),
    )


def _list(text: str | None) -> list[str] | None:
    return None if text is None else list(json.loads(text))


def order_model(ctx: seahaven.Ctx, row: dict[str, Any]) -> Order:
    """An ``orders`` row and its items and payments as the benchmark's ``Order``."""
    key = row["order_id"]
    return Order(
        order_id=key,
        user_id=row["user_id"],
        address=_address(row),
        items=[
            OrderItem(
                name=entry["name"],
                product_id=entry["product_id"],
                item_id=entry["item_id"],
                price=entry["price"],
                options=json.loads(entry["options"]),
            )
            for entry in order_items(ctx, key)
        ],
        status=row["status"],
        fulfillments=[OrderFulfillment(**entry) for entry in json.loads(row["fulfillments"])],
        payment_history=[
            OrderPayment(
                transaction_type=entry["transaction_type"],
                amount=entry["amount"],
                payment_method_id=entry["payment_method_id"],
            )
            for entry in order_payments(ctx, key)
        ],
        cancel_reason=row["cancel_reason"],
        exchange_items=_list(row["exchange_items"]),
        exchange_new_items=_list(row["exchange_new_items"]),
        exchange_payment_method_id=row["exchange_payment_method_id"],
        exchange_price_difference=row["exchange_price_difference"],
        return_items=_list(row["return_items"]),
        return_payment_method_id=row["return_payment_method_id"],
    )
