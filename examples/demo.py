"""A short episode against a two-store world, printed as it runs."""

from __future__ import annotations

import json

import seahaven

payments = seahaven.World(
    name="payments",
    version="1.0.0",
    schema="CREATE TABLE charges (id TEXT PRIMARY KEY, amount INTEGER NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@payments.tool
def create_charge(ctx: seahaven.Ctx, amount: int) -> dict[str, object]:
    """Take a payment and return the charge."""
    charge = {"id": ctx.ids.uuid(), "amount": amount}
    ctx.db.execute("INSERT INTO charges (id, amount) VALUES (?, ?)", charge["id"], amount)
    return charge


shop = seahaven.World(
    name="shop",
    version="1.0.0",
    schema="CREATE TABLE orders (id TEXT PRIMARY KEY, total INTEGER NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)
shop.add_world(payments, tool_prefix="pay_")


@shop.tool
def place_order(ctx: seahaven.Ctx, total: int) -> dict[str, object]:
    """Record an order and charge for it."""
    charge = ctx.worlds.payments.call(create_charge, amount=total)
    order = {"id": ctx.ids.uuid(), "total": total, "charge_id": charge["id"]}
    ctx.db.execute("INSERT INTO orders (id, total) VALUES (?, ?)", order["id"], total)
    return order


with shop.instance(seed=7, now="2026-06-01T09:00:00.000Z", clock_mode="tick") as inst:
    print("tools:", [tool["name"] for tool in inst.tools()])
    print("place_order ->", inst.call("place_order", total=500))
    print("pay_create_charge ->", inst.call("pay_create_charge", amount=20))
    document = inst.state()
    print("state document:")
    print(json.dumps({key: document[key] for key in ("format", "world", "call_count", "now")}))
    for record in document["state"]["db"]["log"]:
        print(" ", json.dumps(record))
