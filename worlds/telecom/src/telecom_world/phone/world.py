"""The phone's declaration: a world of its own, which the telecom world adds as ``phone``.

Its tools are the customer's, not the agent's: a scenario's simulated user
calls them (dual control), and a scenario with a user never offers them to
the agent. They keep tau2-bench's user tool names, so the telecom world adds
the phone with no prefix.
"""

from __future__ import annotations

import seahaven

world = seahaven.World(
    name="telecom_phone",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
    default_clock_mode="fixed",
    description=(
        "A customer's mobile phone, as tau2-bench's telecom domain models it: its settings, "
        "radios, SIM, APN, VPN and apps, and where it is (abroad or not, the signal there, "
        "what the carrier allows its line)."
    ),
)
"""The phone world. Its store holds one phone."""
