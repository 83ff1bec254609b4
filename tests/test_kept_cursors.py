"""Cursors kept for a store's hot statements, and never left part way through one.

A call's ``BEGIN`` and ``COMMIT``, the change capture's reads and world code's
``ctx.db.execute`` and ``ctx.db.rows`` each run on a cursor kept for the next
statement, where ``Connection.execute`` made one a statement. What must hold:
no statement is left under way between calls (it would hold a read transaction
open, and stop a serialize, a backup or a rollback of the episode), a statement
run from inside another (a SQL function of the world's) or from another thread
gets a cursor of its own, and a statement that fails part way does not leave
its cursor to the next.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
import pytest

import seahaven
from seahaven.errors import DbError
from seahaven.stores.capture import Capture
from seahaven.stores.db import Db
from seahaven.stores.transactions import StoreConnection, run_statement


def _ledger(work_dir: Path) -> seahaven.World:
    """A store and one it adds; tools that write, read and write to both."""
    child = seahaven.World(
        name="cursor_child",
        version="1.0.0",
        schema="CREATE TABLE entries (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )
    host = seahaven.World(
        name="cursor_host",
        version="1.0.0",
        schema="CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
        work_dir=work_dir,
    )
    host.add_world(child, name="ledger")

    @host.tool
    def note(ctx: seahaven.Ctx, id: int, body: str) -> int:
        """Write a note."""
        return ctx.db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", id, body).rowcount

    @host.tool
    def notes(ctx: seahaven.Ctx) -> list[str]:
        """Every note's body."""
        return [row["body"] for row in ctx.db.rows("SELECT body FROM notes ORDER BY id")]

    @host.tool
    def both(ctx: seahaven.Ctx, id: int, amount: int) -> None:
        """A note here and an entry in the ledger."""
        ctx.db.execute("INSERT INTO notes (id, body) VALUES (?, 'both')", id)
        ctx.worlds.ledger.db.execute("INSERT INTO entries (id, amount) VALUES (?, ?)", id, amount)

    @host.tool
    def fails_late(ctx: seahaven.Ctx, id: int) -> None:
        """Write, then fail on a key already taken."""
        ctx.db.execute("INSERT INTO notes (id, body) VALUES (?, 'late')", id)
        ctx.db.execute("INSERT INTO notes (id, body) VALUES (?, 'again')", id)

    return host


@pytest.mark.parametrize("storage", ["disk", "memory"])
def test_no_statement_is_left_under_way_between_calls(tmp_path: Path, storage: str) -> None:
    world = _ledger(tmp_path)
    with world.instance(storage=storage) as inst:
        for number in range(1, 120):  # past an episode's hundredth call, in memory
            inst.call("note", id=number, body=f"n{number}")
            inst.call("both", id=1000 + number, amount=number)
            assert len(inst.call("notes")) == 2 * number
            with pytest.raises(DbError, match="refused"):
                inst.call("fails_late", id=5000 + number)
            for runtime in inst.calls.runtimes:
                if getattr(runtime.conn, "episode", False):
                    continue  # in memory, a store inside its episode holds its transaction
                # Nothing open once the call is over: no read transaction held by a
                # statement part way, on either store.
                state = runtime.conn.txn_state("main")
                assert state == apsw.SQLITE_TXN_NONE, (runtime.path, number)
        records = inst.change_log()
        assert len([record for record in records if record.table == "entries"]) == 119
        assert not [record for record in records if record.after and record.after["id"] > 5000]


def test_a_frameworks_statement_inside_another_runs_on_a_cursor_of_its_own() -> None:
    conn = StoreConnection(":memory:")
    ran: list[str] = []

    def inner() -> int:
        # The kept cursor is running this function's statement: using it again is refused,
        # and run_statement takes a cursor of its own instead.
        with pytest.raises(apsw.ThreadingViolationError):
            conn.statements.execute("SAVEPOINT refused")
        run_statement(conn, "SAVEPOINT inner_point")
        run_statement(conn, "RELEASE inner_point")
        ran.append("inner")
        return 1

    conn.create_scalar_function("inner", inner)
    assert conn.statements.execute("SELECT inner()").fetchall() == [(1,)]
    assert ran == ["inner"]
    run_statement(conn, "BEGIN")
    run_statement(conn, "COMMIT")
    assert not conn.in_transaction


