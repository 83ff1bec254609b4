"""A help desk and the customer's phone: the world the tests of users, events and actors use.

``desk`` keeps accounts and tickets in its own store and adds ``handset``, the
customer's phone (prefix ``phone_``), whose settings only the customer should
change: dual control. The desk reads the phone's line through its handle, and
refunds an account once the customer is verified. ``scenario(...)`` builds the
usual scenario on it, with a scripted customer who gives their details only
when asked, and ``events`` a few things that happen meanwhile.
"""

from __future__ import annotations

from typing import Any

import seahaven
from seahaven.scenarios import Scenario, UserContext, UserReply

NOW = "2026-05-04T09:00:00.000Z"

ACCOUNTS = """
CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    pin TEXT NOT NULL,
    balance INTEGER NOT NULL
) STRICT;
CREATE TABLE tickets (id TEXT PRIMARY KEY, status TEXT NOT NULL, note TEXT) STRICT;
CREATE TABLE notices (n INTEGER PRIMARY KEY, text TEXT NOT NULL) STRICT;
"""
SETTINGS = "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;"
SEED_ROWS = (
    "INSERT INTO accounts VALUES ('a1', 'maya@example.test', '4321', 5000), "
    "('a2', 'omar@example.test', '1111', 900); "
    "INSERT INTO tickets VALUES ('t1', 'open', NULL); "
    "INSERT INTO handset.settings VALUES ('roaming', 'off')"
)


def make_desk() -> seahaven.World:
    """A fresh desk world with the customer's handset added (worlds are not shared)."""
    handset = seahaven.World(
        name="handset", version="1.0.0", schema=SETTINGS, state_format="seahaven.state/1"
    )

    @handset.tool
    def set_roaming(ctx: seahaven.Ctx, on: bool) -> dict[str, str]:
        """Turn roaming on or off on the phone."""
        value = "on" if on else "off"
        ctx.db.execute("INSERT OR REPLACE INTO settings VALUES ('roaming', ?)", value)
        return {"roaming": value}

    @handset.tool
    def unlock(ctx: seahaven.Ctx, code: str) -> dict[str, bool]:
        """Unlock the phone with its code."""
        if code != "0000":
            raise seahaven.ToolError("WRONG_CODE", "that is not the phone's code")
        return {"unlocked": True}

    @handset.tool
    def read_settings(ctx: seahaven.Ctx) -> dict[str, str]:
        """Every setting of the phone."""
        return {row["name"]: row["value"] for row in ctx.db.rows("SELECT * FROM settings")}

    desk = seahaven.World(
        name="desk", version="1.0.0", schema=ACCOUNTS, state_format="seahaven.state/1"
    )
    desk.add_world(handset, name="handset", tool_prefix="phone_")

    @desk.tool
    def find_account(ctx: seahaven.Ctx, email: str) -> dict[str, Any]:
        """The account with this email."""
        row = ctx.db.one("SELECT id, email FROM accounts WHERE email = ?", email)
        if row is None:
            raise seahaven.ToolError("NOT_FOUND", f"no account has the email {email}")
        return row

    @desk.tool
    def refund(ctx: seahaven.Ctx, account_id: str, cents: int, pin: str) -> dict[str, Any]:
        """Refund ``cents`` to an account; the customer's PIN verifies them."""
        row = ctx.db.one("SELECT pin FROM accounts WHERE id = ?", account_id)
        if row is None or row["pin"] != pin:
            raise seahaven.ToolError("NOT_VERIFIED", "the PIN does not match that account")
        ctx.db.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", cents, account_id)
        return {"account_id": account_id, "refunded": cents}

    @desk.tool
    def line_status(ctx: seahaven.Ctx) -> dict[str, str]:
        """Whether the customer's phone has roaming on, as the network sees it."""
        row = ctx.worlds.handset.db.one("SELECT value FROM settings WHERE name = 'roaming'")
        return {"roaming": row["value"] if row else "off"}

    @desk.tool
    def close_ticket(ctx: seahaven.Ctx, ticket_id: str, note: str) -> None:
        """Close a ticket with a note."""
        changed = ctx.db.execute(
            "UPDATE tickets SET status = 'closed', note = ? WHERE id = ?", note, ticket_id
        )
        if changed.rowcount == 0:
            raise seahaven.ToolError("NOT_FOUND", f"there is no ticket {ticket_id}")

    @desk.tool
    def post_notice(ctx: seahaven.Ctx, text: str) -> dict[str, Any]:
        """Post a notice on the desk's board."""
        cursor = ctx.db.execute("INSERT INTO notices (text) VALUES (?)", text)
        return {"n": cursor.last_rowid, "text": text}

    return desk


