"""A typed two-world composite that mypy checks (``[tool.mypy]`` in pyproject.toml lists it).

There is deliberately no ``from __future__ import annotations`` here: these tools
register real annotation objects, where the test modules hand the framework strings.
"""

from pydantic import BaseModel

import seahaven

RECEIPTS = "CREATE TABLE receipts (id TEXT PRIMARY KEY, cents INTEGER NOT NULL) STRICT;"
TABS = "CREATE TABLE tabs (id TEXT PRIMARY KEY, receipt_id TEXT NOT NULL) STRICT;"


class Slip(BaseModel):
    """What the till prints: ``ring_up`` hands one back."""

    id: str
    cents: int


class Tab(BaseModel):
    """A settled café tab, carrying the slip that paid it."""

    id: str
    slip: Slip


till = seahaven.World(
    name="till", version="1.0.0", schema=RECEIPTS, state_format="seahaven.state/1"
)


@till.tool
def ring_up(ctx: seahaven.Ctx, cents: int) -> Slip:
    """Print a slip for ``cents`` and keep its receipt."""
    slip = Slip(id=f"slip-{ctx.ids.uuid()}", cents=cents)
    ctx.db.execute("INSERT INTO receipts (cents, id) VALUES (?, ?)", slip.cents, slip.id)
    return slip


class CafeWorlds(seahaven.Worlds):
    """The worlds the café adds, spelled out for a type checker."""

    till: seahaven.WorldHandle


cafe = seahaven.World(name="cafe", version="0.1.0", schema=TABS, state_format="seahaven.state/1")
cafe.add_world(till, name="till", tool_prefix="till_")


@cafe.tool
def settle(ctx: seahaven.Ctx[CafeWorlds], cents: int) -> Tab:
    """Ring ``cents`` up on the café's till and file the tab against the slip."""
    slip: Slip = ctx.worlds.till.call(ring_up, cents=cents)
    tab = Tab(id=f"tab-{ctx.ids.uuid()}", slip=slip)
    ctx.db.execute("INSERT INTO tabs (id, receipt_id) VALUES (?, ?)", tab.id, slip.id)
    return tab


def settle_then_ring_up(cents: int) -> tuple[Tab, Slip]:
    """Settle one tab, then ring ``cents`` up directly; both calls name the function."""
    with cafe.instance(seed=1) as inst:
        tab = inst.call(settle, cents=cents)
        slip = inst.call(ring_up, cents)
        return tab, slip
