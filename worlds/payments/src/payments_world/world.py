"""The payments world's declaration. Every other module registers against ``world``."""

from __future__ import annotations

import seahaven

world = seahaven.World(
    name="payments",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
    description=(
        "A small card-payments processor: customers and their cards, charges that are "
        "authorised, captured, declined and refunded, a balance ledger, bank accounts and "
        "payouts."
    ),
    mcp_server_name="payments",
    mcp_server_instructions=(
        "You are operating a merchant's account on a card-payments processor. Amounts are "
        "integers in the currency's minor unit (cents for usd, whole yen for jpy) and currencies "
        "are lowercase ISO 4217 codes. Lists are newest first; to read the next page, pass the "
        "previous page's next_starting_after as starting_after. Errors carry a stable code "
        "(NOT_FOUND, INVALID_INPUT, INVALID_STATE, AMOUNT_TOO_LARGE, CARD_DECLINED, "
        "INSUFFICIENT_FUNDS, EXPIRED_CARD, PROCESSING_ERROR, INTERNAL) and details to act on."
    ),
)
