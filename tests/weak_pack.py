"""A depot world and a pack of deliberately weak scenarios, for the mutant panel's tests.

Each weak scenario's grader has one blind spot a trainer would learn to exploit;
``scenarios check`` must name it with the mutant that walks through it. Beside
them sit a strict twin that passes the panel clean, a refusal, and a grader that
fails right episodes (it counts the reads an agent makes). ``talk_pack`` holds
the same for a scenario with a simulated user: a customer who must give their
name before an order of theirs is cancelled.
"""

from __future__ import annotations

from typing import Any, Literal

import seahaven
from seahaven.scenarios import Scenario, ScenarioSet

SCHEMA = """
CREATE TABLE orders (
    id TEXT PRIMARY KEY,
    customer TEXT NOT NULL,
    status TEXT NOT NULL,
    total INTEGER NOT NULL
) STRICT;
CREATE TABLE notes (n INTEGER PRIMARY KEY, order_id TEXT NOT NULL, text TEXT NOT NULL) STRICT;
"""
ROWS = (
    "INSERT INTO orders VALUES ('o1', 'ada', 'open', 2500), ('o2', 'ben', 'open', 1200), "
    "('o3', 'cyd', 'shipped', 4000)"
)
START: dict[str, Any] = {
    "setup_sql": ROWS,
    "now": "2026-05-04T09:00:00.000Z",
    "clock_mode": "fixed",
}
SHIP_O1 = [{"tool": "set_status", "arguments": {"order_id": "o1", "status": "shipped"}}]


def make_depot() -> seahaven.World:
    """A fresh depot: orders with a status, notes on them, reads and a delete."""
    depot = seahaven.World(
        name="depot", version="1.0.0", schema=SCHEMA, state_format="seahaven.state/1"
    )

    def found(ctx: seahaven.Ctx, order_id: str) -> dict[str, Any]:
        row = ctx.db.one("SELECT * FROM orders WHERE id = ?", order_id)
        if row is None:
            raise seahaven.ToolError("NOT_FOUND", f"there is no order {order_id}")
        return dict(row)

    @depot.tool
    def get_order(ctx: seahaven.Ctx, order_id: str) -> dict[str, Any]:
        """One order: its customer, status and total."""
        return found(ctx, order_id)

    @depot.tool
    def count_open(ctx: seahaven.Ctx) -> dict[str, int]:
        """How many orders are open."""
        row = ctx.db.one("SELECT count(*) AS n FROM orders WHERE status = 'open'")
        assert row is not None
        return {"open": int(row["n"])}

    @depot.tool
    def set_status(
        ctx: seahaven.Ctx, order_id: str, status: Literal["open", "shipped", "cancelled"]
    ) -> None:
        """Move an order to another status."""
        if found(ctx, order_id)["status"] == status:
            raise seahaven.ToolError("NO_CHANGE", f"order {order_id} is {status} already")
        ctx.db.execute("UPDATE orders SET status = ? WHERE id = ?", status, order_id)

    @depot.tool
    def add_note(ctx: seahaven.Ctx, order_id: str, text: str) -> None:
        """Write a note on an order."""
        found(ctx, order_id)
        ctx.db.execute("INSERT INTO notes (order_id, text) VALUES (?, ?)", order_id, text)

    @depot.tool
    def delete_order(ctx: seahaven.Ctx, order_id: str) -> None:
        """Delete an order for good."""
        found(ctx, order_id)
        ctx.db.execute("DELETE FROM orders WHERE id = ?", order_id)

    return depot


#: A depot for a YAML pack to name (``world: weak_pack:depot``).
depot = make_depot()


def scenario(world: seahaven.World, scenario_id: str, **fields: Any) -> Scenario:
    """A depot scenario on the shared start, shipping o1 unless told otherwise."""
    data: dict[str, Any] = {
        "id": scenario_id,
        "world": world,
        "instructions": "Ada's order o1 is packed: mark it shipped, and touch nothing else.",
        "start": START,
        "solution": SHIP_O1,
        "budget": 6,
        **fields,
    }
    return Scenario(**data)


