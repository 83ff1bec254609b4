"""Cards a customer added in the customer portal, as the back office may read them: by token.

A card number never reaches the back office. The customer adds the card in the
portal (``portal_add_card``, theirs to call), and the back office reads the
token the portal's form hands the merchant, which ``retry_invoice_payment``
takes as ``card_token``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

import seahaven
from company_world.types import Email
from company_world.world import CompanyWorlds, world

__all__ = ["PortalCardToken", "list_portal_cards"]


class PortalCardToken(BaseModel):
    """A card a customer added in the portal: its token to charge, and what identifies it."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    token: str
    brand: str
    last4: str
    exp_month: int
    exp_year: int
    added_at: str


@world.tool
def list_portal_cards(
    ctx: seahaven.Ctx[CompanyWorlds], customer_email: Email
) -> list[PortalCardToken]:
    """The cards a customer added themselves in the customer portal, newest first.

    Each comes with the token to charge it by: pass it to retry_invoice_payment
    as card_token. Card numbers never reach the back office; ask the customer to
    add a card in the portal instead.

    Args:
        customer_email: The customer's billing email, as on their invoices.

    Returns the cards, newest first; an empty list when they added none.

    Errors: none of its own; an address that is not an email is refused as an
    invalid argument, as for every tool.
    """
    rows = ctx.worlds.portal.db.rows(
        "SELECT token, brand, last4, exp_month, exp_year, added_at FROM cards "
        "WHERE customer_email = CAST(? AS TEXT) ORDER BY id DESC",  # CAST: see portal.list_cards
        customer_email.strip().lower(),
    )
    return [PortalCardToken.model_validate(row) for row in rows]
