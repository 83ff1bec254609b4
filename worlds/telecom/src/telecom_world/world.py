"""The telecom world's declaration, and the phone it adds. Every other module registers on it.

The carrier's side is this world's own store: plans, customers, lines, devices
and bills, and the agent's tools. The customer's phone is the world
``telecom_world.phone``, added as ``phone`` (its own store, ``phone``) with no
prefix, so its tools keep tau2-bench's user tool names. They are on the
surface, as every added world's are; a scenario with a user lists them as the
user's and never offers them to the agent (dual control).
"""

from __future__ import annotations

import seahaven
from telecom_world import phone

__all__ = ["TelecomWorlds", "world"]


class TelecomWorlds(seahaven.Worlds):
    """The world the telecom world adds, by the name its code reaches it under."""

    phone: seahaven.WorldHandle


world = seahaven.World(
    name="telecom",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
    # The benchmark's "now" stands still (2025-02-25 12:08 EST); so does this clock,
    # unless a caller asks for another mode.
    default_clock_mode="fixed",
    description=(
        "tau2-bench's telecom: a mobile carrier's customers, lines, plans, devices and bills, "
        "which the agent runs, and the customer's phone, which only the customer operates."
    ),
    mcp_server_name="telecom",
    mcp_server_instructions=(
        "You are a mobile carrier's customer-service agent. Amounts are dollars, data is in "
        "GB, dates are YYYY-MM-DD and times EST. The customer's phone is theirs to operate: "
        "ask them to do things on it. Refusals carry a stable code and the benchmark's "
        "message."
    ),
)
world.add_world(phone.world, name="phone")
