"""Argument and field types, declared once. Their constraints become the JSON schema an agent reads.

A value outside these types is refused before a tool runs, and the error
handler reports it as ``INVALID_INPUT`` with every violation.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

__all__ = [
    "AccountNumber",
    "Amount",
    "BalanceTransactionId",
    "BalanceTransactionType",
    "BankAccountId",
    "CardBrand",
    "ChargeId",
    "ChargeStatus",
    "Currency",
    "CustomerId",
    "Description",
    "Email",
    "Limit",
    "Metadata",
    "Name",
    "PaymentMethodId",
    "PayoutId",
    "PayoutStatus",
    "RefundId",
    "RefundReason",
    "RoutingNumber",
    "Token",
]

Currency = Literal["usd", "eur", "gbp", "cad", "aud", "jpy"]
"""The currencies this account settles in: lowercase ISO 4217 codes."""

Amount = Annotated[
    int,
    Field(
        gt=0,
        le=99_999_999,
        description="A positive amount in the currency's minor unit (cents; whole yen for jpy).",
    ),
]

Limit = Annotated[int, Field(ge=1, le=100, description="How many objects to return, 1 to 100.")]


def _id(prefix: str, what: str) -> Any:
    return Field(
        pattern=rf"^{prefix}_[0-9A-Za-z]{{1,64}}$",
        description=f"The id of a {what}, such as {prefix}_4fG7kQ2mXw9pLs.",
    )


CustomerId = Annotated[str, _id("cus", "customer")]
PaymentMethodId = Annotated[str, _id("pm", "payment method")]
ChargeId = Annotated[str, _id("ch", "charge")]
RefundId = Annotated[str, _id("re", "refund")]
PayoutId = Annotated[str, _id("po", "payout")]
BankAccountId = Annotated[str, _id("ba", "bank account")]
BalanceTransactionId = Annotated[str, _id("txn", "balance transaction")]

Token = Annotated[
    str,
    Field(
        pattern=r"^tok_[0-9A-Za-z_]{1,64}$",
        description="A card token from the checkout form, such as tok_visa.",
    ),
]

Email = Annotated[
    str,
    Field(
        pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
        max_length=254,
        description="An email address, such as ada@example.com.",
    ),
]

Name = Annotated[str, Field(min_length=1, max_length=200)]

Description = Annotated[
    str, Field(max_length=500, description="Free text for the merchant, up to 500 characters.")
]

MetadataKey = Annotated[str, Field(min_length=1, max_length=40)]
MetadataValue = Annotated[str, Field(max_length=500)]
Metadata = Annotated[
    dict[MetadataKey, MetadataValue],
    Field(
        max_length=20,
        description="Up to 20 string key-value pairs of the merchant's own, such as an order id.",
    ),
]

AccountNumber = Annotated[
    str,
    Field(
        pattern=r"^[0-9A-Z]{4,34}$",
        description="The bank account number or IBAN: 4 to 34 digits or capital letters.",
    ),
]
RoutingNumber = Annotated[
    str, Field(pattern=r"^[0-9]{6,9}$", description="The bank's routing number or sort code.")
]

CardBrand = Literal["visa", "mastercard", "amex"]

ChargeStatus = Literal[
    "requires_capture", "succeeded", "partially_refunded", "refunded", "failed", "canceled"
]
"""
``requires_capture``: authorised, funds held, not yet taken. ``succeeded``: captured.
``partially_refunded``/``refunded``: captured, then some or all of it returned.
``failed``: the card was refused. ``canceled``: an authorisation released without capture.
"""

RefundReason = Literal["duplicate", "fraudulent", "requested_by_customer"]

PayoutStatus = Literal["pending", "paid", "canceled"]

BalanceTransactionType = Literal["charge", "refund", "payout", "payout_cancel"]
