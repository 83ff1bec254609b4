"""Reading the processor's objects: one lookup per kind that raises ``NOT_FOUND``, and row-to-model.

Tools look a referenced object up here before writing anything, so an agent
gets this world's own error rather than a refusal from SQLite. A model is
built from its row with ``seahaven.toolkit.from_row``, column by field name;
only what is worked out rather than stored is spelled out here.
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
from seahaven.toolkit import from_row

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
    return from_row(Customer, row, metadata=load_metadata(row["metadata"]))


def payment_method_model(row: dict[str, Any]) -> PaymentMethod:
    """A ``payment_methods`` row as the agent sees it. The token itself is never shown."""
    return from_row(PaymentMethod, row)


def charge_model(row: dict[str, Any]) -> Charge:
    """A ``charges`` row as the agent sees it, with what is still refundable worked out."""
    return from_row(
        Charge,
        row,
        amount_refundable=row["amount_captured"] - row["amount_refunded"],
        metadata=load_metadata(row["metadata"]),
    )


def refund_model(row: dict[str, Any]) -> Refund:
    """A ``refunds`` row as the agent sees it."""
    return from_row(Refund, row)


def balance_transaction_model(row: dict[str, Any], now: str) -> BalanceTransaction:
    """A ledger row as the agent sees it; ``status`` compares ``available_on`` with ``now``."""
    status = "available" if row["available_on"] <= now else "pending"
    return from_row(BalanceTransaction, row, status=status)


def bank_account_model(row: dict[str, Any]) -> BankAccount:
    """A ``bank_accounts`` row as the agent sees it."""
    return from_row(BankAccount, row)


def payout_model(row: dict[str, Any]) -> Payout:
    """A ``payouts`` row as the agent sees it."""
    return from_row(Payout, row)
