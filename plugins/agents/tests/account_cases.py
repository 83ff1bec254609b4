"""A bank and its customer's banking app: a pack whose user states an account number.

The agent closes an account once the customer tells it the number; the
customer freezes their card in their own app (dual control: the ``app_`` tools
are the user's). ``seahaven scenarios check account_cases:pack --user-model``
checks a model-played customer against the scripted one on it.
"""

from __future__ import annotations

import seahaven
from seahaven.scenarios import Scenario, ScenarioSet

ACCOUNT = "40221873"
CARD = "5521"
SEED_ROWS = (
    f"INSERT INTO accounts VALUES ('{ACCOUNT}', 'Ada Lovelace', 'open'), "
    "('40221999', 'Charles Babbage', 'open'); "
    f"INSERT INTO app.cards VALUES ('{CARD}', 'active')"
)


def make_bank() -> seahaven.World:
    """The bank, with the customer's app added under ``app_``."""
    app = seahaven.World(
        name="app",
        version="1.0.0",
        schema="CREATE TABLE cards (last4 TEXT PRIMARY KEY, status TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )

    @app.tool
    def freeze_card(ctx: seahaven.Ctx, last4: str) -> dict[str, str]:
        """Freeze one of your cards, by its last four digits."""
        changed = ctx.db.execute("UPDATE cards SET status = 'frozen' WHERE last4 = ?", last4)
        if changed.rowcount == 0:
            raise seahaven.ToolError("NO_CARD", f"you have no card ending {last4}")
        return {"last4": last4, "status": "frozen"}

    bank = seahaven.World(
        name="bank",
        version="1.0.0",
        schema=(
            "CREATE TABLE accounts (number TEXT PRIMARY KEY, holder TEXT NOT NULL, "
            "status TEXT NOT NULL) STRICT;"
        ),
        state_format="seahaven.state/1",
    )
    bank.add_world(app, name="app", tool_prefix="app_")

    @bank.tool
    def find_account(ctx: seahaven.Ctx, number: str) -> dict[str, str]:
        """The account with this number."""
        row = ctx.db.one("SELECT * FROM accounts WHERE number = ?", number)
        if row is None:
            raise seahaven.ToolError("NOT_FOUND", f"no account {number}")
        return dict(row)

    @bank.tool
    def close_account(ctx: seahaven.Ctx, number: str) -> dict[str, str]:
        """Close the account with this number."""
        changed = ctx.db.execute("UPDATE accounts SET status = 'closed' WHERE number = ?", number)
        if changed.rowcount == 0:
            raise seahaven.ToolError("NOT_FOUND", f"no account {number}")
        return {"number": number, "status": "closed"}

    return bank


def close_account_scenario(world: seahaven.World) -> Scenario:
    """The customer who wants their account closed and their card frozen."""
    return Scenario.model_validate(
        {
            "id": "close-account",
            "world": world,
            "instructions": (
                "A customer wants their account closed. Ask them for the account number with "
                "message_user, have them freeze their card in their banking app, close the "
                "account, and tell them."
            ),
            "start": {
                "setup_sql": SEED_ROWS,
                "now": "2026-05-04T09:00:00.000Z",
                "clock_mode": "tick",
            },
            "user": {
                "instructions": (
                    f"You are Ada Lovelace. You want your account {ACCOUNT} closed. Give the "
                    f"account number only when asked. When asked, freeze your card ending {CARD} "
                    "in your banking app."
                ),
                "tools": ["app_freeze_card"],
                "script": [
                    {"when": {"pattern": "account number"}, "reply": f"It's {ACCOUNT}."},
                    {
                        "when": {"contains": "freeze"},
                        "calls": [{"tool": "app_freeze_card", "arguments": {"last4": CARD}}],
                        "reply": f"Done: the card ending {CARD} is frozen.",
                    },
                    {"when": {"contains": "closed"}, "reply": "Thank you!", "stop": True},
                ],
                "fallback": "I would like to close my account.",
            },
            "grader": [
                {
                    "changed": {
                        "table": "accounts",
                        "where": {"number": ACCOUNT},
                        "to": {"status": "closed"},
                    }
                },
                {
                    "changed": {
                        "table": "cards",
                        "store": "app",
                        "to": {"status": "frozen"},
                        "by": "user",
                    }
                },
                "user_ended",
            ],
            "solution": [
                {"tool": "message_user", "arguments": {"text": "What is your account number?"}},
                {"tool": "find_account", "arguments": {"number": ACCOUNT}},
                {
                    "tool": "message_user",
                    "arguments": {"text": "Please freeze your card in your app."},
                },
                {"tool": "close_account", "arguments": {"number": ACCOUNT}},
                {
                    "tool": "message_user",
                    "arguments": {"text": f"Your account {ACCOUNT} is closed."},
                },
            ],
            "budget": 12,
        }
    )


pack = ScenarioSet("accounts", "1.0.0", [close_account_scenario(make_bank())])
