"""The little worlds many framework tests build on, in this project's own vocabulary.

Two families live here, and every factory returns a fresh, unsealed world, so a
test may register more tools, hooks or formats on what it gets back:

* the **memo** world: one ``memos`` table of short texts (``gist``) keyed by a
  text ``id``. Tests that need rows to write, read, freeze or log use it.
* the **till** and the **cafe**: a cash register that files ``receipts`` in
  cents, and a café whose ``settle_tab`` tool opens a tab in its own store and
  rings it up on the till it adds. Tests about composite stores use the pair.

A test module that needs something else declares it itself.
"""

from __future__ import annotations

from typing import Any

import seahaven

MEMOS = "CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL) STRICT;"
RECEIPTS = "CREATE TABLE receipts (id TEXT PRIMARY KEY, cents INTEGER NOT NULL) STRICT;"
TABS = "CREATE TABLE tabs (id INTEGER PRIMARY KEY, cents INTEGER NOT NULL) STRICT;"

# A start instant for tests that freeze or pin a clock and do not care which one.
OPENING = "2031-03-14T08:30:00.000Z"


def memo_world(
    name: str = "memos",
    *,
    schema: str = MEMOS,
    state_format: str = "seahaven.state/1",
    **options: Any,
) -> seahaven.World:
    """A memo world at version 1.0.0 with nothing registered on it yet."""
    return seahaven.World(
        name=name, version="1.0.0", schema=schema, state_format=state_format, **options
    )


def add_jot(world: seahaven.World) -> Any:
    """Register ``jot(id, gist)``, which files one memo, and return the function."""

    @world.tool
    def jot(ctx: seahaven.Ctx, id: str, gist: str) -> None:
        """File one memo under the id the caller chose."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", id, gist)

    return jot


def memo_ids(inst: seahaven.Instance, table: str = "memos") -> list[str]:
    """The committed ids of ``table`` in id order, read on the eval's connection."""
    return [row["id"] for row in inst.inspect().rows(f"SELECT id FROM {table} ORDER BY id")]


def till_world(
    name: str = "till", *, state_format: str = "seahaven.state/1", **options: Any
) -> seahaven.World:
    """A till whose one tool, ``ring_up(cents)``, files a receipt and answers its id."""
    till = seahaven.World(
        name=name, version="1.0.0", schema=RECEIPTS, state_format=state_format, **options
    )

    @till.tool
    def ring_up(ctx: seahaven.Ctx, cents: int) -> str:
        """Print a receipt for ``cents`` and hand back the receipt's id."""
        receipt = f"rcpt-{ctx.ids.uuid()}"
        ctx.db.execute("INSERT INTO receipts (id, cents) VALUES (?, ?)", receipt, cents)
        return receipt

    return till


def cafe_world(
    till: seahaven.World,
    *,
    prefix: str = "till_",
    state_format: str = "seahaven.state/1",
    **options: Any,
) -> seahaven.World:
    """A café that adds ``till`` under the name ``till`` and settles tabs through it."""
    cafe = seahaven.World(
        name="cafe", version="1.0.0", schema=TABS, state_format=state_format, **options
    )
    cafe.add_world(till, name="till", tool_prefix=prefix)

    @cafe.tool
    def settle_tab(ctx: seahaven.Ctx, cents: int) -> None:
        """Close a tab of ``cents`` in the café's book, then ring it up on the till."""
        ctx.db.execute("INSERT INTO tabs (cents) VALUES (?)", cents)
        ctx.worlds.till.call("ring_up", cents=cents)

    return cafe
