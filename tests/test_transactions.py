"""Transactions: one call is one transaction, ``transaction=False`` opts out, ``transaction()``
nests as a savepoint, and middleware runs outside the tool's transaction. A bad call never
leaves partial state."""

from typing import Any

import apsw
import pytest

import seahaven
from seahaven.world import Handler


class Refused(seahaven.ToolError):
    """A product error raised half way through a tool."""

    def __init__(self) -> None:
        super().__init__("REFUSED", "refused half way")


def declare() -> seahaven.World:
    """A world with a table of rows and a table of audit lines."""
    world = seahaven.World(
        name="transactions",
        version="1.0.0",
        schema="""
        CREATE TABLE rows (id TEXT PRIMARY KEY) STRICT;
        CREATE TABLE audit (id INTEGER PRIMARY KEY, line TEXT NOT NULL) STRICT;
        """,
        state_format="seahaven.state/1",
    )
    return world


def ids(inst: seahaven.Instance, table: str = "rows") -> list[Any]:
    """Every row id in ``table``, read through the inspection connection."""
    return [row["id"] for row in inst.inspect().rows(f"SELECT id FROM {table} ORDER BY id")]


def half_way(ctx: seahaven.Ctx, failure: str) -> None:
    """Write two rows, then fail in the way asked for."""
    ctx.db.execute("INSERT INTO rows VALUES ('first')")
    ctx.db.execute("INSERT INTO rows VALUES ('second')")
    if failure == "tool_error":
        raise Refused()
    if failure == "db_error":
        ctx.db.execute("INSERT INTO rows VALUES ('first')")
    if failure == "bug":
        raise KeyError("a bug in world code")
    if failure == "world_bug":
        raise seahaven.WorldBug("the author's mistake")


