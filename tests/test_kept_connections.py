"""Kept connections: a store in memory runs in an episode, and its connection serves the next.

What a user must not be able to tell, apart from the speed: the next instance of
the image holds the image exactly, with its own clock, random stream and ids;
between calls no transaction is open; a deferred foreign key fails a call as
``COMMIT`` fails it. What ends an episode early (a reader, a snapshot, a
freeze, a tool without a transaction) commits it, and the instance goes on as
any other. An interrupt that makes SQLite roll the whole episode back either
changes nothing (nothing was kept yet) or makes the instance refuse further use.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import pytest
from sample_worlds import MEMOS, add_jot, memo_world

import seahaven
from seahaven.stores import pool, transactions

CHILDREN = """
CREATE TABLE parents (id TEXT PRIMARY KEY) STRICT;
CREATE TABLE children (
    id TEXT PRIMARY KEY,
    parent TEXT NOT NULL REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED
) STRICT;
CREATE TABLE strict_children (
    id TEXT PRIMARY KEY,
    parent TEXT NOT NULL REFERENCES parents (id)
) STRICT;
"""


@pytest.fixture(autouse=True)
def empty_pool() -> Iterator[None]:
    pool.clear()
    yield
    pool.clear()


def memo_kit(tmp_path: Path) -> seahaven.World:
    """The memo world with a writing tool, one drawing from every source of chance, and a
    tool without a transaction."""
    world = memo_world("kept", work_dir=tmp_path / "work", fixtures_dir=tmp_path / "fixtures")
    add_jot(world)

    @world.tool
    def draw(ctx: seahaven.Ctx) -> dict[str, Any]:
        """File a memo of SQL's random(), the clock and an id, and return them."""
        row = ctx.db.one("SELECT random() AS r, CURRENT_TIMESTAMP AS t")
        assert row is not None
        memo = ctx.ids.uuid()
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, ?)", memo, f"{row['r']}@{row['t']}")
        return {"random": row["r"], "time": row["t"], "id": memo}

    @world.tool(transaction=False)
    def jot_by_hand(ctx: seahaven.Ctx, id: str) -> None:
        """File a memo in a transaction the tool opens itself."""
        ctx.db.conn.execute("BEGIN")
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, 'by hand')", id)
        ctx.db.conn.execute("COMMIT")

    @world.tool
    def in_transaction(ctx: seahaven.Ctx) -> bool:
        """Whether the tool's own transaction is open, as world code sees it."""
        return ctx.db.in_transaction

    return world


@contextmanager
def preparing(inst: seahaven.Instance) -> Iterator[list[tuple[Any, ...]]]:
    """What SQLite prepares on the root store's connection in the block, as authorizer requests.

    SQLite asks the authorizer only while it prepares a statement; setting it expires every
    statement, so the first call in the block prepares its statements again.
    """
    conn = inst.db.conn
    asked: list[tuple[Any, ...]] = []

    def counting(*action: Any) -> int:
        asked.append(action)
        return 0

    conn.authorizer = counting
    try:
        yield asked
    finally:
        conn.authorizer = None


def ids(inst: seahaven.Instance) -> list[str]:
    return [row["id"] for row in inst.db.rows("SELECT id FROM memos ORDER BY id")]


def test_the_next_instance_of_an_image_gets_the_connection_holding_the_image_again(
    tmp_path: Path,
) -> None:
    world = memo_kit(tmp_path)
    first = world.instance(storage="memory")
    conn = first.db.conn
    first.call("jot", id="a", gist="one")
    first.db.execute("CREATE TEMP TABLE scratch (x)")
    first.destroy()
    assert pool.idle() == 1
    second = world.instance(storage="memory")
    try:
        assert second.db.conn is conn
        assert pool.idle() == 0
        assert ids(second) == []
        assert second.db.rows("SELECT name FROM temp.sqlite_schema") == []
        second.call("jot", id="b", gist="two")
        assert ids(second) == ["b"]
    finally:
        second.destroy()


def test_a_kept_connection_gives_the_new_instance_its_own_clock_random_stream_and_ids(
    tmp_path: Path,
) -> None:
    world = memo_kit(tmp_path)

    def episode(seed: int) -> tuple[Any, dict[str, Any]]:
        with world.instance(
            storage="memory", seed=seed, now="2030-01-01T00:00:00Z", clock_mode="fixed"
        ) as inst:
            drawn = inst.call("draw")
            return drawn, inst.state()["state"]

    fresh = episode(7)
    assert pool.idle() == 1
    episode(8)
    kept = episode(7)
    assert pool.idle() == 1
    assert kept == fresh
    pool.clear()
    assert episode(8) != fresh


