"""A help desk with the customer's phone added, and a pack whose scenario has a scripted customer.

The tests of people on the wire serve it (``seahaven serve --world helpdesk:world
--scenarios helpdesk:pack``, run from this folder) and play it in process, and
compare. The customer gives their PIN only when asked, turns roaming on with
their phone's own tool (which the agent is never offered) when asked, and ends
the conversation once told the refund is done; an event posts a notice after the
agent's second call, and the refund mints a receipt id from the seeded stream.
"""

from __future__ import annotations

from typing import Any

import seahaven
from seahaven.scenarios import Scenario, ScenarioSet

NOW = "2026-05-04T09:00:00.000Z"
SEED_ROWS = (
    "INSERT INTO accounts VALUES ('a1', 'maya@example.test', '4321', 5000); "
    "INSERT INTO handset.settings VALUES ('roaming', 'off')"
)


def make_world() -> seahaven.World:
    """A fresh help desk with the customer's handset added."""
    handset = seahaven.World(
        name="handset",
        version="1.0.0",
        schema="CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )

    @handset.tool
    def set_roaming(ctx: seahaven.Ctx, on: bool) -> dict[str, str]:
        """Turn roaming on or off on the phone."""
        value = "on" if on else "off"
        ctx.db.execute("INSERT OR REPLACE INTO settings VALUES ('roaming', ?)", value)
        return {"roaming": value}

    desk = seahaven.World(
        name="helpdesk",
        version="1.0.0",
        schema="""
        CREATE TABLE accounts (id TEXT PRIMARY KEY, email TEXT, pin TEXT, balance INTEGER) STRICT;
        CREATE TABLE receipts (id TEXT PRIMARY KEY, account_id TEXT, cents INTEGER) STRICT;
        CREATE TABLE notices (n INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT;
        """,
        state_format="seahaven.state/1",
        description="A help desk, and the customer's phone.",
    )
    desk.add_world(handset, name="handset", tool_prefix="phone_")

    @desk.tool
    def refund(ctx: seahaven.Ctx, account_id: str, cents: int, pin: str) -> dict[str, Any]:
        """Refund ``cents`` to an account; the customer's PIN verifies them."""
        row = ctx.db.one("SELECT pin FROM accounts WHERE id = ?", account_id)
        if row is None or row["pin"] != pin:
            raise seahaven.ToolError("NOT_VERIFIED", "the PIN does not match that account")
        receipt = "r-" + ctx.ids.uuid()[:8]
        ctx.db.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", cents, account_id)
        ctx.db.execute("INSERT INTO receipts VALUES (?, ?, ?)", receipt, account_id, cents)
        return {"receipt": receipt}

    @desk.tool
    def line_status(ctx: seahaven.Ctx) -> dict[str, str]:
        """Whether the customer's phone has roaming on, as the network sees it."""
        row = ctx.worlds.handset.db.one("SELECT value FROM settings WHERE name = 'roaming'")
        return {"roaming": row["value"] if row else "off"}

    @desk.tool
    def post_notice(ctx: seahaven.Ctx, text: str) -> None:
        """Post a notice on the desk's board."""
        ctx.db.execute("INSERT INTO notices (text) VALUES (?)", text)

    return desk


SOLUTION = [
    {"tool": "message_user", "arguments": {"text": "Could you tell me your PIN?"}},
    {"tool": "refund", "arguments": {"account_id": "a1", "cents": 2500, "pin": "4321"}},
    {"tool": "message_user", "arguments": {"text": "Please turn roaming on."}},
    {"tool": "line_status", "arguments": {}},
    {"tool": "message_user", "arguments": {"text": "You are refunded 25.00. All done!"}},
]


def make_pack(world: seahaven.World | str = "helpdesk") -> ScenarioSet:
    """The pack ``helpdesk``: one scenario with a scripted customer and an event."""
    refund_and_roam = Scenario.model_validate(
        {
            "id": "refund-and-roam",
            "world": world,
            "instructions": (
                "Maya (account a1) was charged 25.00 twice and cannot get a signal abroad. "
                "Verify her with her PIN, refund her, and get her phone roaming."
            ),
            "start": {"setup_sql": SEED_ROWS, "now": NOW, "clock_mode": "tick"},
            "user": {
                "instructions": "You are Maya. Give your PIN only when asked.",
                "tools": ["phone_set_roaming"],
                "script": [
                    {"when": {"pattern": r"\bpin\b"}, "reply": "It's 4321."},
                    {
                        "when": {"contains": "roaming"},
                        "calls": [{"tool": "phone_set_roaming", "arguments": {"on": True}}],
                        "reply": "Roaming is on.",
                    },
                    {"when": {"contains": "refunded"}, "reply": "Thanks!", "stop": True},
                ],
                "fallback": "I was charged twice.",
            },
            "events": [
                {
                    "name": "outage",
                    "after_call": 2,
                    "tool": "post_notice",
                    "arguments": {"text": "outage"},
                }
            ],
            "grader": [
                {"changed": {"table": "accounts", "where": {"id": "a1"}, "to": {"balance": 7500}}},
                {"changed": {"table": "settings", "store": "handset", "by": "user"}},
                {"told_user": {"pattern": r"\bpin\b", "before": "refund"}},
                {"told_user": {"contains": ["25.00"]}},
                "user_ended",
            ],
            "solution": SOLUTION,
            "budget": 10,
        }
    )
    return ScenarioSet("helpdesk", "1.0.0", [refund_and_roam], splits={"test": ["refund-and-roam"]})


world = make_world()
pack = make_pack(world)
