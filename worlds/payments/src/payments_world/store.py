"""Reading the processor's objects: one lookup per kind that raises ``NOT_FOUND``, and row-to-model.

Tools look a referenced object up here before writing anything, so an agent
gets this world's own error rather than a refusal from SQLite.
"""

from __future__ import annotations

import json
from typing import Any

import seahaven
from payments_world.errors import NotFound
from payments_world.models import (
    BalanceTransaction,
    BankAccount,
    Charge,
    Customer,
    PaymentMethod,
    Payout,
    Refund,
)

__all__ = [
    "balance_transaction_model",
    "bank_account_model",
    "charge_model",
    "customer_model",
    "dump_metadata",
    "fetch",
    "load_metadata",
    "payment_method_model",
    "payout_model",
    "refund_model",
]

# The table each id prefix lives in, and the word an error uses for it.
_KINDS: dict[str, tuple[str, str]] = {
    "customer": ("customers", "customer"),
    "payment_method": ("payment_methods", "payment method"),
    "charge": ("charges", "charge"),
    "refund": ("refunds", "refund"),
    "payout": ("payouts", "payout"),
    "bank_account": ("bank_accounts", "bank account"),
    "balance_transaction": ("balance_transactions", "balance transaction"),
}


def fetch(ctx: seahaven.Ctx, kind: str, object_id: str) -> dict[str, Any]:
    """The row of ``object_id``, or ``NOT_FOUND``. A deleted customer counts as not found."""
    table, word = _KINDS[kind]
    row = ctx.db.one(f"SELECT * FROM {table} WHERE id = ?", object_id)
    if row is None:
        raise NotFound(word, object_id)
    if kind == "customer" and row["deleted_at"] is not None:
        raise NotFound(word, object_id, deleted=True)
    return row


def dump_metadata(metadata: dict[str, str]) -> str:
    """Metadata as stored: compact JSON with sorted keys, so equal metadata is equal text."""
    return json.dumps(metadata, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def load_metadata(text: str) -> dict[str, str]:
    """Stored metadata back as a dict."""
    loaded: dict[str, str] = json.loads(text)
    return loaded


def customer_model(row: dict[str, Any]) -> Customer:
    """A ``customers`` row as the agent sees it."""
    return Customer(
        id=row["id"],
        email=row["email"],
        name=row["name"],
        description=row["description"],
        metadata=load_metadata(row["metadata"]),
        default_payment_method_id=row["default_payment_method_id"],
        created_at=row["created_at"],
    )


def payment_method_model(row: dict[str, Any]) -> PaymentMethod:
    """A ``payment_methods`` row as the agent sees it. The token itself is never shown."""
    return PaymentMethod(
        id=row["id"],
        customer_id=row["customer_id"],
        type=row["type"],
        brand=row["brand"],
        last4=row["last4"],
        exp_month=row["exp_month"],
        exp_year=row["exp_year"],
        created_at=row["created_at"],
        detached_at=row["detached_at"],
    )


def charge_model(row: dict[str, Any]) -> Charge:
    """A ``charges`` row as the agent sees it, with what is still refundable worked out."""
    return Charge(
        id=row["id"],
        customer_id=row["customer_id"],
        payment_method_id=row["payment_method_id"],
        amount=row["amount"],
        amount_captured=row["amount_captured"],
        amount_refunded=row["amount_refunded"],
        amount_refundable=row["amount_captured"] - row["amount_refunded"],
        currency=row["currency"],
        status=row["status"],
        failure_code=row["failure_code"],
        failure_message=row["failure_message"],
        description=row["description"],
        metadata=load_metadata(row["metadata"]),
        balance_transaction_id=row["balance_transaction_id"],
        created_at=row["created_at"],
        captured_at=row["captured_at"],
        canceled_at=row["canceled_at"],
    )


def refund_model(row: dict[str, Any]) -> Refund:
    """A ``refunds`` row as the agent sees it."""
    return Refund(
        id=row["id"],
        charge_id=row["charge_id"],
        amount=row["amount"],
        currency=row["currency"],
        reason=row["reason"],
        status=row["status"],
        balance_transaction_id=row["balance_transaction_id"],
        created_at=row["created_at"],
    )


def balance_transaction_model(row: dict[str, Any], now: str) -> BalanceTransaction:
    """A ledger row as the agent sees it; ``status`` compares ``available_on`` with ``now``."""
    return BalanceTransaction(
        id=row["id"],
        type=row["type"],
        source_id=row["source_id"],
        amount=row["amount"],
        fee=row["fee"],
        net=row["net"],
        currency=row["currency"],
        description=row["description"],
        created_at=row["created_at"],
        available_on=row["available_on"],
        status="available" if row["available_on"] <= now else "pending",
    )


def bank_account_model(row: dict[str, Any]) -> BankAccount:
    """A ``bank_accounts`` row as the agent sees it."""
    return BankAccount(
        id=row["id"],
        currency=row["currency"],
        account_holder_name=row["account_holder_name"],
        routing_number=row["routing_number"],
        last4=row["last4"],
        default_for_currency=bool(row["default_for_currency"]),
        created_at=row["created_at"],
    )


def payout_model(row: dict[str, Any]) -> Payout:
    """A ``payouts`` row as the agent sees it."""
    return Payout(
        id=row["id"],
        bank_account_id=row["bank_account_id"],
        amount=row["amount"],
        currency=row["currency"],
        status=row["status"],
        arrival_date=row["arrival_date"],
        description=row["description"],
        balance_transaction_id=row["balance_transaction_id"],
        created_at=row["created_at"],
        canceled_at=row["canceled_at"],
    )
