"""Currencies and the processor's pricing: charge minimums and the fee taken on a capture."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

import seahaven
from payments_world.errors import InvalidInput
from payments_world.types import Currency

__all__ = ["CURRENCIES", "PERCENT_FEE_BASIS_POINTS", "CurrencyRules", "check_minimum", "fee_for"]

PERCENT_FEE_BASIS_POINTS = 290
"""The percentage part of the fee on a capture: 2.9%."""


@dataclass(frozen=True, slots=True)
class CurrencyRules:
    """What the processor charges and accepts in one currency, in its minor unit."""

    minimum_charge: int
    fixed_fee: int


CURRENCIES: dict[str, CurrencyRules] = {
    "usd": CurrencyRules(minimum_charge=50, fixed_fee=30),
    "eur": CurrencyRules(minimum_charge=50, fixed_fee=25),
    "gbp": CurrencyRules(minimum_charge=30, fixed_fee=20),
    "cad": CurrencyRules(minimum_charge=50, fixed_fee=30),
    "aud": CurrencyRules(minimum_charge=50, fixed_fee=30),
    "jpy": CurrencyRules(minimum_charge=50, fixed_fee=0),
}

if set(CURRENCIES) != set(get_args(Currency)):
    # The Literal is what an agent's schema lists; this table is what the tools price by.
    raise seahaven.WorldBug("money.CURRENCIES and types.Currency must name the same currencies")


def fee_for(amount: int, currency: str) -> int:
    """The fee on capturing ``amount``: 2.9%, rounded half up, plus the currency's fixed fee."""
    percent = (amount * PERCENT_FEE_BASIS_POINTS + 5_000) // 10_000
    return percent + CURRENCIES[currency].fixed_fee


def check_minimum(field: str, amount: int, currency: str) -> None:
    """Refuse an amount below what the card networks will carry in ``currency``."""
    minimum = CURRENCIES[currency].minimum_charge
    if amount < minimum:
        raise InvalidInput.on(
            field, f"must be at least {minimum} ({currency} minor units); {amount} was given"
        )
