"""A tiny world that takes seconds to load in a Ray actor, as a large world's import might.

Loaded anywhere else (the test process), it loads at once. The tests of the time limit use it
to show that an actor's start is not counted against the first episodes sent to it.
"""

from __future__ import annotations

import time

import seahaven

# How long loading the world takes in an actor; the tests give their episodes less.
START_SECONDS = 6.0


def _in_an_actor() -> bool:
    try:
        import ray
    except ImportError:
        return False
    return ray.is_initialized() and ray.get_runtime_context().get_actor_id() is not None


if _in_an_actor():
    time.sleep(START_SECONDS)

world = seahaven.World(
    name="slow_start",
    version="1.0.0",
    schema="CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@world.tool
def note(ctx: seahaven.Ctx, text: str) -> int:
    """Write a note; returns its id."""
    return ctx.db.execute("INSERT INTO notes (text) VALUES (?)", text).last_rowid
