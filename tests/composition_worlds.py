"""Small worlds for the composition tests, built fresh by every test that uses them.

A ``World`` is mutable until it is sealed, and the composition tests register
on worlds after they have been used, so no world here is shared between tests:
every helper returns a new one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import seahaven

CHARGES = "CREATE TABLE charges (id TEXT PRIMARY KEY, amount INTEGER NOT NULL) STRICT;"
STAFF = "CREATE TABLE staff (id TEXT PRIMARY KEY) STRICT;"
ORDERS = "CREATE TABLE orders (id TEXT PRIMARY KEY, total INTEGER NOT NULL) STRICT;"
NOW = "2026-06-01T09:00:00.000Z"


def make_world(name: str, schema: str = "", **options: Any) -> seahaven.World:
    """A world with ``schema`` and nothing registered on it."""
    return seahaven.World(
        name=name, version="1.0.0", schema=schema, state_format="seahaven.state/1", **options
    )


def add_echo_tools(world: seahaven.World, *names: str) -> None:
    """Register one tool per name; each answers which world's tool ran."""
    for tool_name in names:
        world.tool(
            _echo(world.name, tool_name),
            name=tool_name,
            description=f"The {tool_name} tool of {world.name}.",
        )


def _echo(world_name: str, tool_name: str) -> Any:
    def echo(ctx: seahaven.Ctx) -> dict[str, str]:
        return {"world": world_name, "tool": tool_name}

    return echo


def make_payments(name: str = "payments", **options: Any) -> seahaven.World:
    """A payments world: ``create_charge`` writes a row, ``count_charges`` reads them."""
    world = make_world(name, CHARGES, **options)

    @world.tool
    def create_charge(ctx: seahaven.Ctx, amount: int) -> dict[str, Any]:
        """Book ``amount`` against this account; answers the new row's id and amount."""
        charge_id = ctx.ids.uuid()
        ctx.db.execute("INSERT INTO charges (amount, id) VALUES (?, ?)", amount, charge_id)
        return {"id": charge_id, "amount": amount}

    @world.tool
    def count_charges(ctx: seahaven.Ctx) -> dict[str, int]:
        """How many charges this account holds."""
        row = ctx.db.one("SELECT count(*) AS n FROM charges")
        assert row is not None
        return {"count": int(row["n"])}

    return world


def surface(target: seahaven.Instance | seahaven.World) -> list[str]:
    """The names on the agent's surface, in order."""
    if isinstance(target, seahaven.World):
        return [listed["name"] for listed in target.composition().tools]
    return [listed["name"] for listed in target.tools()]


def assert_raised_on_line_with(raised: pytest.ExceptionInfo[Any], fragment: str) -> None:
    """The test's own frame in the traceback is the line that holds ``fragment``.

    That is how a test says "raised from the line you can read it on": a
    refusal deferred to some later line would point there instead.
    """
    own = [
        entry
        for entry in raised.traceback
        if Path(str(entry.path)).name.startswith("test_composition_")
    ]
    assert own, "the traceback never passes through the test"
    statement = str(own[-1].statement)
    assert fragment in statement, f"raised from {statement!r}, not from a line with {fragment!r}"