def test_between_calls_no_transaction_is_open_and_inside_one_the_call_s_is(
    tmp_path: Path,
) -> None:
    world = memo_kit(tmp_path)
    with world.instance(storage="memory") as inst:
        assert inst.db.conn.in_transaction  # the episode
        assert not inst.db.in_transaction
        assert inst.call("in_transaction") is True
        assert not inst.db.in_transaction
        with inst.db.transaction():
            inst.db.execute("INSERT INTO memos (id, gist) VALUES ('t', 'x')")
            assert inst.db.in_transaction
        assert not inst.db.in_transaction
        assert ids(inst) == ["t"]


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_a_deferred_foreign_key_left_broken_fails_the_call_as_commit_fails_it(
    tmp_path: Path, storage: str
) -> None:
    world = seahaven.World(
        name="families",
        version="1.0.0",
        schema=CHILDREN,
        state_format="seahaven.state/1",
        work_dir=tmp_path / "work",
    )

    @world.tool
    def adopt(ctx: seahaven.Ctx, id: str, parent: str, defer: bool = False) -> None:
        """File a child; ``defer`` puts off every foreign key check to the end."""
        if defer:
            ctx.db.execute("PRAGMA defer_foreign_keys=ON")
        ctx.db.execute("INSERT INTO children (id, parent) VALUES (?, ?)", id, parent)

    @world.tool
    def adopt_now(ctx: seahaven.Ctx, id: str, parent: str) -> None:
        """File a child whose parent is checked at once."""
        ctx.db.execute("INSERT INTO strict_children (id, parent) VALUES (?, ?)", id, parent)

    @world.tool
    def found(ctx: seahaven.Ctx, id: str) -> None:
        """File a parent."""
        ctx.db.execute("INSERT INTO parents (id) VALUES (?)", id)

    for _ in range(2):  # a new connection, then a kept one
        with world.instance(storage=storage) as inst:  # type: ignore[arg-type]
            with pytest.raises(seahaven.DbError) as failed:
                inst.call("adopt", id="c", parent="nobody")
            assert failed.value.sqlite_message == "FOREIGN KEY constraint failed"
            assert failed.value.sqlite_code == 787  # SQLITE_CONSTRAINT_FOREIGNKEY, as COMMIT says
            assert failed.value.to_dict() == {
                "code": "db_error",
                "message": "the database refused the operation",
                "details": failed.value.details,
            }
            assert inst.db.rows("SELECT id FROM children") == []
            assert not inst.db.in_transaction
            inst.call("found", id="p")
            inst.call("adopt", id="c", parent="p")
            assert [row["id"] for row in inst.db.rows("SELECT id FROM children")] == ["c"]
            # defer_foreign_keys ends with the call that set it, as it ends at COMMIT.
            with pytest.raises(seahaven.DbError):
                inst.call("adopt", id="d", parent="nobody", defer=True)
            with pytest.raises(seahaven.DbError) as immediate:
                inst.call("adopt_now", id="e", parent="nobody")
            assert immediate.value.sqlite_message == "FOREIGN KEY constraint failed"
            assert inst.state()["state"]["db"]["log"][-1]["table"] == "children"
    assert pool.idle() == (1 if storage == "memory" else 0)


def test_a_reader_a_snapshot_and_a_freeze_see_what_the_calls_committed(tmp_path: Path) -> None:
    world = memo_kit(tmp_path)
    with world.instance(storage="memory") as inst:
        inst.call("jot", id="a", gist="one")
        assert [row["id"] for row in inst.inspect().rows("SELECT id FROM memos")] == ["a"]
        inst.call("jot", id="b", gist="two")
        assert [row["id"] for row in inst.inspect().rows("SELECT id FROM memos")] == ["a", "b"]
    # The reader ended the episode, committed: that connection is closed, not kept.
    assert pool.idle() == 0
    with world.instance(storage="memory") as inst:
        inst.call("jot", id="c", gist="three")
        snapshot = inst.snapshot()
        inst.call("jot", id="d", gist="four")
        fixture = inst.freeze("four_memos", "what the calls wrote")
    with snapshot.restore() as restored:
        assert ids(restored) == ["c"]
    with world.instance(fixture.id, storage="memory") as frozen:
        assert ids(frozen) == ["c", "d"]
    assert pool.idle() == 1


