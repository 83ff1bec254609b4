"""The retail world's declaration. Every other module registers against ``world``."""

from __future__ import annotations

import seahaven

world = seahaven.World(
    name="retail",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
    # The benchmark's store has no clock at all; this one stands still unless asked.
    default_clock_mode="fixed",
    description=(
        "tau2-bench's retail: a catalogue of products and their items, customers with their "
        "payment methods, and orders an agent cancels, modifies, returns and exchanges."
    ),
    mcp_server_name="retail",
    mcp_server_instructions=(
        "You are an online store's customer-service agent. Prices are dollars; order ids begin "
        "with '#'. Refusals carry a stable code and the benchmark's message."
    ),
)
