"""``inst.query(...)``: a read-only query on one store's own connection, between calls."""

from __future__ import annotations

from typing import Any

import pytest
from grading_worlds import SEED_ROWS, make_shop
from sample_worlds import add_jot, memo_world

import seahaven
from seahaven import grading
from seahaven.grading import Episode

STORAGES = pytest.mark.parametrize("storage", ["memory", "disk"])


def write_ahead_logs(inst: seahaven.Instance) -> list[str]:
    """The write-ahead log files of an instance on disk: there once a reader is opened."""
    if inst.storage == "memory":
        return []
    return sorted(path.name for path in inst.directory.iterdir() if path.name.endswith("-wal"))


@STORAGES
def test_query_reads_each_store_on_its_own_connection(storage: str) -> None:
    shop = make_shop()
    with shop.instance(
        setup_sql=SEED_ROWS, now="2026-05-04T09:00:00.000Z", seed=1, storage=storage
    ) as inst:
        inst.call("set_status", order_id="o1", status="shipped")
        inst.call("ledger_record", order_id="o1", cents=2500)
        rows = inst.query("SELECT id, status FROM orders WHERE id = ?", "o1")
        assert rows == [{"id": "o1", "status": "shipped"}]
        assert inst.query("SELECT order_id, cents FROM entries", store="ledger") == [
            {"order_id": "o1", "cents": 2500}
        ]
        # Nothing was opened: the stores keep the journal their own connection chose,
        # where inspect() would have switched them to the write-ahead log.
        assert write_ahead_logs(inst) == []


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO memos (id, gist) VALUES ('x', 'y')",
        "UPDATE memos SET gist = 'changed'",
        "DELETE FROM memos",
        "CREATE TABLE extra (id INTEGER PRIMARY KEY)",
        "ATTACH DATABASE ':memory:' AS other",
        "PRAGMA query_only = OFF",
    ],
)
@STORAGES
def test_query_refuses_anything_but_reading_and_the_calls_go_on(
    statement: str, storage: str
) -> None:
    world = memo_world("queried")
    add_jot(world)
    with world.instance(storage=storage) as inst:
        inst.call("jot", id="m1", gist="kept")
        with pytest.raises(seahaven.DbError):
            inst.query(statement)
        assert inst.query("SELECT id, gist FROM memos") == [{"id": "m1", "gist": "kept"}]
        # The connection is the calls' own again: a write goes through and is recorded.
        inst.call("jot", id="m2", gist="after")
        assert [record.key for record in inst.change_log()] == [{"id": "m1"}, {"id": "m2"}]
        if storage == "disk":
            inst.inspect().rows("SELECT id FROM memos")
            assert write_ahead_logs(inst) != []  # the check above can fail
        assert inst.db.conn.authorizer is None


@STORAGES
def test_pragmas_that_only_report_are_reads_through_query_and_inspect(storage: str) -> None:
    shop = make_shop()
    with shop.instance(setup_sql=SEED_ROWS, seed=1, storage=storage) as inst:
        inst.call("set_status", order_id="o1", status="shipped")
        columns = [row["name"] for row in inst.query("PRAGMA table_info(orders)")]
        assert columns == ["id", "customer", "total", "status", "placed_at", "tags"]
        assert [row["name"] for row in inst.query("PRAGMA table_xinfo(entries)", store="ledger")]
        assert inst.query("PRAGMA index_list(orders)") == inst.db.rows("PRAGMA index_list(orders)")
        assert inst.query("PRAGMA foreign_key_check(orders)") == []
        reader = inst.inspect()
        assert [row["name"] for row in reader.rows("PRAGMA table_info(orders)")] == columns
        # An added store's table, by its schema name, as every other read on the reader.
        assert [row["name"] for row in reader.rows("PRAGMA ledger.table_info(entries)")] == [
            "n",
            "order_id",
            "cents",
        ]
        assert reader.rows("PRAGMA main.table_info(orders)")[3]["name"] == "status"