def test_a_tool_without_a_transaction_opens_its_own_on_a_store_in_memory(tmp_path: Path) -> None:
    world = memo_kit(tmp_path)
    with world.instance(storage="memory") as inst:
        inst.call("jot", id="a", gist="one")
        inst.call("jot_by_hand", id="b")
        inst.call("jot", id="c", gist="three")
        assert ids(inst) == ["a", "b", "c"]
        assert [record["key"] for record in inst.state()["state"]["db"]["log"]] == [
            {"id": "a"},
            {"id": "b"},
            {"id": "c"},
        ]


def interrupting_world(tmp_path: Path) -> seahaven.World:
    world = memo_kit(tmp_path)

    @world.tool
    def jot_interrupted(ctx: seahaven.Ctx, id: str) -> None:
        """Start writing many memos and stop the statement half way, as an interrupt does:
        SQLite rolls back the whole transaction the write was in."""
        conn = ctx.db.conn
        conn.set_progress_handler(lambda: 1, 1000)
        try:
            ctx.db.execute(
                "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100000) "
                "INSERT INTO memos (id, gist) SELECT ? || n, 'cut' FROM c",
                id,
            )
        finally:
            conn.set_progress_handler(None)

    return world


def test_an_interrupted_write_in_an_episode_that_kept_nothing_leaves_the_instance_usable(
    tmp_path: Path,
) -> None:
    world = interrupting_world(tmp_path)
    with world.instance(storage="memory") as inst:
        with pytest.raises(seahaven.DbError, match="interrupted"):
            inst.call("jot_interrupted", id="x")
        inst.call("jot", id="a", gist="one")
        assert ids(inst) == ["a"]
        assert [record["key"] for record in inst.state()["state"]["db"]["log"]] == [{"id": "a"}]
    assert pool.idle() == 1


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_an_interrupted_write_after_kept_calls_never_leaves_a_store_unlike_its_log(
    tmp_path: Path, storage: str
) -> None:
    world = interrupting_world(tmp_path)
    inst = world.instance(storage=storage)  # type: ignore[arg-type]
    try:
        inst.call("jot", id="a", gist="one")
        with pytest.raises(seahaven.DbError, match="interrupted"):
            inst.call("jot_interrupted", id="x")
        if storage == "disk":
            inst.call("jot", id="b", gist="two")
            assert ids(inst) == ["a", "b"]
            return
        # In memory SQLite took back the episode, "a" with it: the instance says so and stops.
        assert ids(inst) == []
        with pytest.raises(seahaven.WorldBug, match="rolled back every change"):
            inst.call("jot", id="b", gist="two")
    finally:
        inst.destroy()
    assert pool.idle() == 0


def test_what_is_kept_is_bounded_by_image_and_by_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = memo_kit(tmp_path)
    many = [world.instance(storage="memory") for _ in range(pool.PER_IMAGE + 2)]
    for inst in many:
        inst.destroy()
    assert pool.idle() == pool.PER_IMAGE
    other = memo_world(
        "other", schema=MEMOS + "CREATE TABLE more (x TEXT PRIMARY KEY);", work_dir=tmp_path / "o"
    )
    with other.instance(storage="memory"):
        pass
    assert pool.idle() == pool.PER_IMAGE + 1
    monkeypatch.setattr(pool, "LIMIT_BYTES", 1)
    with world.instance(storage="memory"):
        pass
    # An image larger than the whole allowance is never kept.
    assert pool.idle() == pool.PER_IMAGE
    pool.clear()
    assert pool.idle() == 0


def test_a_connection_left_with_an_authorizer_is_closed_not_kept(tmp_path: Path) -> None:
    world = memo_kit(tmp_path)
    inst = world.instance(storage="memory")
    inst.db.conn.authorizer = lambda *args: 0  # left set: nothing says what else it changed
    inst.destroy()
    assert pool.idle() == 0