CUSTOMER = {
    "instructions": (
        "You are Maya. You were charged 25.00 twice. Give your email and PIN only when asked; "
        "turn roaming on if you are asked to."
    ),
    "tools": ["phone_set_roaming", "phone_read_settings"],
    "script": [
        {"when": {"contains": "email"}, "reply": "It's maya@example.test."},
        {"when": {"pattern": r"\bpin\b"}, "reply": "My PIN is 4321."},
        {
            "when": {"contains": "roaming"},
            "calls": [{"tool": "phone_set_roaming", "arguments": {"on": True}}],
            "reply": "Done, roaming is on now.",
        },
        {"when": {"pattern": "refund(ed)?|sorted"}, "reply": "Great, thank you!", "stop": True},
    ],
    "fallback": "I was charged twice for my plan. Can you help?",
}

SOLUTION = [
    {"tool": "message_user", "arguments": {"text": "What is the email on your account?"}},
    {"tool": "find_account", "arguments": {"email": "maya@example.test"}},
    {"tool": "message_user", "arguments": {"text": "Thanks. What is your PIN?"}},
    {"tool": "refund", "arguments": {"account_id": "a1", "cents": 2500, "pin": "4321"}},
    {"tool": "message_user", "arguments": {"text": "Please turn roaming on for me."}},
    {"tool": "line_status", "arguments": {}},
    {"tool": "message_user", "arguments": {"text": "All sorted: you are refunded 25.00."}},
]

GRADER = [
    {"changed": {"table": "accounts", "where": {"id": "a1"}, "to": {"balance": 7500}}},
    {
        "changed": {
            "table": "settings",
            "store": "handset",
            "to": {"value": "on"},
            "by": "user",
            "not_by": "agent",
        }
    },
    {"told_user": {"contains": ["refund", "25.00"]}},
    # Asked for the email (which finds the account) and the PIN before refunding: the panel's
    # drop-message mutants pass a grader that asks only for the PIN.
    {"told_user": {"contains": "email", "before": "refund"}},
    {"told_user": {"pattern": r"\bpin\b", "before": "refund"}},
    {"nothing_else_changed": {"allow": ["accounts"], "by": "agent"}},
    "user_ended",
]


def scenario(world: seahaven.World, **changes: Any) -> Scenario:
    """The refund-and-roaming scenario on ``world``, with ``changes`` laid over it."""
    data: dict[str, Any] = {
        "id": "refund-and-roam",
        "world": world,
        "instructions": "A customer is on the line about a double charge. Help them.",
        "start": {"setup_sql": SEED_ROWS, "now": NOW, "clock_mode": "tick"},
        "user": CUSTOMER,
        "grader": GRADER,
        "solution": SOLUTION,
        "budget": 20,
    }
    data.update(changes)
    return Scenario.model_validate(data)


def echo_user(turn: UserContext) -> str:
    """A Python user: repeats the agent's message, and stops when told goodbye."""
    if "goodbye" in turn.message.casefold():
        return "Bye! ###STOP###"
    return f"You said: {turn.message} ({len(turn.conversation)} messages so far)"


async def async_user(turn: UserContext) -> UserReply:
    """A Python user played asynchronously, as a model-played one would be, spending tokens."""
    if "roaming" in turn.message:
        turn.call("phone_set_roaming", on=True)
    return UserReply(
        "ok", stop="bye" in turn.message, tokens={"prompt_tokens": 7, "total_tokens": 9}
    )


def post_outage(instance: seahaven.Instance) -> None:
    """An event as Python: the network posts an outage notice, and bulk-writes a second one."""
    instance.call("post_notice", text="Network outage in your area")
    with instance.bulk() as ctx:
        ctx.db.execute("INSERT INTO notices (text) VALUES ('written directly')")


def broken_event(instance: seahaven.Instance) -> None:
    """An event whose function is wrong: a bug of the scenario's author."""
    raise RuntimeError("the event's author forgot something")
