"""``inst.inspect()``: the eval's read-only second connection to an instance."""

import datetime as dt
from typing import Any

import apsw
import pytest

import seahaven

world = seahaven.World(
    name="inspected",
    version="1.0.0",
    schema="CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL, token INTEGER) STRICT;",
    state_format="seahaven.state/1",
)


@world.tool
def add_note(ctx: seahaven.Ctx, id: str) -> int:
    """Write a note stamped with a random token, and return the token."""
    row = ctx.db.one("SELECT random() AS token")
    assert row is not None
    ctx.db.execute("INSERT INTO notes (id, body, token) VALUES (?, 'n', ?)", id, row["token"])
    return int(row["token"])


def draws(db: seahaven.Db, count: int = 3) -> list[int]:
    """The next ``count`` values of ``random()`` on ``db``."""
    return [int((db.one("SELECT random() AS r") or {})["r"]) for _ in range(count)]


def test_inspect_is_one_connection_opened_once_and_kept() -> None:
    with world.instance() as inst:
        reader = inst.inspect()
        assert isinstance(reader, seahaven.Db)
        assert inst.inspect() is reader
        assert reader.conn is not inst.db.conn
        inst.call("add_note", id="n1")
        assert inst.inspect() is reader


def test_inspect_sees_what_committed_and_nothing_uncommitted() -> None:
    with world.instance() as inst:
        inst.call("add_note", id="n1")
        reader = inst.inspect()
        assert [row["id"] for row in reader.rows("SELECT id FROM notes")] == ["n1"]
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO notes (id, body) VALUES ('n2', 'pending')")
            assert [row["id"] for row in reader.rows("SELECT id FROM notes ORDER BY id")] == ["n1"]
        assert [row["id"] for row in reader.rows("SELECT id FROM notes ORDER BY id")] == [
            "n1",
            "n2",
        ]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO notes (id, body) VALUES ('x', 'y')",
        "UPDATE notes SET body = 'changed'",
        "DELETE FROM notes",
        "CREATE TABLE extra (id INTEGER PRIMARY KEY)",
        "DROP TABLE notes",
        "ATTACH DATABASE ':memory:' AS other",
        "DETACH DATABASE main",
        "PRAGMA query_only = OFF",
    ],
)
def test_inspect_refuses_anything_but_reading(statement: str) -> None:
    with world.instance() as inst:
        inst.call("add_note", id="n1")
        reader = inst.inspect()
        with pytest.raises(seahaven.DbError):
            reader.execute(statement)
        # Refused at the raw connection too, not only through the wrapper.
        with pytest.raises(apsw.Error):
            reader.conn.execute(statement).fetchall()
        assert [row["id"] for row in reader.rows("SELECT id FROM notes")] == ["n1"]
        assert [row["body"] for row in inst.db.rows("SELECT body FROM notes")] == ["n"]
        # Still a working reader after refusing.
        assert reader.one("SELECT count(*) AS n FROM notes") == {"n": 1}


def test_inspect_reads_the_instance_clock() -> None:
    with world.instance(now="2026-06-01T09:00:00Z", clock_mode="tick") as inst:
        reader = inst.inspect()

        def sql_now() -> Any:
            return (reader.one("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS now") or {})["now"]

        assert sql_now() == inst.clock.iso() == "2026-06-01T09:00:00.000Z"
        inst.call("add_note", id="n1")
        inst.call("add_note", id="n2")
        # Under tick the clock moved with the calls, and the reader moved with it.
        assert sql_now() == inst.clock.iso() != "2026-06-01T09:00:00.000Z"
        moved = inst.clock.now()
        assert moved - dt.datetime(2026, 6, 1, 9, tzinfo=dt.UTC) == dt.timedelta(seconds=2)


def test_inspect_has_its_own_seeded_random_stream() -> None:
    with world.instance(seed=11) as first, world.instance(seed=11) as second:
        replayed = draws(first.inspect())
        assert draws(second.inspect()) == replayed
        # Its own stream: the main connection draws something else, and drawing on
        # the reader does not move the stream a tool draws from.
        assert first.call("add_note", id="n1") == second.call("add_note", id="n1")
        assert draws(first.db) != replayed
    with world.instance(seed=12) as other:
        assert draws(other.inspect()) != replayed


def test_inspect_on_a_destroyed_instance_is_refused() -> None:
    inst = world.instance()
    reader = inst.inspect()
    inst.destroy()
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        inst.inspect()
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        reader.rows("SELECT id FROM notes")


def test_inspect_attaches_every_added_store_read_only_under_its_path() -> None:
    payments = seahaven.World(
        name="payments",
        version="1.0.0",
        schema="CREATE TABLE charges (id TEXT PRIMARY KEY, amount INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )

    @payments.tool
    def charge(ctx: seahaven.Ctx, amount: int) -> None:
        """Take a payment."""
        ctx.db.execute("INSERT INTO charges (id, amount) VALUES (?, ?)", ctx.ids.uuid(), amount)

    shop = seahaven.World(
        name="shop",
        version="1.0.0",
        schema="CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )
    shop.add_world(payments, name="payments", tool_prefix="pay_")

    with shop.instance() as inst:
        inst.call("pay_charge", amount=30)
        reader = inst.inspect()
        assert reader.rows("SELECT amount FROM payments.charges") == [{"amount": 30}]
        assert reader.rows("SELECT total FROM orders") == []
        with pytest.raises(seahaven.DbError):
            reader.execute("DELETE FROM payments.charges")
        with pytest.raises(seahaven.DbError):
            reader.execute("DETACH DATABASE payments")
        assert reader.one("SELECT count(*) AS n FROM payments.charges") == {"n": 1}