def test_a_destroy_that_stops_a_running_call_closes_the_connection(tmp_path: Path) -> None:
    world = memo_kit(tmp_path)
    started = threading.Event()

    @world.tool
    def count_forever(ctx: seahaven.Ctx) -> int:
        """Count until something stops the statement."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('before', 'the runaway')")
        started.set()
        runaway = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
        row = ctx.db.one(runaway + "SELECT count(*) AS n FROM c")
        return int(row["n"]) if row else 0

    inst = world.instance(storage="memory")
    failures: list[BaseException] = []

    def call() -> None:
        try:
            inst.call("count_forever")
        except BaseException as error:
            failures.append(error)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    assert started.wait(60), "the call never started"
    inst.destroy()
    worker.join(60)
    assert not worker.is_alive()
    assert [type(error) for error in failures] == [seahaven.WorldBug]
    assert pool.idle() == 0
    with world.instance(storage="memory") as again:
        assert ids(again) == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX's")
def test_a_forked_child_starts_with_nothing_kept(tmp_path: Path) -> None:
    world = memo_kit(tmp_path)
    with world.instance(storage="memory"):
        pass
    assert pool.idle() == 1
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's half
        os.write(write, str(pool.idle()).encode())
        os._exit(0)
    os.close(write)
    seen = os.read(read, 16)
    os.close(read)
    os.waitpid(child, 0)
    assert seen == b"0"
    assert pool.idle() == 1


def test_a_table_a_call_made_is_read_again_once_the_episode_is_rolled_back(
    tmp_path: Path,
) -> None:
    world = memo_kit(tmp_path)

    @world.tool
    def make_table(ctx: seahaven.Ctx, columns: list[str]) -> None:
        """Make a table ``extra`` of ``columns`` (besides its id) and file a row in it."""
        listed = ", ".join(f"{column} TEXT" for column in columns)
        ctx.db.execute(f"CREATE TABLE extra (id TEXT PRIMARY KEY, {listed}) STRICT")
        marks = ", ".join("?" for _ in columns)
        ctx.db.execute(
            f"INSERT INTO extra (id, {', '.join(columns)}) VALUES ('x', {marks})", *columns
        )

    # The same name, the same schema cookie once made, other columns: each episode's own.
    for columns in (["left_note"], ["right_note", "far_note"]):
        with world.instance(storage="memory") as inst:
            inst.call("jot", id="a", gist="one")
            inst.call("make_table", columns=columns)
            records = inst.state()["state"]["db"]["log"]
            assert records[-1]["after"] == {"id": "x", **{column: column for column in columns}}
    assert pool.idle() == 1


def test_a_plain_read_between_calls_leaves_the_calls_statements_prepared(tmp_path: Path) -> None:
    world = memo_kit(tmp_path)
    with world.instance(storage="memory") as inst:
        inst.call("jot", id="a", gist="one")
        with preparing(inst) as asked:
            inst.call("jot", id="b", gist="two")
            assert asked
            assert inst.query("SELECT id FROM memos ORDER BY id") == [{"id": "a"}, {"id": "b"}]
            asked.clear()
            inst.call("jot", id="c", gist="three")
            assert asked == []
            # What is not a plain read runs under the reader's guards, refused as before...
            with pytest.raises(seahaven.DbError) as refused:
                inst.query("DELETE FROM memos")
            assert refused.value.sqlite_message == "attempt to write a readonly database"
            with pytest.raises(seahaven.DbError):
                inst.query("SELECT 1; PRAGMA foreign_keys=OFF")
            # ...and setting those guards makes SQLite prepare the calls' statements again.
            asked.clear()
            inst.call("jot", id="d", gist="four")
            assert asked
        assert ids(inst) == ["a", "b", "c", "d"]
        assert inst.query("PRAGMA foreign_keys") == [{"foreign_keys": 1}]


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_a_read_that_is_not_one_plain_statement_is_never_prepared_unguarded(
    tmp_path: Path, storage: str
) -> None:
    world = memo_kit(tmp_path)
    with world.instance(storage=storage) as inst:  # type: ignore[arg-type]
        inst.call("jot", id="a", gist="one")
        # SQLite turns a flag pragma off as it prepares it, before any check after that.
        for sql in ("SELECT 1 AS x; PRAGMA foreign_keys = OFF", "PRAGMA foreign_keys = OFF"):
            with pytest.raises(seahaven.DbError, match="sets a value"):
                inst.query(sql)
            assert inst.db.one("PRAGMA foreign_keys") == {"foreign_keys": 1}
        assert inst.query("  -- a comment\n SELECT id FROM memos; ") == [{"id": "a"}]
        with pytest.raises(seahaven.DbError):
            inst.query("WITH gone AS (SELECT 1) DELETE FROM memos")
        assert ids(inst) == ["a"]


def test_a_new_instance_whose_startup_wrote_nothing_holds_no_transaction_open(
    tmp_path: Path,
) -> None:
    world = memo_kit(tmp_path)

    @world.instance_startup
    def tidy(ctx: seahaven.Ctx) -> None:
        """Clear memos nobody filed yet: on a new instance, nothing."""
        ctx.db.execute("DELETE FROM memos WHERE gist = 'stale'")

    with world.instance(storage="memory") as inst:
        conn = inst.db.conn
        # The episode is open, yet holds no lock, so the pages the making read went back.
        assert conn.in_transaction
        assert conn.txn_state("main") == apsw.SQLITE_TXN_NONE
        assert conn.status(apsw.SQLITE_DBSTATUS_CACHE_USED)[0] < 8192
        inst.call("jot", id="a", gist="one")
    with world.instance(storage="memory") as again:
        assert again.db.conn is conn
        assert ids(again) == []


def test_an_episode_ends_committed_before_the_call_past_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transactions, "EPISODE_COMMITS", 3)
    world = memo_kit(tmp_path)
    with world.instance(storage="memory") as inst:
        conn = inst.db.conn
        for number in range(3):
            inst.call("jot", id=f"m{number}", gist="kept")
        assert conn.episode  # type: ignore[attr-defined]
        inst.call("jot", id="m3", gist="after")
        assert not conn.episode  # type: ignore[attr-defined]
        assert not conn.in_transaction
        assert ids(inst) == ["m0", "m1", "m2", "m3"]
        assert len(inst.state()["state"]["db"]["log"]) == 4
    # A store whose episode ended is closed with its instance, not kept.
    assert pool.idle() == 0


def test_threads_making_and_destroying_instances_each_get_a_fresh_store(tmp_path: Path) -> None:
    world = memo_kit(tmp_path)
    failures: list[str] = []

    def worker(name: str) -> None:
        for round_number in range(25):
            with world.instance(storage="memory", seed=round_number) as inst:
                if ids(inst) != []:
                    failures.append(f"{name} round {round_number} found {ids(inst)}")
                inst.call("jot", id=f"{name}-{round_number}", gist="mine")
                records = inst.state()["state"]["db"]["log"]
                if [record["key"]["id"] for record in records] != [f"{name}-{round_number}"]:
                    failures.append(f"{name} round {round_number} logged {records}")

    threads = [threading.Thread(target=worker, args=(f"t{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    assert 1 <= pool.idle() <= pool.PER_IMAGE


def test_a_world_s_own_state_format_is_fenced_without_costing_the_prepared_statements(
    tmp_path: Path,
) -> None:
    world = memo_kit(tmp_path)

    @world.state_format("memos.count/1")
    def count(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        assert instance is not None
        row = instance.db.one("SELECT count(*) AS n FROM memos")
        return {"memos": row["n"] if row else 0}

    @world.state_format("memos.sneaky/1")
    def sneaky(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        assert instance is not None
        instance.db.execute("INSERT INTO memos (id, gist) VALUES ('sneaky', 'write')")
        return {}

    with world.instance(storage="memory") as inst:
        inst.call("jot", id="a", gist="one")
        with preparing(inst) as asked:
            inst.call("jot", id="b", gist="two")
            assert inst.state(format="memos.count/1")["state"] == {"memos": 2}
            asked.clear()
            inst.call("jot", id="c", gist="three")
            assert asked == []
            with pytest.raises(seahaven.WorldBug, match="wrote to the instance"):
                inst.state(format="memos.sneaky/1")
        assert ids(inst) == ["a", "b", "c"]


def test_a_handle_kept_past_its_instance_never_reaches_the_next_instance_s_store(
    tmp_path: Path,
) -> None:
    world = memo_kit(tmp_path)
    first = world.instance(storage="memory")
    stale = first.db
    first.destroy()
    with world.instance(storage="memory") as second:
        second.call("jot", id="theirs", gist="private")
        with pytest.raises(seahaven.WorldBug, match="destroyed"):
            stale.rows("SELECT id FROM memos")
        with pytest.raises(seahaven.WorldBug, match="destroyed"):
            stale.execute("DELETE FROM memos")
        assert ids(second) == ["theirs"]
