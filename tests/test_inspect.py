"""``inst.inspect()``: the eval's read-only second connection to an instance."""

import datetime as dt
from typing import Any

import apsw
import pytest
from sample_worlds import cafe_world, memo_world, till_world

import seahaven

world = memo_world(
    "inspected",
    schema="CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL, luck INTEGER) STRICT;",
)


@world.tool
def draw_memo(ctx: seahaven.Ctx, id: str) -> int:
    """File a memo carrying a number drawn from SQL's random(), and answer that number."""
    drawn = ctx.db.one("SELECT random() AS luck")
    assert drawn is not None
    ctx.db.execute("INSERT INTO memos (id, gist, luck) VALUES (?, 'g', ?)", id, drawn["luck"])
    return int(drawn["luck"])


def draws(db: seahaven.Db, count: int = 3) -> list[int]:
    """The next ``count`` values of ``random()`` on ``db``."""
    return [int((db.one("SELECT random() AS r") or {})["r"]) for _ in range(count)]


def test_inspect_is_one_connection_opened_once_and_kept() -> None:
    with world.instance() as inst:
        reader = inst.inspect()
        assert isinstance(reader, seahaven.Db)
        assert inst.inspect() is reader
        assert reader.conn is not inst.db.conn
        inst.call("draw_memo", id="m1")
        assert inst.inspect() is reader


def test_inspect_sees_what_committed_and_nothing_uncommitted() -> None:
    with world.instance() as inst:
        inst.call("draw_memo", id="m1")
        reader = inst.inspect()
        assert [row["id"] for row in reader.rows("SELECT id FROM memos")] == ["m1"]
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('m2', 'pending')")
            assert [row["id"] for row in reader.rows("SELECT id FROM memos ORDER BY id")] == ["m1"]
        assert [row["id"] for row in reader.rows("SELECT id FROM memos ORDER BY id")] == [
            "m1",
            "m2",
        ]


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO memos (id, gist) VALUES ('x', 'y')",
        "UPDATE memos SET gist = 'changed'",
        "DELETE FROM memos",
        "CREATE TABLE extra (id INTEGER PRIMARY KEY)",
        "DROP TABLE memos",
        "ATTACH DATABASE ':memory:' AS other",
        "DETACH DATABASE main",
        "PRAGMA query_only = OFF",
    ],
)
def test_inspect_refuses_anything_but_reading(statement: str) -> None:
    with world.instance() as inst:
        inst.call("draw_memo", id="m1")
        reader = inst.inspect()
        with pytest.raises(seahaven.DbError):
            reader.execute(statement)
        # Refused at the raw connection too, not only through the wrapper.
        with pytest.raises(apsw.Error):
            reader.conn.execute(statement).fetchall()
        assert [row["id"] for row in reader.rows("SELECT id FROM memos")] == ["m1"]
        assert [row["gist"] for row in inst.db.rows("SELECT gist FROM memos")] == ["g"]
        # Still a working reader after refusing.
        assert reader.one("SELECT count(*) AS n FROM memos") == {"n": 1}


def test_inspect_reads_the_instance_clock() -> None:
    with world.instance(now="2031-03-14T08:30:00Z", clock_mode="tick") as inst:
        reader = inst.inspect()

        def sql_now() -> Any:
            return (reader.one("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS now") or {})["now"]

        assert sql_now() == inst.clock.iso() == "2031-03-14T08:30:00.000Z"
        inst.call("draw_memo", id="m1")
        inst.call("draw_memo", id="m2")
        # Under tick the clock moved with the calls, and the reader moved with it.
        assert sql_now() == inst.clock.iso() != "2031-03-14T08:30:00.000Z"
        moved = inst.clock.now()
        assert moved - dt.datetime(2031, 3, 14, 8, 30, tzinfo=dt.UTC) == dt.timedelta(seconds=2)


def test_inspect_has_its_own_seeded_random_stream() -> None:
    with world.instance(seed=11) as first, world.instance(seed=11) as second:
        replayed = draws(first.inspect())
        assert draws(second.inspect()) == replayed
        # Its own stream: the main connection draws something else, and drawing on
        # the reader does not move the stream a tool draws from.
        assert first.call("draw_memo", id="m1") == second.call("draw_memo", id="m1")
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
        reader.rows("SELECT id FROM memos")


def test_inspect_attaches_every_added_store_read_only_under_its_path() -> None:
    cafe = cafe_world(till_world(), prefix="pay_")

    with cafe.instance() as inst:
        inst.call("pay_ring_up", cents=30)
        reader = inst.inspect()
        assert reader.rows("SELECT cents FROM till.receipts") == [{"cents": 30}]
        assert reader.rows("SELECT cents FROM tabs") == []
        with pytest.raises(seahaven.DbError):
            reader.execute("DELETE FROM till.receipts")
        with pytest.raises(seahaven.DbError):
            reader.execute("DETACH DATABASE till")
        assert reader.one("SELECT count(*) AS n FROM till.receipts") == {"n": 1}
