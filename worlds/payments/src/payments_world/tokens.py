"""The documented test card tokens, and what the card network does with each one.

A token is what a checkout form hands the merchant in place of a card number.
Attaching any token below always works; the outcome is decided when a charge
is authorised, as with a real issuer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["TEST_CARDS", "Outcome", "TestCard"]

Outcome = Literal[
    "approved", "card_declined", "insufficient_funds", "expired_card", "processing_error"
]


@dataclass(frozen=True, slots=True)
class TestCard:
    """One test token: the card it stands for, and what authorising it does."""

    token: str
    brand: Literal["visa", "mastercard", "amex"]
    last4: str
    exp_month: int
    exp_year: int
    outcome: Outcome


TEST_CARDS: dict[str, TestCard] = {
    card.token: card
    for card in (
        TestCard("tok_visa", "visa", "4242", 12, 2034, "approved"),
        TestCard("tok_visa_debit", "visa", "5556", 8, 2033, "approved"),
        TestCard("tok_mastercard", "mastercard", "4444", 3, 2035, "approved"),
        TestCard("tok_amex", "amex", "8431", 11, 2032, "approved"),
        TestCard("tok_chargeDeclined", "visa", "0002", 5, 2034, "card_declined"),
        TestCard(
            "tok_chargeDeclinedInsufficientFunds", "visa", "9995", 9, 2034, "insufficient_funds"
        ),
        TestCard("tok_chargeDeclinedExpiredCard", "visa", "0069", 1, 2034, "expired_card"),
        TestCard("tok_processingError", "visa", "0119", 7, 2034, "processing_error"),
    )
}
