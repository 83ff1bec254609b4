"""What the tools return: strict, frozen pydantic models, one per object the processor shows.

In process a caller gets these objects themselves, with their fields typed;
over the wire they serialise to the same JSON an agent reads.
"""

from __future__ import annotations

from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from payments_world.types import (
    BalanceTransactionType,
    CardBrand,
    ChargeStatus,
    Currency,
    PayoutStatus,
    RefundReason,
)

__all__ = [
    "Balance",
    "BalanceAmount",
    "BalanceTransaction",
    "BankAccount",
    "Charge",
    "Customer",
    "DeletedCustomer",
    "Page",
    "PaymentMethod",
    "Payout",
    "Refund",
]


class _Model(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")


class Customer(_Model):
    """A customer of the merchant."""

    id: str
    email: str
    name: str | None
    description: str | None
    metadata: dict[str, str]
    default_payment_method_id: str | None
    created_at: str


class DeletedCustomer(_Model):
    """What deleting a customer answers."""

    id: str
    deleted: Literal[True]


class PaymentMethod(_Model):
    """A card saved on a customer. ``detached_at`` is set once it can no longer be charged."""

    id: str
    customer_id: str
    type: Literal["card"]
    brand: CardBrand
    last4: str
    exp_month: int
    exp_year: int
    created_at: str
    detached_at: str | None


class Charge(_Model):
    """One attempt to take money from a card, and everything that happened to it since."""

    id: str
    customer_id: str
    payment_method_id: str
    amount: int
    amount_captured: int
    amount_refunded: int
    amount_refundable: int
    currency: Currency
    status: ChargeStatus
    failure_code: str | None
    failure_message: str | None
    description: str | None
    metadata: dict[str, str]
    balance_transaction_id: str | None
    created_at: str
    captured_at: str | None
    canceled_at: str | None


class Refund(_Model):
    """Money returned to the card a charge was captured from."""

    id: str
    charge_id: str
    amount: int
    currency: Currency
    reason: RefundReason | None
    status: Literal["succeeded"]
    balance_transaction_id: str
    created_at: str


class BalanceTransaction(_Model):
    """One ledger entry. ``net`` is what it added to (or took from) the balance."""

    id: str
    type: BalanceTransactionType
    source_id: str
    amount: int
    fee: int
    net: int
    currency: Currency
    description: str | None
    created_at: str
    available_on: str
    status: Literal["available", "pending"]


class BalanceAmount(_Model):
    """An amount of one currency."""

    currency: Currency
    amount: int


class Balance(_Model):
    """The merchant's balance per currency: what may be paid out now, and what is still settling."""

    available: list[BalanceAmount]
    pending: list[BalanceAmount]

    def available_in(self, currency: str) -> int:
        """The available amount in ``currency``; 0 when the account has none."""
        return next((item.amount for item in self.available if item.currency == currency), 0)

    def pending_in(self, currency: str) -> int:
        """The pending amount in ``currency``; 0 when the account has none."""
        return next((item.amount for item in self.pending if item.currency == currency), 0)


class BankAccount(_Model):
    """One of the merchant's own bank accounts, where payouts go."""

    id: str
    currency: Currency
    account_holder_name: str
    routing_number: str | None
    last4: str
    default_for_currency: bool
    created_at: str


class Payout(_Model):
    """Money sent from the available balance to a bank account."""

    id: str
    bank_account_id: str
    amount: int
    currency: Currency
    status: PayoutStatus
    arrival_date: str
    description: str | None
    balance_transaction_id: str
    created_at: str
    canceled_at: str | None


Item = TypeVar("Item", bound=BaseModel)


class Page(_Model, Generic[Item]):
    """One page of a list, newest first. Pass ``next_starting_after`` back for the next page."""

    data: list[Item]
    has_more: bool
    next_starting_after: str | None