@pytest.mark.parametrize(
    "statement",
    [
        "PRAGMA user_version = 7",
        "PRAGMA query_only = OFF",
        "PRAGMA foreign_keys = OFF",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA writable_schema = ON",
        "PRAGMA main.cache_size = 10",
    ],
)
@STORAGES
def test_pragmas_that_set_something_stay_refused(statement: str, storage: str) -> None:
    world = memo_world("pragmas")
    add_jot(world)
    with world.instance(storage=storage) as inst:
        inst.call("jot", id="m1", gist="kept")
        with pytest.raises(seahaven.DbError, match="sets a value"):
            inst.query(statement)
        with pytest.raises(seahaven.DbError, match="sets a value"):
            inst.inspect().rows(statement)
        assert inst.db.one("PRAGMA user_version") == {"user_version": 0}
        assert inst.db.one("PRAGMA foreign_keys") == {"foreign_keys": 1}
        inst.call("jot", id="m2", gist="after")
        assert inst.query("SELECT count(*) AS n FROM memos") == [{"n": 2}]


def test_query_is_refused_inside_a_call_for_an_unknown_store_and_after_destroy() -> None:
    world = memo_world("refusing")
    seen: list[str] = []
    inst_box: list[seahaven.Instance] = []

    @world.tool
    def peek(ctx: seahaven.Ctx) -> None:
        """Try to query the instance from inside a call."""
        try:
            inst_box[0].query("SELECT 1")
        except seahaven.WorldBug as error:
            seen.append(str(error))

    inst = world.instance()
    inst_box.append(inst)
    inst.call("peek")
    assert seen and "between calls" in seen[0]
    with pytest.raises(seahaven.WorldBug, match="no store 'ledger'; its stores are main"):
        inst.query("SELECT 1", store="ledger")
    inst.destroy()
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        inst.query("SELECT 1")


def test_query_is_refused_inside_bulk() -> None:
    world = memo_world("bulky")
    with world.instance() as inst, inst.bulk() as ctx:
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('m1', 'g')")
        with pytest.raises(seahaven.WorldBug, match="bulk"):
            inst.query("SELECT id FROM memos")


@STORAGES
def test_graders_read_the_end_state_without_opening_a_reader(storage: str) -> None:
    shop = make_shop()
    with shop.instance(
        setup_sql=SEED_ROWS, now="2026-05-04T09:00:00.000Z", seed=1, storage=storage
    ) as inst:
        inst.call("set_status", order_id="o2", status="shipped")
        inst.call("ledger_record", order_id="o2", cents=1250)
        grader = grading.all_of(
            grading.exists("orders", {"id": "o2", "status": "shipped"}),
            grading.count("orders", {"status": "shipped"}, equals=2),
            grading.count("entries", store="ledger", equals=1),
            grading.changed("orders", {"id": "o2", "customer": "brian"}, to={"status": "shipped"}),
        )
        grade = grader(Episode.of(inst))
        assert grade.passed, [check.why for check in grade.checks]
        assert write_ahead_logs(inst) == []


def test_a_check_on_a_missing_table_names_sqlite_refusal_as_the_graders_bug() -> None:
    shop = make_shop()
    with shop.instance(setup_sql=SEED_ROWS) as inst:
        with pytest.raises(seahaven.WorldBug, match="the check's query failed: no such table"):
            grading.exists("parcels")(Episode.of(inst))
        with pytest.raises(seahaven.WorldBug, match="no store 'warehouse'"):
            grading.exists("orders", store="warehouse")(Episode.of(inst))


def test_an_episode_given_only_an_end_view_reads_qualified_names() -> None:
    shop = make_shop()
    with shop.instance(setup_sql=SEED_ROWS) as inst:
        inst.call("ledger_record", order_id="o1", cents=99)
        stores = {node.path: node.schema_name for node in shop.composition().nodes}
        episode = Episode(log=inst.change_log(), end=inst.inspect(), stores=stores)
        names: list[Any] = []
        rows = episode.read(
            "entries",
            lambda name: names.append(name) or f"SELECT cents FROM {name}",
            store="ledger",
        )
        assert rows == [{"cents": 99}]
        assert names == [f'"{stores["ledger"]}"."entries"']
