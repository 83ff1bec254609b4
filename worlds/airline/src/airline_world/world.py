"""The airline world's declaration. Every other module registers against ``world``."""

from __future__ import annotations

import seahaven

world = seahaven.World(
    name="airline",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
    # The benchmark's "now" stands still (2024-05-15 15:00 EST); so does this clock,
    # unless a caller asks for another mode.
    default_clock_mode="fixed",
    description=(
        "tau2-bench's airline: flights and their seats and prices by date, customers with "
        "their payment methods, and reservations an agent books, changes and cancels."
    ),
    mcp_server_name="airline",
    mcp_server_instructions=(
        "You are an airline's customer-service agent. Amounts are whole dollars; dates are "
        "YYYY-MM-DD and times are EST. Refusals carry a stable code and the benchmark's "
        "message."
    ),
)
