"""``Ctx`` and ``Db``: what world code is given, the connection wrapper, ``DbError``, and the
connection set-up the framework owns."""

from collections.abc import Callable
from typing import Any

import apsw
import pytest

import seahaven

SCHEMA = """
CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    balance INTEGER NOT NULL CHECK (balance >= 0)
) STRICT;
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    amount INTEGER NOT NULL
) STRICT;
CREATE TABLE holds (
    id INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) DEFERRABLE INITIALLY DEFERRED
) STRICT;
"""


def with_tool(fn: Callable[..., Any], **options: Any) -> seahaven.World:
    """A ledger world with ``fn`` as its one tool."""
    world = seahaven.World(
        name="ledger", version="1.0.0", schema=SCHEMA, state_format="seahaven.state/1"
    )
    world.tool(fn, **options)
    return world


def run(fn: Callable[..., Any], **arguments: Any) -> Any:
    """Call ``fn`` as a tool once on a fresh instance and return what it returned."""
    with with_tool(fn).instance() as inst:
        return inst.call(fn.__name__, **arguments)


# --- ctx -----------------------------------------------------------------------------------------


def test_ctx_carries_the_instance_members() -> None:
    seen: dict[str, Any] = {}

    def look(ctx: seahaven.Ctx, note: str) -> None:
        seen.update(
            db=ctx.db,
            clock=ctx.clock,
            ids=ctx.ids,
            state=ctx.state,
            call=ctx.call,
            instance=ctx.instance,
        )

    world = with_tool(look)
    with world.instance(seed=4) as inst:
        inst.call("look", note="hi")
        assert isinstance(seen["db"], seahaven.Db)
        assert seen["clock"] is inst.clock
        assert isinstance(seen["ids"], seahaven.Ids)
        assert isinstance(seen["state"], dict)
        call = seen["call"]
        assert isinstance(call, seahaven.Call)
        assert (call.name, call.arguments, call.node) == ("look", {"note": "hi"}, "main")
        assert call.tool is world.tools["look"]
        info = seen["instance"]
        assert (info.id, info.fixture, info.seed) == (inst.id, None, inst.seed)


def test_ctx_instance_is_read_only() -> None:
    def tamper(ctx: seahaven.Ctx) -> None:
        ctx.instance.id = "other"  # type: ignore[misc]

    with pytest.raises(AttributeError):
        run(tamper)


def test_ctx_state_lives_as_long_as_the_instance() -> None:
    world = seahaven.World(
        name="ledger", version="1.0.0", schema=SCHEMA, state_format="seahaven.state/1"
    )

    @world.tool
    def bump(ctx: seahaven.Ctx) -> int:
        ctx.state["n"] = ctx.state.get("n", 0) + 1
        return int(ctx.state["n"])

    with world.instance() as inst:
        assert [inst.call("bump") for _ in range(3)] == [1, 2, 3]
    with world.instance() as inst:
        assert inst.call("bump") == 1


def test_ctx_worlds_has_no_names_for_a_world_that_adds_none() -> None:
    def reach(ctx: seahaven.Ctx, how: str) -> None:
        if how == "attribute":
            ctx.worlds.payments  # noqa: B018
        else:
            ctx.worlds["payments"]

    world = with_tool(reach)
    with world.instance() as inst:
        for how in ("attribute", "item"):
            with pytest.raises(seahaven.WorldBug, match="adds no other worlds"):
                inst.call("reach", how=how)


# --- Db: reading ---------------------------------------------------------------------------------


def _seed_accounts(ctx: seahaven.Ctx) -> None:
    ctx.db.executemany(
        "INSERT INTO accounts (id, balance) VALUES (?, ?)", [("a", 10), ("b", 20), ("c", 30)]
    )


def test_one_returns_the_first_row_as_a_dict_or_none() -> None:
    def read(ctx: seahaven.Ctx) -> list[Any]:
        _seed_accounts(ctx)
        return [
            ctx.db.one("SELECT id, balance FROM accounts ORDER BY id"),
            ctx.db.one("SELECT id FROM accounts WHERE balance > ?", 15),
            ctx.db.one("SELECT id FROM accounts WHERE id = ?", "zz"),
        ]

    assert run(read) == [{"id": "a", "balance": 10}, {"id": "b"}, None]


def test_rows_returns_every_row_as_a_dict() -> None:
    def read(ctx: seahaven.Ctx) -> list[Any]:
        _seed_accounts(ctx)
        return [
            ctx.db.rows("SELECT id, balance * 2 AS doubled FROM accounts ORDER BY id"),
            ctx.db.rows("SELECT id FROM accounts WHERE balance BETWEEN ? AND ?", 15, 35),
            ctx.db.rows("SELECT id FROM accounts WHERE id = 'none'"),
        ]

    assert run(read) == [
        [{"id": "a", "doubled": 20}, {"id": "b", "doubled": 40}, {"id": "c", "doubled": 60}],
        [{"id": "b"}, {"id": "c"}],
        [],
    ]


