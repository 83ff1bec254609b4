"""What the store's tools return, in the benchmark's shapes.

Results have the fields of tau2-bench's own models, in the same order, so the
JSON an agent reads is the JSON it would read there (an order's unset
``cancel_reason``, exchange and return fields are ``null``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

__all__ = [
    "CreditCard",
    "GiftCard",
    "Order",
    "OrderFulfillment",
    "OrderItem",
    "OrderPayment",
    "PaymentMethod",
    "Paypal",
    "Product",
    "User",
    "UserAddress",
    "UserName",
    "Variant",
]


class Variant(BaseModel):
    """An item: one variant of a product, with its options, stock and price."""

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


class Product(BaseModel):
    """A product type and its items by item id."""

    name: str
    product_id: str
    variants: dict[str, Variant]


class UserName(BaseModel):
    """A customer's name."""

    first_name: str
    last_name: str


class UserAddress(BaseModel):
    """A postal address."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class CreditCard(BaseModel):
    """A saved credit card."""

    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class Paypal(BaseModel):
    """A saved PayPal account."""

    source: Literal["paypal"]
    id: str


class GiftCard(BaseModel):
    """A saved gift card and its balance in dollars."""

    source: Literal["gift_card"]
    id: str
    balance: float


PaymentMethod = CreditCard | GiftCard | Paypal
"""One of a customer's saved payment methods."""


class User(BaseModel):
    """A customer's profile, with their payment methods and order ids."""

    user_id: str
    name: UserName
    address: UserAddress
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


class OrderFulfillment(BaseModel):
    """A shipment: its tracking ids and the items in it."""

    tracking_id: list[str]
    item_ids: list[str]


class OrderItem(BaseModel):
    """An item of an order, at the price paid."""

    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


class OrderPayment(BaseModel):
    """A payment or refund of an order, in dollars, through one payment method."""

    transaction_type: Literal["payment", "refund"]
    amount: float
    payment_method_id: str


class Order(BaseModel):
    """An order as the benchmark shows it."""

    order_id: str
    user_id: str
    address: UserAddress
    items: list[OrderItem]
    status: Literal[
        "processed",
        "pending",
        "pending (item modified)",
        "delivered",
        "cancelled",
        "exchange requested",
        "return requested",
    ]
    fulfillments: list[OrderFulfillment]
    payment_history: list[OrderPayment]
    cancel_reason: Literal["no longer needed", "ordered by mistake"] | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None