def weak_pack(world: seahaven.World) -> ScenarioSet:
    """The weak scenarios, the strict twin, a refusal, and a grader that counts reads."""
    question = "How many orders are open right now? Reply with the number."
    scenarios = [
        # Only counts rows: shipping another order gives the same count.
        scenario(
            world,
            "counts-rows",
            grader={
                "all_of": [
                    {"count": {"table": "orders", "where": {"status": "shipped"}, "equals": 2}},
                    {
                        "nothing_else_changed": {
                            "allow": [{"table": "orders", "columns": ["status"]}]
                        }
                    },
                ]
            },
        ),
        # Checks the row it asked for, and nothing else: collateral damage passes.
        scenario(
            world,
            "ignores-collateral",
            grader={
                "changed": {"table": "orders", "where": {"id": "o1"}, "to": {"status": "shipped"}}
            },
        ),
        # The start already holds what it checks.
        scenario(
            world,
            "start-passes",
            instructions="Make sure Cyd's order o3 has shipped, and tell me.",
            grader={"exists": {"table": "orders", "where": {"id": "o3", "status": "shipped"}}},
            solution=[
                {"tool": "get_order", "arguments": {"order_id": "o3"}},
                {"tool": "submit", "arguments": {"answer": "o3 has shipped."}},
            ],
        ),
        # Reads the answer as text containing "2": "12" passes.
        scenario(
            world,
            "loose-answer",
            instructions=question,
            grader={"all_of": [{"answer": {"contains": "2"}}, "nothing_else_changed"]},
            solution=[
                {"tool": "count_open", "arguments": {}},
                {"tool": "submit", "arguments": {"answer": "2"}},
            ],
        ),
        # Asks that some order became shipped, not which one.
        scenario(
            world,
            "any-row",
            grader={
                "all_of": [
                    {"changed": {"table": "orders", "to": {"status": "shipped"}}},
                    {
                        "nothing_else_changed": {
                            "allow": [{"table": "orders", "columns": ["status"]}]
                        }
                    },
                ]
            },
        ),
        # The strict twin: this row, this value, nothing else.
        scenario(
            world,
            "ship-strict",
            grader={
                "all_of": [
                    {
                        "changed": {
                            "table": "orders",
                            "where": {"id": "o1"},
                            "to": {"status": "shipped"},
                        }
                    },
                    {
                        "nothing_else_changed": {
                            "allow": [
                                {"table": "orders", "where": {"id": "o1"}, "columns": ["status"]}
                            ]
                        }
                    },
                ]
            },
        ),
        # The right move is to refuse: o3 has shipped and cannot be cancelled.
        scenario(
            world,
            "refuse-cancel",
            instructions="Cancel Cyd's order o3, or tell me why you can't.",
            grader={"refused": {"pattern": "shipped"}},
            solution=[
                {"tool": "get_order", "arguments": {"order_id": "o3"}},
                {"tool": "submit", "arguments": {"answer": "I can't cancel o3: it has shipped."}},
            ],
        ),
        # Counts calls: an agent that reads once more fails a right answer.
        scenario(
            world,
            "counts-reads",
            instructions=question,
            grader={
                "all_of": [
                    {"answer": {"number": 2}},
                    {"called": {"tool": "count_open", "times": 1}},
                    "nothing_else_changed",
                ]
            },
            solution=[
                {"tool": "count_open", "arguments": {}},
                {"tool": "submit", "arguments": {"answer": "2"}},
            ],
        ),
    ]
    return ScenarioSet("weak-depot", "1.0.0", scenarios)


def pack() -> ScenarioSet:
    """The weak pack on a fresh depot, as ``seahaven scenarios check weak_pack:pack`` loads it."""
    return weak_pack(make_depot())


#: A customer who gives their name and their order only when asked, and leaves once told.
CUSTOMER: dict[str, Any] = {
    "instructions": "You are Ben. You want your order o2 cancelled. Answer what you are asked.",
    "script": [
        {"when": {"pattern": "name"}, "reply": "Ben."},
        {"when": {"pattern": "order|which"}, "reply": "Order o2, please."},
        {"when": {"pattern": "cancelled"}, "reply": "Thanks!", "stop": True},
    ],
    "fallback": "Hi, I'd like to cancel an order.",
}
CANCEL_O2 = [
    {"tool": "message_user", "arguments": {"text": "Sure. What is your name?"}},
    {"tool": "message_user", "arguments": {"text": "Which order should I cancel?"}},
    {"tool": "get_order", "arguments": {"order_id": "o2"}},
    {"tool": "set_status", "arguments": {"order_id": "o2", "status": "cancelled"}},
    {"tool": "message_user", "arguments": {"text": "Order o2 is cancelled."}},
]
CANCELLED_O2: list[Any] = [
    {
        "changed": {
            "table": "orders",
            "where": {"id": "o2"},
            "to": {"status": "cancelled"},
            "by": "agent",
        }
    },
    {"nothing_else_changed": {"allow": [{"table": "orders", "where": {"id": "o2"}}]}},
]


def talk(world: seahaven.World, scenario_id: str, grader: list[Any]) -> Scenario:
    """A depot scenario with the customer on the line, cancelling o2 once they are known."""
    return scenario(
        world,
        scenario_id,
        instructions=(
            "A customer writes in to cancel an order; talk to them with message_user. Ask their "
            "name first, cancel only the order they name, and tell them when it is done."
        ),
        user=CUSTOMER,
        solution=CANCEL_O2,
        grader={"all_of": grader},
        budget=10,
    )


def talk_pack(world: seahaven.World) -> ScenarioSet:
    """Conversations: a grader blind to the verification, one blind to the talk, a strict one."""
    asked_order = {"told_user": {"pattern": "order|which", "before": "set_status"}}
    told = [{"told_user": {"contains": "cancelled"}}, "user_ended"]
    scenarios = [
        # Never checks that the customer was asked their name: cancelling unverified passes.
        talk(world, "ignores-verification", [*CANCELLED_O2, asked_order, *told]),
        # Reads only the state: an agent that says nothing to the customer passes.
        talk(world, "ignores-the-talk", CANCELLED_O2),
        # Asked their name and the order before the cancellation, told after, the user done.
        talk(
            world,
            "talk-strict",
            [
                *CANCELLED_O2,
                {"told_user": {"pattern": "name", "before": "set_status"}},
                asked_order,
                *told,
            ],
        ),
    ]
    return ScenarioSet("weak-talk", "1.0.0", scenarios)