# --- Db: writing ---------------------------------------------------------------------------------


def test_execute_reports_rowcount_and_last_rowid() -> None:
    def write(ctx: seahaven.Ctx) -> list[Any]:
        _seed_accounts(ctx)
        first = ctx.db.execute("INSERT INTO entries (account_id, amount) VALUES ('a', 1)")
        second = ctx.db.execute("INSERT INTO entries (id, account_id, amount) VALUES (40, 'b', 2)")
        updated = ctx.db.execute("UPDATE accounts SET balance = balance + 1 WHERE id != ?", "c")
        deleted = ctx.db.execute("DELETE FROM entries")
        nothing = ctx.db.execute("UPDATE accounts SET balance = 0 WHERE id = 'zz'")
        read = ctx.db.execute("SELECT * FROM accounts")
        return [first, second, updated, deleted, nothing, read]

    first, second, updated, deleted, nothing, read = run(write)
    assert isinstance(first, seahaven.Exec)
    assert (first.rowcount, first.last_rowid) == (1, 1)
    assert (second.rowcount, second.last_rowid) == (1, 40)
    assert updated.rowcount == 2
    assert deleted.rowcount == 2
    assert nothing.rowcount == 0
    assert read.rowcount == 0
    # last_rowid belongs to the connection: it still names the last insert.
    assert updated.last_rowid == 40


def test_executemany_runs_once_per_row_and_counts_the_changes() -> None:
    def write(ctx: seahaven.Ctx) -> list[Any]:
        _seed_accounts(ctx)
        changed = ctx.db.executemany(
            "UPDATE accounts SET balance = balance - ? WHERE id = ?", [(1, "a"), (2, "b"), (3, "z")]
        )
        return [changed, ctx.db.rows("SELECT balance FROM accounts ORDER BY id")]

    assert run(write) == [2, [{"balance": 9}, {"balance": 18}, {"balance": 30}]]


def test_conn_is_the_raw_apsw_connection() -> None:
    def raw(ctx: seahaven.Ctx) -> list[Any]:
        conn = ctx.db.conn
        assert isinstance(conn, apsw.Connection)
        return [list(row) for row in conn.execute("SELECT 1, 'two'")]

    assert run(raw) == [[1, "two"]]


def test_in_transaction_reflects_the_calls_transaction() -> None:
    def inside(ctx: seahaven.Ctx) -> bool:
        return ctx.db.in_transaction

    world = with_tool(inside)
    world.tool(inside, name="autocommit", transaction=False)
    with world.instance() as inst:
        assert inst.call("inside") is True
        assert inst.call("autocommit") is False


def test_transaction_begins_and_commits_at_the_top_level() -> None:
    def staged(ctx: seahaven.Ctx) -> list[bool]:
        seen = [ctx.db.in_transaction]
        with ctx.db.transaction():
            seen.append(ctx.db.in_transaction)
            ctx.db.execute("INSERT INTO accounts VALUES ('a', 1)")
        seen.append(ctx.db.in_transaction)
        return seen

    world = with_tool(staged, transaction=False)
    with world.instance() as inst:
        assert inst.call("staged") == [False, True, False]
        assert inst.inspect().rows("SELECT id FROM accounts") == [{"id": "a"}]


# --- DbError -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "sqlite_message", "sqlite_code"),
    [
        (
            "INSERT INTO accounts VALUES ('a', 1), ('a', 2)",
            "UNIQUE constraint failed: accounts.id",
            apsw.SQLITE_CONSTRAINT_PRIMARYKEY,
        ),
        (
            "INSERT INTO entries (account_id, amount) VALUES ('ghost', 1)",
            "FOREIGN KEY constraint failed",
            apsw.SQLITE_CONSTRAINT_FOREIGNKEY,
        ),
        (
            "INSERT INTO accounts VALUES ('a', -5)",
            "CHECK constraint failed: balance >= 0",
            apsw.SQLITE_CONSTRAINT_CHECK,
        ),
        (
            "INSERT INTO accounts VALUES ('a', 'lots')",
            "cannot store TEXT value in INTEGER column accounts.balance",
            apsw.SQLITE_CONSTRAINT_DATATYPE,
        ),
        ("SELEC 1", 'near "SELEC": syntax error', apsw.SQLITE_ERROR),
        ("SELECT * FROM missing", "no such table: missing", apsw.SQLITE_ERROR),
    ],
)
def test_every_sqlite_failure_is_a_db_error_carrying_sqlites_text(
    sql: str, sqlite_message: str, sqlite_code: int
) -> None:
    def execute(ctx: seahaven.Ctx, sql: str) -> None:
        ctx.db.execute(sql)

    with pytest.raises(seahaven.DbError) as caught:
        run(execute, sql=sql)
    error = caught.value
    assert error.sqlite_message == sqlite_message
    assert error.sqlite_code == sqlite_code
    assert error.code == "db_error"
    # The engine's text never reaches the agent-facing message on its own.
    assert sqlite_message not in error.message
    assert sqlite_message not in str(error)
    assert sqlite_message not in repr(error.to_dict())
    assert isinstance(error, seahaven.ToolError)


