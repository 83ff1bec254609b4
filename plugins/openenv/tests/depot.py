"""A depot world and a pack of scenarios on it, for the tests of scenarios on the wire.

The depot keeps crates of items. ``restock`` mints each new crate's id from the
seeded stream, so the same seed mints the same ids in process and on a server;
``jam`` is a bug in the world (it raises something that is not a ``ToolError``) and
``misroute`` one the world reports as a ``WorldBug``.
The pack ``depot`` holds three scenarios: one that changes a row (no answer),
one answered with ``submit``, and one whose solution mints an id.
"""

from __future__ import annotations

from typing import Any

import seahaven
from seahaven.scenarios import Scenario, ScenarioSet

NOW = "2026-05-04T09:00:00.000Z"
SCHEMA = """
CREATE TABLE crates (
    id TEXT PRIMARY KEY,
    item TEXT NOT NULL,
    qty INTEGER NOT NULL,
    status TEXT NOT NULL
) STRICT;
"""
SEED_ROWS = (
    "INSERT INTO crates VALUES ('c1', 'apples', 10, 'stored'), ('c2', 'pears', 4, 'stored'), "
    "('c3', 'apples', 5, 'stored')"
)


def make_depot(name: str = "depot") -> seahaven.World:
    """A fresh depot world (worlds are not shared between tests)."""
    world = seahaven.World(
        name=name,
        version="1.0.0",
        schema=SCHEMA,
        state_format="seahaven.state/1",
        description="Crates of fruit in a small depot.",
    )

    @world.tool
    def count(ctx: seahaven.Ctx, item: str) -> dict[str, int]:
        """How many of an item the depot holds, over every crate still stored."""
        row = ctx.db.one(
            "SELECT coalesce(sum(qty), 0) AS n FROM crates WHERE item = ? AND status = 'stored'",
            item,
        )
        assert row is not None
        return {"qty": int(row["n"])}

    @world.tool
    def ship(ctx: seahaven.Ctx, crate_id: str) -> dict[str, str]:
        """Ship a stored crate."""
        changed = ctx.db.execute(
            "UPDATE crates SET status = 'shipped' WHERE id = ? AND status = 'stored'", crate_id
        )
        if changed.rowcount == 0:
            raise seahaven.ToolError("NOT_FOUND", f"no stored crate {crate_id}")
        return {"id": crate_id, "status": "shipped"}

    @world.tool
    def restock(ctx: seahaven.Ctx, item: str, qty: int) -> dict[str, Any]:
        """Store a new crate of an item; answers the crate with its new id."""
        crate = {"id": "c-" + ctx.ids.uuid()[:8], "item": item, "qty": qty}
        ctx.db.execute("INSERT INTO crates VALUES (?, ?, ?, 'stored')", crate["id"], item, qty)
        return crate

    @world.tool
    def jam(ctx: seahaven.Ctx) -> None:
        """Jam the conveyor (a bug in the world, for the tests)."""
        raise RuntimeError("the conveyor jammed")

    @world.tool
    def misroute(ctx: seahaven.Ctx) -> None:
        """Send a crate down a lane the depot does not have (a WorldBug, for the tests)."""
        raise seahaven.WorldBug("lane 9 is not configured; add it to the depot's lanes")

    return world


def start() -> dict[str, Any]:
    """Where every depot scenario starts: three crates on a fixed clock."""
    return {"setup_sql": SEED_ROWS, "now": NOW, "clock_mode": "fixed"}


def make_pack(world: seahaven.World | str = "depot", version: str = "1.0.0") -> ScenarioSet:
    """The pack ``depot``: ship-c1 and restock-pears in train, count-apples in test."""
    ship = Scenario(
        id="ship-c1",
        world=world,
        instructions="Crate c1 is going out today: ship it, and nothing else.",
        start=start(),
        grader={
            "all_of": [
                {
                    "changed": {
                        "table": "crates",
                        "where": {"id": "c1"},
                        "to": {"status": "shipped"},
                    }
                },
                {"nothing_else_changed": {"allow": ["crates"]}},
                {"unchanged": {"table": "crates", "where": {"id": ["c2", "c3"]}}},
            ]
        },
        solution=[{"tool": "ship", "arguments": {"crate_id": "c1"}}],
        budget=3,
        tags=["shipping"],
    )
    restock = Scenario(
        id="restock-pears",
        world=world,
        instructions="We are low on pears: store a new crate of 12.",
        start=start(),
        grader={
            "all_of": [
                {"exists": {"table": "crates", "where": {"item": "pears", "qty": 12}}},
                {"matches_solution": {}},
            ]
        },
        solution=[{"tool": "restock", "arguments": {"item": "pears", "qty": 12}}],
        budget=4,
    )
    count = Scenario(
        id="count-apples",
        world=world,
        instructions="How many apples are in store? Submit the number.",
        start=start(),
        grader={"all_of": [{"answer": {"number": 15}}, "nothing_else_changed"]},
        solution=[
            {"tool": "count", "arguments": {"item": "apples"}},
            {"tool": "submit", "arguments": {"answer": "15"}},
        ],
        budget=3,
    )
    return ScenarioSet(
        "depot",
        version,
        [ship, restock, count],
        splits={"train": ["ship-c1", "restock-pears"], "test": ["count-apples"]},
        description="Three tasks in a small depot.",
    )


#: The depot world and its pack, for ``module:attr`` names (``depot:world``, ``depot:pack``).
world = make_depot()
pack = make_pack(world)
#: Another world of the same tables, for a pack served beside a world it does not run on.
other = make_depot("warehouse")
