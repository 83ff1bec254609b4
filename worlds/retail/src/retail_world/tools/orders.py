"""Orders: read one; cancel or modify a pending one; return or exchange a delivered one.

Each tool checks what tau2-bench's checks, in the same order, with the same
messages, and writes what it writes. Money moves as the benchmark moves it: a
refund to a gift card lands on its balance at once (rounded to the cent), any
other refund is recorded in the order's payment history, and returns and
exchanges are requests that record what was asked and change no balance.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

import seahaven
from retail_world import store
from retail_world.errors import (
    InsufficientBalance,
    InvalidRequest,
    InvalidState,
    ItemNotAvailable,
    NotFound,
)
from retail_world.models import Order
from retail_world.world import world

__all__ = [
    "CANCEL_REASONS",
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "get_order_details",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "return_delivered_order_items",
]

OrderId = Annotated[
    str,
    Field(description="The order id, such as '#W0000000': it begins with a '#'."),
]
PaymentMethodId = Annotated[
    str,
    Field(
        description="A payment method of the customer, such as 'gift_card_0000000' or "
        "'credit_card_0000000', as the customer's or the order's details show it."
    ),
]
ItemIds = Annotated[
    list[str],
    Field(description="Item ids, each such as '1008292230'; an item may appear more than once."),
]
NewItemIds = Annotated[
    list[str],
    Field(
        description="The new item ids, each such as '1008292230': one for each item id, in the "
        "same position, and of the same product."
    ),
]

CANCEL_REASONS = ("no longer needed", "ordered by mistake")
"""The reasons an order may be cancelled for."""


def _order_result(ctx: seahaven.Ctx, order_id: str) -> Order:
    return store.order_model(ctx, store.order(ctx, order_id))


def _check_listed(item_ids: list[str], items: list[dict[str, Any]], message: str) -> None:
    """Refuse ``message`` (which may name the item) when an item id is listed more often than
    the order holds it."""
    held = [entry["item_id"] for entry in items]
    for item_id in item_ids:
        if item_ids.count(item_id) > held.count(item_id):
            raise NotFound(message.format(item_id=item_id))


def _price_difference(
    ctx: seahaven.Ctx,
    items: list[dict[str, Any]],
    item_ids: list[str],
    new_item_ids: list[str],
    *,
    refuse_same: bool,
) -> tuple[float, dict[str, Any] | None]:
    """What the new items cost more (or less) than the old, and the last new item's row.

    Each new item must be an item of the old one's product and in stock.
    """
    difference: float = 0
    last: dict[str, Any] | None = None
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        if refuse_same and item_id == new_item_id:
            raise InvalidRequest("The new item id should be different from the old item id")
        old = next((entry for entry in items if entry["item_id"] == item_id), None)
        if old is None:
            raise NotFound(f"Item {item_id} not found")
        last = store.variant(ctx, old["product_id"], new_item_id)
        if not last["available"]:
            raise ItemNotAvailable(f"New item {new_item_id} not found or available")
        difference += last["price"] - old["price"]
    return difference, last


def _append_payments(
    ctx: seahaven.Ctx, order_id: str, payments: list[tuple[str, float, str]]
) -> None:
    """Add payments and refunds, as (type, amount, payment method), at the end of the history."""
    for transaction_type, amount, payment_method_id in payments:
        ctx.db.execute(
            "INSERT INTO order_payments (order_id, position, transaction_type, amount,"
            " payment_method_id) VALUES (?, (SELECT COUNT(*) FROM order_payments"
            " WHERE order_id = ?), ?, ?, ?)",
            order_id,
            order_id,
            transaction_type,
            amount,
            payment_method_id,
        )


def _set_balance(ctx: seahaven.Ctx, user_id: str, payment_method_id: str, balance: float) -> None:
    ctx.db.execute(
        "UPDATE payment_methods SET balance = ? WHERE user_id = ? AND id = ?",
        balance,
        user_id,
        payment_method_id,
    )


@world.tool
def get_order_details(ctx: seahaven.Ctx, order_id: OrderId) -> Order:
    """An order: its customer, shipping address, items with the price paid, status,
    shipments, payment history, and any cancellation, exchange or return request.

    Errors: NOT_FOUND for an unknown order.
    """
    return _order_result(ctx, order_id)


@world.tool
def cancel_pending_order(
    ctx: seahaven.Ctx,
    order_id: OrderId,
    reason: Annotated[str, Field(description="Why: 'no longer needed' or 'ordered by mistake'.")],
) -> Order:
    """Cancel a pending order; a processed or delivered one cannot be. Explain the
    cancellation and get the customer's explicit confirmation (yes) first.

    Every payment is refunded: onto a gift card's balance at once, to any other payment
    method within 5 to 7 business days. The order becomes "cancelled".

    Errors: NOT_FOUND for an unknown order; INVALID_STATE for an order that is not
    pending; INVALID_REQUEST for another reason.
    """
    order = store.order(ctx, order_id)
    if order["status"] != "pending":
        raise InvalidState("Non-pending order cannot be cancelled")
    if reason not in CANCEL_REASONS:
        raise InvalidRequest("Invalid reason")
    payments = store.order_payments(ctx, order_id)
    balances: dict[str, float] = {}
    for payment in payments:
        method = store.payment_method(ctx, order["user_id"], payment["payment_method_id"])
        if method["source"] == "gift_card":
            key = method["id"]
            balance = balances.get(key, method["balance"]) + payment["amount"]
            balances[key] = round(balance, 2)
    for key, balance in balances.items():
        _set_balance(ctx, order["user_id"], key, balance)
    ctx.db.execute(
        "UPDATE orders SET status = 'cancelled', cancel_reason = ? WHERE order_id = ?",
        reason,
        order_id,
    )
    _append_payments(
        ctx,
        order_id,
        [("refund", payment["amount"], payment["payment_method_id"]) for payment in payments],
    )
    return _order_result(ctx, order_id)


@world.tool
def exchange_delivered_order_items(
    ctx: seahaven.Ctx,
    order_id: OrderId,
    item_ids: ItemIds,
    new_item_ids: NewItemIds,
    payment_method_id: PaymentMethodId,
) -> Order:
    """Ask to exchange items of a delivered order for other items of the same products. A
    delivered order can be returned or exchanged once. Explain the exchange and get the
    customer's explicit confirmation (yes) first.

    The price difference is paid with, or refunded to, the payment method named; a gift card
    must cover what it pays. The order becomes "exchange requested".

    Args:
        item_ids: The items to exchange.
        payment_method_id: Pays or receives the price difference.

    Errors: NOT_FOUND for an unknown order, item, product or payment method;
    INVALID_STATE for an order that is not delivered; INVALID_REQUEST when the two
    lists differ in length; ITEM_NOT_AVAILABLE; INSUFFICIENT_BALANCE.
    """
    order = store.order(ctx, order_id)
    if order["status"] != "delivered":
        raise InvalidState("Non-delivered order cannot be exchanged")
    items = store.order_items(ctx, order_id)
    _check_listed(item_ids, items, "Number of {item_id} not found.")
    if len(item_ids) != len(new_item_ids):
        raise InvalidRequest("The number of items to be exchanged should match.")
    difference, _ = _price_difference(ctx, items, item_ids, new_item_ids, refuse_same=False)
    difference = round(difference, 2)
    method = store.payment_method(ctx, order["user_id"], payment_method_id)
    if method["source"] == "gift_card" and method["balance"] < difference:
        raise InsufficientBalance("Insufficient gift card balance to pay for the price difference")
    ctx.db.execute(
        "UPDATE orders SET status = 'exchange requested', exchange_items = ?,"
        " exchange_new_items = ?, exchange_payment_method_id = ?, exchange_price_difference = ?"
        " WHERE order_id = ?",
        store.dump(sorted(item_ids)),
        store.dump(sorted(new_item_ids)),
        payment_method_id,
        difference,
        order_id,
    )
    return _order_result(ctx, order_id)


@world.tool
def modify_pending_order_address(
    ctx: seahaven.Ctx,
    order_id: OrderId,
    address1: Annotated[str, Field(description="The first line, such as '123 Main St'.")],
    address2: Annotated[str, Field(description="The second line, such as 'Apt 1', or ''.")],
    city: Annotated[str, Field(description="The city, such as 'San Francisco'.")],
    state: Annotated[str, Field(description="The state, such as 'CA'.")],
    country: Annotated[str, Field(description="The country, such as 'USA'.")],
    zip: Annotated[str, Field(description="The zip code, such as '12345'.")],
) -> Order:
    """Change the shipping address of a pending order. Explain the change and get the
    customer's explicit confirmation (yes) first.

    Errors: NOT_FOUND for an unknown order; INVALID_STATE for an order that is not pending.
    """
    order = store.order(ctx, order_id)
    if "pending" not in order["status"]:
        raise InvalidState("Non-pending order cannot be modified")
    ctx.db.execute(
        "UPDATE orders SET address1 = ?, address2 = ?, city = ?, state = ?, country = ?, zip = ?"
        " WHERE order_id = ?",
        address1,
        address2,
        city,
        state,
        country,
        zip,
        order_id,
    )
    return _order_result(ctx, order_id)


@world.tool
def modify_pending_order_items(
    ctx: seahaven.Ctx,
    order_id: OrderId,
    item_ids: ItemIds,
    new_item_ids: NewItemIds,
    payment_method_id: PaymentMethodId,
) -> Order:
    """Change items of a pending order to other items of the same products. This can be done
    once per order. Explain the change and get the customer's explicit confirmation (yes)
    first.

    The price difference is charged to, or refunded to, the payment method named (a gift
    card must cover a charge). The order becomes "pending (item modified)".

    Args:
        item_ids: The items to change.
        payment_method_id: Pays or receives the price difference.

    Errors: NOT_FOUND for an unknown order, item, product or payment method;
    INVALID_STATE for an order that is not pending; INVALID_REQUEST when the two lists
    differ in length or an item is changed for itself; ITEM_NOT_AVAILABLE;
    INSUFFICIENT_BALANCE.
    """
    order = store.order(ctx, order_id)
    if order["status"] != "pending":
        raise InvalidState("Non-pending order cannot be modified")
    items = store.order_items(ctx, order_id)
    _check_listed(item_ids, items, "{item_id} not found")
    if len(item_ids) != len(new_item_ids):
        raise InvalidRequest("The number of items to be exchanged should match")
    difference, last = _price_difference(ctx, items, item_ids, new_item_ids, refuse_same=True)
    method = store.payment_method(ctx, order["user_id"], payment_method_id)
    if method["source"] == "gift_card" and method["balance"] < difference:
        raise InsufficientBalance("Insufficient gift card balance to pay for the new item")
    _append_payments(
        ctx,
        order_id,
        [("payment" if difference > 0 else "refund", abs(difference), payment_method_id)],
    )
    if method["source"] == "gift_card":
        _set_balance(
            ctx, order["user_id"], payment_method_id, round(method["balance"] - difference, 2)
        )
    # The benchmark changes the items one after the other, each time finding the first item
    # that still has the old id, and gives every changed item the price and options of the
    # last new item it looked up; so does this.
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        entry = next(entry for entry in items if entry["item_id"] == item_id)
        assert last is not None  # a pair was looked up above
        entry.update(item_id=new_item_id, price=last["price"], options=last["options"])
        ctx.db.execute(
            "UPDATE order_items SET item_id = ?, price = ?, options = ?"
            " WHERE order_id = ? AND position = ?",
            new_item_id,
            last["price"],
            last["options"],
            order_id,
            entry["position"],
        )
    ctx.db.execute(
        "UPDATE orders SET status = 'pending (item modified)' WHERE order_id = ?", order_id
    )
    return _order_result(ctx, order_id)


@world.tool
def modify_pending_order_payment(
    ctx: seahaven.Ctx, order_id: OrderId, payment_method_id: PaymentMethodId
) -> Order:
    """Pay a pending order with another payment method: the new one is charged the order's
    amount and the old one refunded it (a gift card at once). Explain the change and get the
    customer's explicit confirmation (yes) first.

    Errors: NOT_FOUND for an unknown order or payment method; INVALID_STATE for an order
    that is not pending or was not paid in exactly one payment; INVALID_REQUEST for the
    payment method it was paid with; INSUFFICIENT_BALANCE.
    """
    order = store.order(ctx, order_id)
    if "pending" not in order["status"]:
        raise InvalidState("Non-pending order cannot be modified")
    method = store.payment_method(ctx, order["user_id"], payment_method_id)
    payments = store.order_payments(ctx, order_id)
    if len(payments) != 1 or payments[0]["transaction_type"] != "payment":
        raise InvalidState("There should be exactly one payment for a pending order")
    old_id = payments[0]["payment_method_id"]
    if old_id == payment_method_id:
        raise InvalidRequest("The new payment method should be different from the current one")
    amount = payments[0]["amount"]
    if method["source"] == "gift_card" and method["balance"] < amount:
        raise InsufficientBalance("Insufficient gift card balance to pay for the order")
    _append_payments(
        ctx, order_id, [("payment", amount, payment_method_id), ("refund", amount, old_id)]
    )
    if method["source"] == "gift_card":
        _set_balance(ctx, order["user_id"], payment_method_id, round(method["balance"] - amount, 2))
    old = store.payment_method(ctx, order["user_id"], old_id)
    if old["source"] == "gift_card":
        _set_balance(ctx, order["user_id"], old_id, round(old["balance"] + amount, 2))
    return _order_result(ctx, order_id)


@world.tool
def return_delivered_order_items(
    ctx: seahaven.Ctx,
    order_id: OrderId,
    item_ids: ItemIds,
    payment_method_id: PaymentMethodId,
) -> Order:
    """Ask to return items of a delivered order. A delivered order can be returned or
    exchanged once. Explain the return and get the customer's explicit confirmation (yes)
    first; the customer is then emailed how and where to send the items back.

    The refund goes to the order's original payment method or to a gift card. The order
    becomes "return requested".

    Args:
        item_ids: The items to return.
        payment_method_id: Receives the refund: the original payment method, or a gift card.

    Errors: NOT_FOUND for an unknown order, user, payment method or item;
    INVALID_STATE for an order that is not delivered; INVALID_REQUEST for another payment
    method that is not a gift card.
    """
    order = store.order(ctx, order_id)
    if order["status"] != "delivered":
        raise InvalidState("Non-delivered order cannot be returned")
    method = store.payment_method(ctx, order["user_id"], payment_method_id)
    payments = store.order_payments(ctx, order_id)
    original = payments[0]["payment_method_id"] if payments else None
    if method["source"] != "gift_card" and payment_method_id != original:
        raise InvalidRequest("Payment method should be the original payment method")
    _check_listed(item_ids, store.order_items(ctx, order_id), "Some item not found")
    ctx.db.execute(
        "UPDATE orders SET status = 'return requested', return_items = ?,"
        " return_payment_method_id = ? WHERE order_id = ?",
        store.dump(sorted(item_ids)),
        payment_method_id,
        order_id,
    )
    return _order_result(ctx, order_id)
