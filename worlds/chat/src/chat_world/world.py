"""The ``World`` object, built in a module of its own so every tool module can import it."""

from __future__ import annotations

import seahaven

__all__ = ["world"]

world = seahaven.World(
    name="chat",
    version="1.0.0",
    schema=seahaven.sql_files(__package__, "schema"),
    state_format="seahaven.state/1",
    description="A team-chat workspace: people, public and private channels, threads, "
    "reactions and full-text search.",
    mcp_server_name="Chat",
    mcp_server_instructions=(
        "A team-chat workspace. You act as one member of it. Channels are public or private; "
        "private channels you are not in are invisible to you. Look people up by handle and "
        "channels by name to get their ids, join a public channel before posting in it, and "
        "reply in a thread by the id of its first message. Listings return next_cursor: pass "
        "it back, with the same arguments, for the next page."
    ),
)
