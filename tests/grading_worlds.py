"""A small shop world for the grading, scenario and eval tests: two stores, minted ids.

``shop`` keeps orders in its own store and adds a ``ledger`` world under the
prefix ``ledger_``, so graders are tested across stores. Orders get ids from the
seeded stream, so a solution replayed from the same start mints the same ids,
and the ledger's entries are keyed by an integer the store assigns.
"""

from __future__ import annotations

from typing import Any

import seahaven
from seahaven.scenarios import Scenario, ScenarioSet

NOW = "2026-05-04T09:00:00.000Z"

ORDERS = """
CREATE TABLE orders (
    id TEXT PRIMARY KEY,
    customer TEXT NOT NULL,
    total REAL NOT NULL,
    status TEXT NOT NULL,
    placed_at TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]'
) STRICT;
"""
ENTRIES = """
CREATE TABLE entries (
    n INTEGER PRIMARY KEY,
    order_id TEXT NOT NULL,
    cents INTEGER NOT NULL
) STRICT;
"""
SEED_ROWS = (
    "INSERT INTO orders (id, customer, total, status, placed_at) VALUES "
    "('o1', 'ada', 25, 'open', '2026-05-01T10:00:00.000Z'), "
    "('o2', 'brian', 12.5, 'open', '2026-05-02T10:00:00.000Z'), "
    "('o3', 'ada', 40, 'shipped', '2026-05-03T10:00:00.000Z')"
)


def make_shop() -> seahaven.World:
    """A fresh shop world with its ledger added (worlds are not shared between tests)."""
    ledger = seahaven.World(
        name="ledger", version="1.0.0", schema=ENTRIES, state_format="seahaven.state/1"
    )

    @ledger.tool
    def record(ctx: seahaven.Ctx, order_id: str, cents: int) -> dict[str, Any]:
        """Record a payment of ``cents`` against an order."""
        cursor = ctx.db.execute(
            "INSERT INTO entries (order_id, cents) VALUES (?, ?)", order_id, cents
        )
        return {"n": cursor.last_rowid, "order_id": order_id, "cents": cents}

    shop = seahaven.World(
        name="shop", version="1.0.0", schema=ORDERS, state_format="seahaven.state/1"
    )
    shop.add_world(ledger, tool_prefix="ledger_")

    @shop.tool
    def place_order(ctx: seahaven.Ctx, customer: str, total: float) -> dict[str, Any]:
        """Place an order for a customer; answers the order with its new id."""
        order = {"id": "o-" + ctx.ids.uuid()[:8], "customer": customer, "total": total}
        ctx.db.execute(
            "INSERT INTO orders (id, customer, total, status, placed_at) VALUES (?, ?, ?, ?, ?)",
            order["id"],
            customer,
            total,
            "open",
            ctx.clock.iso(),
        )
        return order

    @shop.tool
    def set_status(ctx: seahaven.Ctx, order_id: str, status: str) -> None:
        """Move an order to another status."""
        changed = ctx.db.execute("UPDATE orders SET status = ? WHERE id = ?", status, order_id)
        if changed.rowcount == 0:
            raise seahaven.ToolError("NOT_FOUND", f"no order {order_id}")

    @shop.tool
    def tag(ctx: seahaven.Ctx, order_id: str, tags: list[str]) -> None:
        """Set an order's tags."""
        import json

        ctx.db.execute("UPDATE orders SET tags = ? WHERE id = ?", json.dumps(tags), order_id)

    @shop.tool
    def cancel(ctx: seahaven.Ctx, order_id: str) -> None:
        """Cancel an order: it is deleted."""
        ctx.db.execute("DELETE FROM orders WHERE id = ?", order_id)

    @shop.tool
    def total_for(ctx: seahaven.Ctx, customer: str) -> dict[str, float]:
        """The total of a customer's orders."""
        row = ctx.db.one(
            "SELECT coalesce(sum(total), 0) AS total FROM orders WHERE customer = ?", customer
        )
        assert row is not None
        return {"total": float(row["total"])}

    return shop


def start(**extra: Any) -> dict[str, Any]:
    """The start every shop scenario uses: three orders on a fixed clock."""
    return {"setup_sql": SEED_ROWS, "now": NOW, "clock_mode": "fixed", **extra}


def ship_scenario(world: seahaven.World, **changes: Any) -> Scenario:
    """Ship ada's open order and record her payment: two stores, one allowed change each."""
    fields: dict[str, Any] = {
        "id": "ship-ada",
        "world": world,
        "instructions": "Ship Ada's open order and record her payment of 25.00 in the ledger.",
        "start": start(),
        "grader": {
            "all_of": [
                {
                    "changed": {
                        "table": "orders",
                        "where": {"id": "o1"},
                        "to": {"status": "shipped"},
                    }
                },
                {"changed": {"table": "entries", "store": "ledger", "to": {"cents": 2500}}},
                {"nothing_else_changed": {"allow": ["orders", "ledger.entries"]}},
                {"matches_solution": {"ignore": ["entries.n"]}},
            ]
        },
        "solution": [
            {"tool": "set_status", "arguments": {"order_id": "o1", "status": "shipped"}},
            {"tool": "ledger_record", "arguments": {"order_id": "o1", "cents": 2500}},
        ],
        "budget": 5,
        "tags": ["orders", "composed"],
    }
    fields.update(changes)
    return Scenario(**fields)


def question_scenario(world: seahaven.World) -> Scenario:
    """A question: what does Ada owe? Answered with submit, as a number."""
    return Scenario(
        id="ada-total",
        world=world,
        instructions="What is the total of all of Ada's orders? Submit the number.",
        start=start(),
        grader={"all_of": [{"answer": {"number": 65, "tolerance": 0.01}}, "nothing_else_changed"]},
        solution=[
            {"tool": "total_for", "arguments": {"customer": "ada"}},
            {"tool": "submit", "arguments": {"answer": "65.00"}},
        ],
        budget=3,
    )


def shop_pack(world: seahaven.World) -> ScenarioSet:
    """Both scenarios as a pack, one in each split."""
    return ScenarioSet(
        "shop",
        "1.0.0",
        [ship_scenario(world), question_scenario(world)],
        splits={"train": ["ship-ada"], "test": ["ada-total"]},
        description="Two tasks on a small shop.",
    )
