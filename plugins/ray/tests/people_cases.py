"""A pack whose scenarios have people in them, for the tests of trials with users on Ray.

A kiosk world adds the customer's ``wallet`` (prefix ``wallet_``), whose tool only
the customer uses. ``top-up`` has a scripted customer who names an amount only
when asked and approves the charge in their wallet; ``echo`` a customer played by
a Python function; both have an event. Receipt ids are minted from the seeded
stream, so each trial's seed shows in its state. The Ray workers import this
module by reference (``people_cases:pack``).
"""

from __future__ import annotations

from typing import Any

import seahaven
from seahaven.scenarios import Scenario, ScenarioSet, UserContext

wallet = seahaven.World(
    name="wallet",
    version="1.0.0",
    schema="CREATE TABLE approvals (amount INTEGER PRIMARY KEY, ok INTEGER NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)


@wallet.tool
def approve(ctx: seahaven.Ctx, amount: int) -> dict[str, int]:
    """Approve a charge of ``amount`` in the wallet."""
    ctx.db.execute("INSERT OR REPLACE INTO approvals VALUES (?, 1)", amount)
    return {"approved": amount}


world = seahaven.World(
    name="raytrial-kiosk",
    version="1.0.0",
    schema="""
    CREATE TABLE receipts (id TEXT PRIMARY KEY, amount INTEGER NOT NULL) STRICT;
    CREATE TABLE board (n INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT;
    """,
    state_format="seahaven.state/1",
)
world.add_world(wallet, name="wallet", tool_prefix="wallet_")


@world.tool
def charge(ctx: seahaven.Ctx, amount: int) -> dict[str, Any]:
    """Charge the customer ``amount``, once they approved it in their wallet."""
    row = ctx.worlds.wallet.db.one("SELECT ok FROM approvals WHERE amount = ?", amount)
    if row is None:
        raise seahaven.ToolError("NOT_APPROVED", f"the customer has not approved {amount}")
    receipt = "r-" + ctx.ids.uuid()[:8]
    ctx.db.execute("INSERT INTO receipts VALUES (?, ?)", receipt, amount)
    return {"receipt": receipt}


@world.tool
def pin_to_board(ctx: seahaven.Ctx, text: str) -> None:
    """Pin a note to the kiosk's board."""
    ctx.db.execute("INSERT INTO board (text) VALUES (?)", text)


def echo(turn: UserContext) -> str:
    """A customer played by Python: says how many messages there were, and leaves on bye."""
    if "bye" in turn.message:
        return "Bye ###STOP###"
    return f"{len(turn.conversation)} messages; seed {turn.seed}"


START = {"now": "2026-05-04T09:00:00.000Z", "clock_mode": "tick"}
EVENT = {"name": "rush", "after_call": 1, "tool": "pin_to_board", "arguments": {"text": "rush"}}

top_up = Scenario.model_validate(
    {
        "id": "top-up",
        "world": "people_cases:world",
        "instructions": "A customer wants to top up. Ask the amount, have them approve, charge.",
        "start": START,
        "user": {
            "instructions": "You want to top up 20. Say so only when asked the amount.",
            "tools": ["wallet_approve"],
            "script": [
                {"when": {"contains": "how much"}, "reply": "20, please."},
                {
                    "when": {"contains": "approve"},
                    "calls": [{"tool": "wallet_approve", "arguments": {"amount": 20}}],
                    "reply": "Approved.",
                },
                {"when": {"contains": "done"}, "reply": "Thanks!", "stop": True},
            ],
        },
        "events": [EVENT],
        "grader": [
            {"changed": {"table": "receipts", "to": {"amount": 20}, "by": "agent"}},
            {"changed": {"table": "approvals", "store": "wallet", "by": "user"}},
            "user_ended",
        ],
        "solution": [
            {"tool": "message_user", "arguments": {"text": "How much would you like?"}},
            {"tool": "message_user", "arguments": {"text": "Please approve 20 in your wallet."}},
            {"tool": "charge", "arguments": {"amount": 20}},
            {"tool": "message_user", "arguments": {"text": "All done."}},
        ],
        "budget": 8,
    }
)

chat = Scenario.model_validate(
    {
        "id": "echo",
        "world": "people_cases:world",
        "instructions": "Say hello to the customer, then bye.",
        "start": START,
        "user": {"instructions": "You echo.", "python": "people_cases:echo"},
        "events": [EVENT],
        "grader": ["user_ended", {"told_user": {"contains": ["hello"]}}],
        "solution": [
            {"tool": "message_user", "arguments": {"text": "hello"}},
            {"tool": "message_user", "arguments": {"text": "bye"}},
        ],
        "budget": 4,
    }
)

pack = ScenarioSet("raytrial-people", "1.0.0", [top_up, chat])
