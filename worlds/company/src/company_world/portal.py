"""The customer portal: the page where the company's customers keep their own cards.

A customer world, not the back office's: a scenario's simulated customer
calls these tools themselves (dual control), and a scenario with a user never
offers them to the agent. A card number goes into the portal and never through
the back office: the portal keeps the token its payment form hands the
merchant, which the company's ``list_portal_cards`` reads and
``retry_invoice_payment`` charges. The portal takes the payments world's test
cards only, by the numbers card networks publish for testing.

The company adds it as ``portal`` (prefix ``portal_``) and publishes it through
itself: ``seahaven check`` of the company checks it with the rest.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

import seahaven

__all__ = ["CARD_NUMBERS", "PortalCard", "world"]

SCHEMA = """
CREATE TABLE cards (
    id INTEGER PRIMARY KEY,
    customer_email TEXT NOT NULL,
    -- What the portal's payment form hands the merchant in place of the number.
    token TEXT NOT NULL,
    brand TEXT NOT NULL,
    last4 TEXT NOT NULL,
    exp_month INTEGER NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
    exp_year INTEGER NOT NULL,
    added_at TEXT NOT NULL
) STRICT;
CREATE INDEX cards_by_customer ON cards (customer_email, id);
"""

CARD_NUMBERS: dict[str, tuple[str, str]] = {
    "4242424242424242": ("tok_visa", "visa"),
    "4000056655665556": ("tok_visa_debit", "visa"),
    "5555555555554444": ("tok_mastercard", "mastercard"),
    "378282246310005": ("tok_amex", "amex"),
    "4000000000000002": ("tok_chargeDeclined", "visa"),
    "4000000000009995": ("tok_chargeDeclinedInsufficientFunds", "visa"),
    "4000000000000069": ("tok_chargeDeclinedExpiredCard", "visa"),
    "4000000000000119": ("tok_processingError", "visa"),
}
"""The test card numbers the portal takes, and the payments token and brand of each."""

world = seahaven.World(
    name="customer_portal",
    version="1.0.0",
    schema=SCHEMA,
    state_format="seahaven.state/1",
    description=(
        "A company's customer portal: where customers add the cards they pay by, so card "
        "numbers never pass through the back office."
    ),
)


class PortalCard(BaseModel):
    """A card as the customer sees it in the portal: never the number, nor the token."""

    id: int = Field(description="The card's number in the portal")
    brand: str = Field(description="visa, mastercard or amex")
    last4: str = Field(description="The last four digits of the card number")
    exp_month: int = Field(description="The month it expires, 1 to 12")
    exp_year: int = Field(description="The year it expires")
    added_at: str = Field(description="When it was added")


def _card(row: dict[str, Any]) -> PortalCard:
    return PortalCard.model_validate(
        {key: row[key] for key in ("id", "brand", "last4", "exp_month", "exp_year", "added_at")}
    )


@world.tool
def add_card(
    ctx: seahaven.Ctx, customer_email: str, card_number: str, exp_month: int, exp_year: int
) -> PortalCard:
    """Add a card to your account in the portal, so the company can charge it.

    Args:
        customer_email: The billing email of your account, such as ap@hooli.test.
        card_number: The number on the card, digits only (spaces are ignored).
        exp_month: The month the card expires, 1 to 12.
        exp_year: The year the card expires, such as 2031.

    Returns the card as the portal keeps it (brand and last four digits).

    Errors: INVALID_CARD for a number the portal does not take; EXPIRED for a
    card whose expiry has passed.
    """
    digits = card_number.replace(" ", "")
    known = CARD_NUMBERS.get(digits)
    if known is None:
        raise seahaven.ToolError(
            "INVALID_CARD",
            "the portal does not take that card number; check the digits",
            {"last4": digits[-4:]},
        )
    if not 1 <= exp_month <= 12:
        raise seahaven.ToolError("INVALID_CARD", f"{exp_month} is not a month (1 to 12)")
    today = ctx.clock.now()
    if (exp_year, exp_month) < (today.year, today.month):
        raise seahaven.ToolError("EXPIRED", f"the card expired in {exp_month:02d}/{exp_year}")
    token, brand = known
    cursor = ctx.db.execute(
        "INSERT INTO cards (customer_email, token, brand, last4, exp_month, exp_year, added_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        customer_email.strip().lower(),
        token,
        brand,
        digits[-4:],
        exp_month,
        exp_year,
        ctx.clock.iso(),
    )
    row = ctx.db.one("SELECT * FROM cards WHERE id = ?", cursor.last_rowid)
    assert row is not None
    return _card(row)


@world.tool
def list_cards(ctx: seahaven.Ctx, customer_email: str) -> list[PortalCard]:
    """The cards on your account in the portal, newest first.

    Args:
        customer_email: The billing email of your account.
    """
    rows = ctx.db.rows(
        # CAST(? AS TEXT), not a bare "?": beside an ORDER BY, SQLite prepares a statement
        # that compares a column with a bare parameter again at every execution.
        "SELECT * FROM cards WHERE customer_email = CAST(? AS TEXT) ORDER BY id DESC",
        customer_email.strip().lower(),
    )
    return [_card(row) for row in rows]