def test_world_codes_statement_inside_another_gets_a_cursor_of_its_own() -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE seen (x INTEGER)")
    db = Db(conn)

    def remember(value: int) -> int:
        db.execute("INSERT INTO seen (x) VALUES (?)", value)
        return value * 10

    conn.create_scalar_function("remember", remember)
    assert db.rows("SELECT remember(1) AS a UNION ALL SELECT remember(2)") == [
        {"a": 10},
        {"a": 20},
    ]
    assert db.rows("SELECT x FROM seen ORDER BY x") == [{"x": 1}, {"x": 2}]
    assert db.execute("UPDATE seen SET x = x + 1").rowcount == 2


def test_a_statement_that_fails_part_way_leaves_nothing_under_way() -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)")
    db = Db(conn)

    def picky(value: int) -> int:
        if value == 2:
            raise ValueError("two")
        return value

    conn.create_scalar_function("picky", picky)
    for _ in range(3):
        with pytest.raises(ValueError, match="two"):
            db.rows("SELECT picky(x) AS v FROM t ORDER BY x")
        assert conn.txn_state("main") == apsw.SQLITE_TXN_NONE
    assert db.rows("SELECT x FROM t WHERE x < 3 ORDER BY x") == [{"x": 1}, {"x": 2}]
    assert conn.txn_state("main") == apsw.SQLITE_TXN_NONE


def test_a_capture_stopped_part_way_through_its_reads_reads_again_from_the_start() -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    capture = Capture(conn, None)
    capture.start()
    conn.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    reads: list[str] = []

    def trace(_cursor: Any, sql: str, _bindings: Any) -> bool:
        if sql.startswith("SELECT * FROM main."):
            reads.append(sql)
            if len(reads) == 2:
                # Stop the second read back, part way.
                conn.set_progress_handler(lambda: True, 1)
        return True

    conn.exec_trace = trace
    with pytest.raises(apsw.InterruptError):
        capture.changes()
    conn.exec_trace = None
    conn.set_progress_handler(None)
    assert conn.txn_state("main") == apsw.SQLITE_TXN_NONE
    assert capture.changes() == [
        ("t", "INSERT", None, (1, "a")),
        ("t", "INSERT", None, (2, "b")),
        ("t", "INSERT", None, (3, "c")),
    ]
    assert conn.txn_state("main") == apsw.SQLITE_TXN_NONE
    capture.stop()


@pytest.mark.parametrize("storage", ["disk", "memory"])
def test_a_stores_connection_is_set_up_when_first_read(tmp_path: Path, storage: str) -> None:
    # The first read of ``conn`` or ``db`` sets the store's journal up (a store no call
    # reaches never pays for it), and closing points both at the closed connection its
    # handles fail on.
    world = _ledger(tmp_path)
    inst = world.instance(storage=storage)
    ledger = inst.calls.runtimes[1]
    raw = ledger._conn
    assert ledger.conn is raw and ledger.db.conn is raw
    if storage == "disk":
        # As a store no call has reached yet is (in memory, a kept connection's journal is
        # set up before it is handed over, inside its episode).
        ledger._journal = None
        assert ledger.db.conn is raw
        assert ledger._journal == "private" and ledger.conn is raw
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("memory",)
    inst.call("both", id=1, amount=5)
    assert sorted(record.table for record in inst.change_log()) == ["entries", "notes"]
    inst.destroy()
    # In memory the connection went on to the pool: the store's handles no longer reach it.
    assert ledger.conn is ledger.db.conn
    assert (ledger.conn is raw) == (storage == "disk")
