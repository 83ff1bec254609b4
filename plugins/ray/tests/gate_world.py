"""A tiny world for the command-line tests: notes, and a tool that waits for a file to appear.

``wait_for`` lets a test stop a run at a known episode, deterministically: the
episode blocks until the test creates the file (or two minutes pass).
"""

from __future__ import annotations

import time
from pathlib import Path

import seahaven

world = seahaven.World(
    name="gate",
    version="1.0.0",
    schema="CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@world.tool
def note(ctx: seahaven.Ctx, text: str) -> dict[str, str]:
    """Write a note; returns it with its id."""
    row = {"id": ctx.ids.uuid(), "text": text}
    ctx.db.execute("INSERT INTO notes VALUES (?, ?)", row["id"], text)
    return row


@world.tool
def wait_for(ctx: seahaven.Ctx, path: str) -> bool:
    """Wait until ``path`` exists, two minutes at most; whether it appeared."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if Path(path).exists():
            return True
        time.sleep(0.05)
    return False