@pytest.mark.parametrize("method", ["one", "rows", "execute"])
def test_every_db_method_translates_failures(method: str) -> None:
    def fail(ctx: seahaven.Ctx, method: str) -> None:
        getattr(ctx.db, method)("SELECT * FROM nowhere")

    with pytest.raises(seahaven.DbError, match="database refused") as caught:
        run(fail, method=method)
    assert caught.value.sqlite_message == "no such table: nowhere"


def test_executemany_translates_failures() -> None:
    def fail(ctx: seahaven.Ctx) -> None:
        ctx.db.executemany("INSERT INTO accounts VALUES (?, ?)", [("a", 1), ("a", 2)])

    with pytest.raises(seahaven.DbError) as caught:
        run(fail)
    assert caught.value.sqlite_code == apsw.SQLITE_CONSTRAINT_PRIMARYKEY


def test_a_failed_commit_is_a_db_error_and_closes_the_transaction() -> None:
    def deferred(ctx: seahaven.Ctx) -> bool:
        try:
            with ctx.db.transaction():
                # A deferred key is only checked at COMMIT.
                ctx.db.execute("INSERT INTO holds (account_id) VALUES ('ghost')")
        except seahaven.DbError as error:
            assert error.sqlite_code == apsw.SQLITE_CONSTRAINT_FOREIGNKEY
            return ctx.db.in_transaction
        raise AssertionError("the commit should have failed")

    world = with_tool(deferred, transaction=False)
    with world.instance() as inst:
        assert inst.call("deferred") is False
        assert inst.inspect().rows("SELECT * FROM holds") == []


def test_inspect_is_read_only() -> None:
    def noop(ctx: seahaven.Ctx) -> None:
        return None

    with with_tool(noop).instance() as inst:
        with pytest.raises(seahaven.DbError):
            inst.inspect().execute("INSERT INTO accounts VALUES ('a', 1)")
        assert inst.inspect().rows("SELECT * FROM accounts") == []


# --- the connection set-up the framework owns ----------------------------------------------------


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_the_connection_is_set_up_by_the_framework(storage: str) -> None:
    def settings(ctx: seahaven.Ctx) -> dict[str, Any]:
        conn = ctx.db.conn
        return {
            "journal_mode": conn.pragma("journal_mode"),
            "locking_mode": conn.pragma("locking_mode"),
            "synchronous": conn.pragma("synchronous"),
            "cache_spill": conn.pragma("cache_spill"),
            "foreign_keys": conn.pragma("foreign_keys"),
            "defensive": conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, -1),
        }

    with with_tool(settings).instance(storage=storage) as inst:
        found = inst.call("settings")
    # In memory a transaction's pages never spill into the image a reader copies.
    spill = found.pop("cache_spill")
    assert (spill == 0) if storage == "memory" else (spill > 0)
    assert found == {
        "journal_mode": "memory",
        "locking_mode": "exclusive",
        "synchronous": 0,
        "foreign_keys": 1,
        "defensive": 1,
    }


def test_foreign_keys_are_enforced_without_world_code_asking() -> None:
    def orphan(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO entries (account_id, amount) VALUES ('nobody', 1)")

    with pytest.raises(seahaven.DbError) as caught:
        run(orphan)
    assert caught.value.sqlite_code == apsw.SQLITE_CONSTRAINT_FOREIGNKEY


def test_defensive_mode_refuses_writing_the_schema_table() -> None:
    def corrupt(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("PRAGMA writable_schema = ON")
        ctx.db.execute("UPDATE sqlite_schema SET sql = 'garbage' WHERE name = 'accounts'")

    world = with_tool(corrupt, transaction=False)
    with world.instance() as inst:
        with pytest.raises(seahaven.DbError):
            inst.call("corrupt")
        assert inst.inspect().one("SELECT count(*) AS n FROM accounts") == {"n": 0}