FAILURES = {
    "tool_error": seahaven.ToolError,
    "db_error": seahaven.DbError,
    "bug": KeyError,
    "world_bug": seahaven.WorldBug,
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_tool_that_raises_half_way_has_written_nothing(failure: str) -> None:
    world = declare()
    world.tool(half_way)
    with world.instance() as inst:
        with pytest.raises(FAILURES[failure]):
            inst.call("half_way", failure=failure)
        assert ids(inst) == []
        assert inst.change_log() == []
        # The instance is not left inside a transaction: the next call commits normally.
        inst.call("half_way", failure="none")
        assert ids(inst) == ["first", "second"]


def test_a_tool_that_returns_commits_every_write() -> None:
    world = declare()
    world.tool(half_way)
    with world.instance() as inst:
        inst.call("half_way", failure="none")
        assert ids(inst) == ["first", "second"]


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_transaction_false_autocommits_so_partial_writes_survive(failure: str) -> None:
    world = declare()
    world.tool(half_way, transaction=False)
    with world.instance() as inst:
        with pytest.raises(FAILURES[failure]):
            inst.call("half_way", failure=failure)
        assert ids(inst) == ["first", "second"]


def test_transaction_false_tool_opens_its_own_transactions() -> None:
    world = declare()

    @world.tool(transaction=False)
    def staged(ctx: seahaven.Ctx) -> None:
        with ctx.db.transaction():
            ctx.db.execute("INSERT INTO rows VALUES ('stage one')")
        with ctx.db.transaction():
            ctx.db.execute("INSERT INTO rows VALUES ('stage two')")
            raise Refused()

    with world.instance() as inst:
        with pytest.raises(Refused):
            inst.call("staged")
        assert ids(inst) == ["stage one"]


def test_a_transaction_false_tool_that_leaves_a_transaction_open_is_a_world_bug() -> None:
    world = declare()

    @world.tool(transaction=False)
    def leaky(ctx: seahaven.Ctx) -> None:
        ctx.db.conn.execute("BEGIN")
        ctx.db.execute("INSERT INTO rows VALUES ('never committed')")

    with world.instance() as inst:
        with pytest.raises(seahaven.WorldBug, match="transaction still open"):
            inst.call("leaky")
        assert ids(inst) == []
        assert inst.call_log()[0].error is not None


def test_a_nested_transaction_is_a_savepoint() -> None:
    world = declare()

    @world.tool
    def nested(ctx: seahaven.Ctx) -> bool:
        ctx.db.execute("INSERT INTO rows VALUES ('outer')")
        try:
            with ctx.db.transaction():
                ctx.db.execute("INSERT INTO rows VALUES ('inner, rolled back')")
                with ctx.db.transaction():
                    ctx.db.execute("INSERT INTO rows VALUES ('innermost')")
                raise Refused()
        except Refused:
            pass
        with ctx.db.transaction():
            ctx.db.execute("INSERT INTO rows VALUES ('inner, kept')")
        return ctx.db.in_transaction

    with world.instance() as inst:
        assert inst.call("nested") is True
        assert ids(inst) == ["inner, kept", "outer"]


def test_a_savepoint_inside_a_failing_call_rolls_back_with_it() -> None:
    world = declare()

    @world.tool
    def doomed(ctx: seahaven.Ctx) -> None:
        with ctx.db.transaction():
            ctx.db.execute("INSERT INTO rows VALUES ('released savepoint')")
        raise Refused()

    with world.instance() as inst:
        with pytest.raises(Refused):
            inst.call("doomed")
        assert ids(inst) == []


def test_a_failing_commit_rolls_the_call_back() -> None:
    world = seahaven.World(
        name="transactions",
        version="1.0.0",
        schema="""
        CREATE TABLE parents (id TEXT PRIMARY KEY) STRICT;
        CREATE TABLE children (
            id TEXT PRIMARY KEY,
            parent_id TEXT NOT NULL REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED
        ) STRICT;
        """,
        state_format="seahaven.state/1",
    )

    @world.tool
    def orphan(ctx: seahaven.Ctx) -> str:
        ctx.db.execute("INSERT INTO parents VALUES ('p1')")
        ctx.db.execute("INSERT INTO children VALUES ('c1', 'ghost')")
        return "returned normally"

    with world.instance() as inst:
        with pytest.raises(seahaven.DbError) as caught:
            inst.call("orphan")
        assert caught.value.sqlite_code == apsw.SQLITE_CONSTRAINT_FOREIGNKEY
        assert inst.inspect().rows("SELECT * FROM parents") == []
        assert inst.change_log() == []


# --- middleware and the tool's transaction -------------------------------------------------------


def audit_then_continue(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
    """Write an audit line before the tool runs."""
    ctx.db.execute("INSERT INTO audit (line) VALUES (?)", f"called {call.name}")
    return next_(ctx, call)


def test_middleware_writes_survive_the_tools_rollback() -> None:
    world = declare()
    world.middleware(audit_then_continue)
    world.tool(half_way)
    with world.instance() as inst:
        with pytest.raises(Refused):
            inst.call("half_way", failure="tool_error")
        assert ids(inst) == []
        assert inst.inspect().rows("SELECT line FROM audit") == [{"line": "called half_way"}]


def test_middleware_wrapping_next_in_a_transaction_rolls_back_with_the_tool() -> None:
    world = declare()

    @world.middleware
    def all_or_nothing(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        with ctx.db.transaction():
            ctx.db.execute("INSERT INTO audit (line) VALUES ('inside the same transaction')")
            return next_(ctx, call)

    world.tool(half_way)
    with world.instance() as inst:
        with pytest.raises(Refused):
            inst.call("half_way", failure="tool_error")
        assert ids(inst) == []
        assert ids(inst, "audit") == []
        inst.call("half_way", failure="none")
        assert ids(inst) == ["first", "second"]
        assert inst.inspect().rows("SELECT line FROM audit") == [
            {"line": "inside the same transaction"}
        ]


def test_the_tool_is_outside_any_transaction_until_dispatch_opens_one() -> None:
    world = declare()
    seen: list[bool] = []

    @world.middleware
    def observe(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        seen.append(ctx.db.in_transaction)
        result = next_(ctx, call)
        seen.append(ctx.db.in_transaction)
        return result

    @world.tool
    def inside(ctx: seahaven.Ctx) -> None:
        seen.append(ctx.db.in_transaction)

    with world.instance() as inst:
        inst.call("inside")
    assert seen == [False, True, False]
