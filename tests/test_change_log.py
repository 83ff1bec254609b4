"""The change log: what a call changed, one record per row per call, and how records are ordered.

Every rule here is observed through the public surface (``inst.change_log()``,
``inst.state()``, ``inst.inspect()``) except which stores record, which is
watched by wrapping ``Capture.start`` so the test can count which stores record.
"""

import json
from pathlib import Path
from typing import Any

import apsw
import pytest
from sample_worlds import add_jot, memo_world

import seahaven
from seahaven.stores.capture import Capture

SCHEMA = """
CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0);
CREATE TABLE pairs (a INTEGER NOT NULL, b TEXT NOT NULL, v TEXT, PRIMARY KEY (b, a));
CREATE TABLE blobs (k BLOB PRIMARY KEY, v TEXT);
CREATE TABLE anys (k ANY PRIMARY KEY, v TEXT) STRICT;
CREATE TABLE measures (id INTEGER PRIMARY KEY, i INTEGER, r REAL, t TEXT, b BLOB, n);
CREATE TABLE scratch (id INTEGER PRIMARY KEY, v TEXT);
CREATE TABLE loose (v TEXT);
CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE VIRTUAL TABLE docs_fts USING fts5(body, content='docs', content_rowid='id');
CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
    INSERT INTO docs_fts (rowid, body) VALUES (new.id, new.body);
END;
CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1);
"""

world = seahaven.World(
    name="ledger",
    version="1.0.0",
    schema=SCHEMA,
    state_format="seahaven.state/1",
    untracked_tables=["scratch", "loose"],
)


@world.tool
def run(ctx: seahaven.Ctx, statements: list[str]) -> None:
    """Run each SQL statement in order, in the call's transaction."""
    for statement in statements:
        ctx.db.execute(statement)


@world.tool
def run_then_fail(ctx: seahaven.Ctx, statements: list[str], unplanned: bool = False) -> None:
    """Run the statements, then raise, so the call rolls back."""
    for statement in statements:
        ctx.db.execute(statement)
    if unplanned:
        raise RuntimeError("the world fell over")
    raise seahaven.ToolError("refused", "changed my mind")


@world.tool
def count_memos(ctx: seahaven.Ctx) -> int:
    """Read, and write nothing."""
    row = ctx.db.one("SELECT count(*) AS n FROM memos")
    assert row is not None
    return int(row["n"])


def entries(inst: seahaven.Instance) -> list[dict[str, Any]]:
    """The change log in its published shape."""
    return [record.to_dict() for record in inst.change_log()]


def summary(inst: seahaven.Instance) -> list[tuple[Any, ...]]:
    """(i, world, table, op, key values) per record, which is what order and net rules decide."""
    return [
        (record.i, record.world, record.table, record.op, tuple(record.key.values()))
        for record in inst.change_log()
    ]


ONE_MEMO = "INSERT INTO memos (id, gist, done) VALUES ('m1', 'tea', 0)"


# --- a record is the net of its own call ------------------------------------------------------


def test_an_insert_records_the_whole_row_with_its_key() -> None:
    with world.instance() as inst:
        inst.call("run", statements=[ONE_MEMO])
        assert entries(inst) == [
            {
                "i": 0,
                "world": "main",
                "table": "memos",
                "op": "insert",
                "key": {"id": "m1"},
                "before": None,
                "after": {"id": "m1", "gist": "tea", "done": 0},
                "actor": "agent",
            }
        ]


def test_a_delete_records_the_whole_row_it_removed() -> None:
    with world.instance(setup_sql=ONE_MEMO) as inst:
        inst.call("run", statements=["DELETE FROM memos WHERE id = 'm1'"])
        assert entries(inst) == [
            {
                "i": 0,
                "world": "main",
                "table": "memos",
                "op": "delete",
                "key": {"id": "m1"},
                "before": {"id": "m1", "gist": "tea", "done": 0},
                "after": None,
                "actor": "agent",
            }
        ]


def test_a_write_that_leaves_every_value_unchanged_records_nothing() -> None:
    with world.instance(setup_sql=ONE_MEMO) as inst:
        inst.call("run", statements=["UPDATE memos SET gist = 'tea', done = 0 WHERE id = 'm1'"])
        assert inst.change_log() == []
        assert inst.call_count == 1


def test_a_value_changed_and_changed_back_in_one_call_records_nothing() -> None:
    with world.instance(setup_sql=ONE_MEMO) as inst:
        inst.call(
            "run",
            statements=[
                "UPDATE memos SET gist = 'coffee' WHERE id = 'm1'",
                "UPDATE memos SET gist = 'tea' WHERE id = 'm1'",
            ],
        )
        assert inst.change_log() == []


def test_an_insert_then_an_update_in_one_call_is_one_insert_with_the_final_values() -> None:
    with world.instance() as inst:
        inst.call(
            "run",
            statements=[ONE_MEMO, "UPDATE memos SET gist = 'green tea', done = 1 WHERE id = 'm1'"],
        )
        assert entries(inst) == [
            {
                "i": 0,
                "world": "main",
                "table": "memos",
                "op": "insert",
                "key": {"id": "m1"},
                "before": None,
                "after": {"id": "m1", "gist": "green tea", "done": 1},
                "actor": "agent",
            }
        ]


def test_an_insert_then_a_delete_in_one_call_leaves_no_record() -> None:
    with world.instance() as inst:
        inst.call("run", statements=[ONE_MEMO, "DELETE FROM memos WHERE id = 'm1'"])
        assert inst.change_log() == []


def test_an_update_then_a_delete_in_one_call_is_a_delete_of_the_row_as_it_started() -> None:
    with world.instance(setup_sql=ONE_MEMO) as inst:
        inst.call(
            "run",
            statements=["UPDATE memos SET gist = 'coffee' WHERE id = 'm1'", "DELETE FROM memos"],
        )
        [record] = inst.change_log()
        assert record.op == "delete"
        assert record.before == {"id": "m1", "gist": "tea", "done": 0}


@pytest.mark.parametrize("unplanned", [False, True], ids=["tool_error", "unexpected_error"])
def test_a_call_that_raises_rolls_back_and_leaves_no_record(unplanned: bool) -> None:
    expected = RuntimeError if unplanned else seahaven.ToolError
    with world.instance(setup_sql=ONE_MEMO) as inst:
        with pytest.raises(expected):
            inst.call(
                "run_then_fail",
                statements=[
                    "INSERT INTO memos (id, gist) VALUES ('m2', 'eggs')",
                    "UPDATE memos SET done = 1 WHERE id = 'm1'",
                ],
                unplanned=unplanned,
            )
        assert inst.change_log() == []
        assert inst.inspect().rows("SELECT id, done FROM memos") == [{"id": "m1", "done": 0}]
        # The failed call still took ordinal 0, so the next write is call 1.
        inst.call("run", statements=["DELETE FROM memos"])
        assert [record.i for record in inst.change_log()] == [1]


def test_a_read_only_call_records_nothing() -> None:
    with world.instance(setup_sql=ONE_MEMO) as inst:
        assert inst.call("count_memos") == 1
        assert inst.change_log() == []


def test_a_primary_key_rewrite_is_a_delete_plus_an_insert() -> None:
    with world.instance(setup_sql=ONE_MEMO) as inst:
        inst.call("run", statements=["UPDATE memos SET id = 'm0' WHERE id = 'm1'"])
        assert entries(inst) == [
            {
                "i": 0,
                "world": "main",
                "table": "memos",
                "op": "insert",
                "key": {"id": "m0"},
                "before": None,
                "after": {"id": "m0", "gist": "tea", "done": 0},
                "actor": "agent",
            },
            {
                "i": 0,
                "world": "main",
                "table": "memos",
                "op": "delete",
                "key": {"id": "m1"},
                "before": {"id": "m1", "gist": "tea", "done": 0},
                "after": None,
                "actor": "agent",
            },
        ]


def test_an_update_carries_only_the_non_key_columns_it_changed() -> None:
    setup = "INSERT INTO pairs (a, b, v) VALUES (1, 'x', 'old')"
    with world.instance(setup_sql=f"{ONE_MEMO}; {setup}") as inst:
        inst.call(
            "run",
            statements=[
                # done is written with the value it already has; only gist changes.
                "UPDATE memos SET gist = 'coffee', done = 0 WHERE id = 'm1'",
                "UPDATE pairs SET v = 'new', a = 1, b = 'x'",
            ],
        )
        memos, pairs = inst.change_log()
        assert (memos.op, memos.key, memos.before, memos.after) == (
            "update",
            {"id": "m1"},
            {"gist": "tea"},
            {"gist": "coffee"},
        )
        assert (pairs.op, pairs.key, pairs.before, pairs.after) == (
            "update",
            {"b": "x", "a": 1},
            {"v": "old"},
            {"v": "new"},
        )


def test_the_log_is_never_folded_across_calls() -> None:
    with world.instance() as inst:
        inst.call("run", statements=[ONE_MEMO])
        inst.call("run", statements=["UPDATE memos SET gist = 'coffee'"])
        inst.call("run", statements=["UPDATE memos SET gist = 'tea'"])
        inst.call("run", statements=["DELETE FROM memos"])
        assert [(record.i, record.op) for record in inst.change_log()] == [
            (0, "insert"),
            (1, "update"),
            (2, "update"),
            (3, "delete"),
        ]
        assert [record.after for record in inst.change_log()[1:3]] == [
            {"gist": "coffee"},
            {"gist": "tea"},
        ]


# --- order ------------------------------------------------------------------------------------


def test_records_are_ordered_by_call_before_anything_else() -> None:
    with world.instance() as inst:
        inst.call("run", statements=["INSERT INTO pairs (a, b) VALUES (9, 'z')"])
        inst.call("run", statements=["INSERT INTO anys (k, v) VALUES (1, 'a')"])
        assert [(record.i, record.table) for record in inst.change_log()] == [
            (0, "pairs"),
            (1, "anys"),
        ]


def test_within_a_call_records_are_sorted_by_table_then_key_not_by_write_order() -> None:
    with world.instance() as inst:
        inst.call(
            "run",
            statements=[
                "INSERT INTO pairs (a, b) VALUES (1, 'x')",
                "INSERT INTO memos (id, gist) VALUES ('m3', 'c')",
                "INSERT INTO memos (id, gist) VALUES ('m1', 'a')",
                "INSERT INTO anys (k, v) VALUES (5, 'e')",
                "INSERT INTO memos (id, gist) VALUES ('m2', 'b')",
            ],
        )
        assert [(record.table, record.key) for record in inst.change_log()] == [
            ("anys", {"k": 5}),
            ("memos", {"id": "m1"}),
            ("memos", {"id": "m2"}),
            ("memos", {"id": "m3"}),
            ("pairs", {"b": "x", "a": 1}),
        ]


def test_a_composite_key_is_given_and_sorted_in_primary_key_column_order() -> None:
    # The key is (b, a) although a is declared first: b decides the order, then a.
    with world.instance() as inst:
        inst.call(
            "run",
            statements=[
                "INSERT INTO pairs (a, b, v) VALUES (1, 'y', 'p')",
                "INSERT INTO pairs (a, b, v) VALUES (2, 'x', 'q')",
                "INSERT INTO pairs (a, b, v) VALUES (10, 'x', 'r')",
            ],
        )
        records = inst.change_log()
        assert [list(record.key.items()) for record in records] == [
            [("b", "x"), ("a", 2)],
            [("b", "x"), ("a", 10)],
            [("b", "y"), ("a", 1)],
        ]
        # The whole row of an insert keeps the table's own column order.
        assert [list(record.after or {}) for record in records] == [["a", "b", "v"]] * 3


def test_a_blob_key_sorts_by_its_base64_text() -> None:
    # Byte order would be 00 < f8 < ff; base64 text order is "+A==" < "/w==" < "AA==".
    with world.instance() as inst:
        inst.call(
            "run",
            statements=[
                "INSERT INTO blobs (k, v) VALUES (X'00', 'zero'), (X'ff', 'ff'), (X'f8', 'f8')"
            ],
        )
        assert [record.key["k"] for record in inst.change_log()] == ["+A==", "/w==", "AA=="]
        assert [(record.after or {})["v"] for record in inst.change_log()] == ["f8", "ff", "zero"]


def test_a_key_of_mixed_storage_classes_sorts_numbers_then_text_then_blobs() -> None:
    with world.instance() as inst:
        inst.call(
            "run",
            statements=[
                "INSERT INTO anys (k, v) VALUES (X'01', 'blob'), ('b', 'text b'), (10, 'ten')",
                "INSERT INTO anys (k, v) VALUES ('a', 'text a'), (2.5, 'real'), (-3, 'negative')",
            ],
        )
        assert [record.key["k"] for record in inst.change_log()] == [-3, 2.5, 10, "a", "b", "AQ=="]


def test_two_identical_episodes_produce_byte_identical_logs() -> None:
    def episode() -> str:
        with world.instance(seed=3, now="2026-06-01T09:00:00Z", clock_mode="fixed") as inst:
            inst.call("run", statements=["INSERT INTO blobs (k, v) VALUES (randomblob(4), 'r')"])
            inst.call("run", statements=[ONE_MEMO, "INSERT INTO anys (k, v) VALUES (1.5, 'x')"])
            inst.call("run", statements=["UPDATE memos SET gist = datetime('now')"])
            return json.dumps(inst.state()["state"]["db"]["log"])

    first, second = episode(), episode()
    assert first == second
    assert '"table": "blobs"' in first


# --- bulk() writes ----------------------------------------------------------------------------


def test_bulk_writes_carry_no_ordinal_and_sit_where_they_committed() -> None:
    with world.instance() as inst:
        inst.call("run", statements=["INSERT INTO memos (id, gist) VALUES ('m1', 'a')"])
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('m2', 'b')")
        inst.call("run", statements=["INSERT INTO memos (id, gist) VALUES ('m3', 'c')"])
        assert summary(inst) == [
            (0, "main", "memos", "insert", ("m1",)),
            (None, "main", "memos", "insert", ("m2",)),
            (1, "main", "memos", "insert", ("m3",)),
        ]
        assert inst.state()["state"]["db"]["log"][1]["i"] is None


def test_a_call_inside_bulk_splits_the_block_into_before_the_call_and_after_it() -> None:
    with world.instance() as inst:
        inst.call("count_memos")
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('m9', 'before')")
            inst.call("run", statements=["INSERT INTO memos (id, gist) VALUES ('m5', 'during')"])
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('m1', 'after')")
            # A row the block wrote before the call and changes again after it
            # is recorded once per segment, like a row changed by two calls.
            ctx.db.execute("UPDATE memos SET gist = 'again' WHERE id = 'm9'")
        assert summary(inst) == [
            (None, "main", "memos", "insert", ("m9",)),
            (1, "main", "memos", "insert", ("m5",)),
            (None, "main", "memos", "insert", ("m1",)),
            (None, "main", "memos", "update", ("m9",)),
        ]


def test_a_bulk_block_that_raises_leaves_no_records_even_for_a_call_it_made() -> None:
    with world.instance() as inst:
        with pytest.raises(KeyError), inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('m1', 'a')")
            inst.call("run", statements=["INSERT INTO memos (id, gist) VALUES ('m2', 'b')"])
            raise KeyError("abandon")
        assert inst.change_log() == []
        assert inst.call_count == 1
        assert inst.inspect().rows("SELECT id FROM memos") == []


# --- what is not logged -----------------------------------------------------------------------


def test_startup_hook_and_setup_sql_writes_are_starting_state_not_log_records() -> None:
    seeded = seahaven.World(
        name="seeded",
        version="1.0.0",
        schema="CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL);",
        state_format="seahaven.state/1",
    )

    @seeded.instance_startup
    def add_memo(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('from_hook', 'h')")

    @seeded.tool
    def touch(ctx: seahaven.Ctx) -> None:
        """Change one row."""
        ctx.db.execute("UPDATE memos SET gist = 'changed' WHERE id = 'from_sql'")

    setup_sql = "INSERT INTO memos (id, gist) VALUES ('from_sql', 's')"
    with seeded.instance(setup_sql=setup_sql) as inst:
        ids = [row["id"] for row in inst.inspect().rows("SELECT id FROM memos ORDER BY id")]
        assert ids == ["from_hook", "from_sql"]
        assert inst.change_log() == []
        inst.call("touch")
        assert summary(inst) == [(0, "main", "memos", "update", ("from_sql",))]


def test_an_idle_instance_records_nothing_written_behind_its_back() -> None:
    # No session is open between calls, so a write straight through inst.db is
    # not in the log, and it does not leak into the next call's records either.
    with world.instance() as inst:
        inst.db.execute("INSERT INTO memos (id, gist) VALUES ('side', 'door')")
        inst.call("run", statements=[ONE_MEMO])
        assert summary(inst) == [(0, "main", "memos", "insert", ("m1",))]


def test_untracked_tables_fts5_shadow_tables_and_virtual_tables_are_not_logged() -> None:
    with world.instance() as inst:
        inst.call(
            "run",
            statements=[
                "INSERT INTO docs (id, body) VALUES (1, 'harbour lights')",
                "INSERT INTO scratch (id, v) VALUES (1, 'untracked')",
                "INSERT INTO loose (v) VALUES ('untracked, and without a key')",
                "INSERT INTO boxes (id, x0, x1) VALUES (1, 0.0, 2.0)",
            ],
        )
        assert summary(inst) == [(0, "main", "docs", "insert", (1,))]
        # The trigger really did write the index, and the rtree its shadow tables.
        reader = inst.inspect()
        assert reader.rows("SELECT rowid FROM docs_fts WHERE docs_fts MATCH 'harbour'") == [
            {"rowid": 1}
        ]
        assert reader.one("SELECT count(*) AS n FROM boxes") == {"n": 1}


def test_a_table_without_an_explicit_primary_key_is_refused_at_instance_creation(
    tmp_path: Path,
) -> None:
    keyless = seahaven.World(
        name="keyless",
        version="1.0.0",
        schema="CREATE TABLE events (at TEXT, what TEXT);",
        state_format="seahaven.state/1",
        work_dir=tmp_path / "work",
    )
    with pytest.raises(seahaven.WorldBug) as refused:
        keyless.instance()
    message = str(refused.value)
    assert "'events'" in message
    assert "PRIMARY KEY" in message
    assert "untracked_tables" in message
    work = tmp_path / "work"
    assert not work.exists() or list(work.iterdir()) == []


def test_a_keyless_table_named_in_untracked_tables_is_accepted_and_not_logged() -> None:
    keyless = seahaven.World(
        name="keyless_untracked",
        version="1.0.0",
        schema="CREATE TABLE events (at TEXT, what TEXT);",
        state_format="seahaven.state/1",
        untracked_tables=["events"],
    )

    @keyless.tool
    def happen(ctx: seahaven.Ctx, what: str) -> None:
        """Append an event."""
        ctx.db.execute("INSERT INTO events (at, what) VALUES (datetime('now'), ?)", what)

    with keyless.instance() as inst:
        inst.call("happen", what="rain")
        assert inst.change_log() == []
        assert inst.inspect().one("SELECT what FROM events") == {"what": "rain"}


# --- composition: every node in one list -------------------------------------------------------

STORE_SCHEMA = """
CREATE TABLE entries (id TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE scratch (id TEXT PRIMARY KEY, v TEXT NOT NULL);
"""


def _store(name: str) -> seahaven.World:
    store = seahaven.World(
        name=name,
        version="1.0.0",
        schema=STORE_SCHEMA,
        state_format="seahaven.state/1",
        untracked_tables=["scratch"],
    )

    @store.tool
    def record(ctx: seahaven.Ctx, id: str, v: str) -> None:
        """Write one entry and one untracked scratch row."""
        ctx.db.execute("INSERT INTO entries (id, v) VALUES (?, ?)", id, v)
        ctx.db.execute("INSERT INTO scratch (id, v) VALUES (?, ?)", id, v)

    return store


# The root tracks its own scratch table; the added worlds name theirs untracked.
hub = seahaven.World(
    name="hub", version="1.0.0", schema=STORE_SCHEMA, state_format="seahaven.state/1"
)
hub.add_world(_store("zeta_store"), name="zeta", tool_prefix="zeta_")
hub.add_world(_store("audit_store"), name="audit", tool_prefix="audit_")


@hub.tool
def fan_out(ctx: seahaven.Ctx, id: str) -> None:
    """Write the root, then each added store, the later path first."""
    ctx.db.execute("INSERT INTO scratch (id, v) VALUES (?, 'hub')", id)
    ctx.db.execute("INSERT INTO entries (id, v) VALUES (?, 'hub')", id)
    ctx.worlds.zeta.call("record", id=id, v="z")
    ctx.worlds.audit.call("record", id=id, v="a")


def test_a_call_across_nodes_shares_one_ordinal_and_sorts_by_node_path() -> None:
    with hub.instance() as inst:
        inst.call("fan_out", id="e1")
        inst.call("audit_record", id="e2", v="direct")
        assert summary(inst) == [
            (0, "audit", "entries", "insert", ("e1",)),
            (0, "main", "entries", "insert", ("e1",)),
            (0, "main", "scratch", "insert", ("e1",)),
            (0, "zeta", "entries", "insert", ("e1",)),
            (1, "audit", "entries", "insert", ("e2",)),
        ]
        assert inst.call_count == 2


class _StartWatch:
    """Wraps ``Capture.start`` and keeps count of how many times a store started recording."""

    def __init__(self) -> None:
        self.started = 0
        self.real = Capture.start

    def start(self) -> Any:
        """A stand-in for ``Capture.start`` that counts, then starts."""
        watch = self

        def start(capture: Capture) -> None:
            watch.started += 1
            watch.real(capture)

        return start


def _recording(inst: seahaven.Instance) -> list[str]:
    """The path of every store of ``inst`` recording right now."""
    return [runtime.path for runtime in inst.calls.runtimes if runtime.capture.recording]


def test_each_store_a_call_reaches_records_with_the_call_and_stops_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watch = _StartWatch()
    seen: dict[str, list[str]] = {}
    nested = seahaven.World(
        name="nested", version="1.0.0", schema=STORE_SCHEMA, state_format="seahaven.state/1"
    )
    child = _store("child_store")
    nested.add_world(child, name="child", tool_prefix="child_")
    instances: list[seahaven.Instance] = []

    @child.middleware
    def look(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        seen.setdefault("inside the child", _recording(instances[0]))
        return next_(ctx, call)

    @nested.tool
    def both(ctx: seahaven.Ctx) -> None:
        """Write the root, then the child through its handle."""
        seen["root only"] = _recording(instances[0])
        ctx.db.execute("INSERT INTO entries (id, v) VALUES ('r', 'root')")
        ctx.worlds.child.call("record", id="c", v="child")

    with nested.instance() as inst:
        instances.append(inst)
        monkeypatch.setattr(Capture, "start", watch.start())
        assert _recording(inst) == []
        inst.call("both")
        assert seen["root only"] == ["main"]
        assert seen["inside the child"] == ["main", "child"]
        assert _recording(inst) == []  # the call is over: nothing is recording
        assert watch.started == 2
        # A surface call into the child records the child alone: the root has no
        # middleware on the route that could write to it.
        inst.call("child_record", id="d", v="again")
        assert watch.started == 3
        assert _recording(inst) == []
        assert len(inst.change_log()) == 3


# --- records, values and rendering ---------------------------------------------------------------


def test_log_record_fields_to_dict_order_and_read_only() -> None:
    with world.instance() as inst:
        inst.call("run", statements=[ONE_MEMO])
        [record] = inst.change_log()
        assert isinstance(record, seahaven.LogRecord)
        assert (record.i, record.world, record.table, record.op) == (0, "main", "memos", "insert")
        assert record.key == {"id": "m1"}
        assert record.before is None
        assert record.after == {"id": "m1", "gist": "tea", "done": 0}
        shape = record.to_dict()
        assert list(shape) == ["i", "world", "table", "op", "key", "before", "after", "actor"]
        assert record.actor == "agent"
        with pytest.raises(AttributeError):
            record.op = "delete"  # type: ignore[misc]
        # What to_dict hands out is the caller's; editing it does not reach the record.
        shape["after"]["gist"] = "edited"
        shape["key"]["id"] = "edited"
        assert record.after == {"id": "m1", "gist": "tea", "done": 0}
        assert record.key == {"id": "m1"}
        # The list is the caller's too.
        listed = inst.change_log()
        listed.clear()
        assert len(inst.change_log()) == 1


def test_values_map_to_json_by_storage_class() -> None:
    with world.instance() as inst:
        inst.call(
            "run",
            statements=[
                "INSERT INTO measures (id, i, r, t, b, n) "
                "VALUES (1, 9007199254740993, 2.5, 'text', X'0001ff', NULL)",
                "INSERT INTO measures (id, i, r, t, b, n) VALUES (2, -1, 1e999, '', X'', 7)",
                "INSERT INTO measures (id, i, r, t, b, n) VALUES (3, 0, -1e999, 'é', X'00', 0.5)",
            ],
        )
        afters = [record.after for record in inst.change_log()]
        assert afters == [
            {"id": 1, "i": 9007199254740993, "r": 2.5, "t": "text", "b": "AAH/", "n": None},
            {"id": 2, "i": -1, "r": None, "t": "", "b": "", "n": 7},
            {"id": 3, "i": 0, "r": None, "t": "é", "b": "AA==", "n": 0.5},
        ]
        assert isinstance(afters[0]["i"], int)  # integers stay integers, beyond 2**53 too
        document = inst.state()
        assert json.loads(json.dumps(document))["state"]["db"]["log"][0]["after"] == afters[0]


def test_an_update_of_a_blob_carries_base64_before_and_after() -> None:
    with world.instance(setup_sql="INSERT INTO measures (id, b) VALUES (1, X'ff')") as inst:
        inst.call("run", statements=["UPDATE measures SET b = X'00ff', r = 1e999"])
        [record] = inst.change_log()
        assert record.before == {"r": None, "b": "/w=="}
        assert record.after == {"r": None, "b": "AP8="}


def test_records_are_rendered_when_the_call_commits_not_when_the_document_is_read() -> None:
    with world.instance() as inst:
        inst.call("run", statements=[ONE_MEMO])
        # Rewrite the row behind the log's back: the record keeps what the call wrote.
        inst.db.execute("UPDATE memos SET gist = 'rewritten'")
        assert inst.state()["state"]["db"]["log"][0]["after"]["gist"] == "tea"
        assert inst.change_log()[0] is inst.change_log()[0]


@pytest.mark.parametrize(
    "format", ["seahaven.state/1", "seahaven.state+last_step/1", "seahaven.state+calls/1"]
)
def test_reading_the_document_runs_no_sql(format: str) -> None:
    with hub.instance() as inst:
        for number in range(5):
            inst.call("fan_out", id=f"e{number}")
        inst.inspect()  # opened, so a stray read on it would be seen too
        statements: list[str] = []
        connections = [inst.db.conn, inst.inspect().conn]

        def on_statement(event: dict[str, Any]) -> None:
            statements.append(str(event.get("sql")))

        for conn in connections:
            conn.trace_v2(apsw.SQLITE_TRACE_STMT, on_statement, id="test.count")
        try:
            document = inst.state(format=format)
        finally:
            for conn in connections:
                conn.trace_v2(0, None, id="test.count")
        assert statements == []
        assert document["call_count"] == 5
        # Four records a call: every one of five calls, or only the last.
        expected = 4 if format == "seahaven.state+last_step/1" else 20
        assert len(document["state"]["db"]["log"]) == expected
        # The trace does see statements, so the silence above means something.
        inst.call("fan_out", id="e9")
        inst.db.conn.trace_v2(apsw.SQLITE_TRACE_STMT, on_statement, id="test.count")
        try:
            inst.call("fan_out", id="e10")
        finally:
            inst.db.conn.trace_v2(0, None, id="test.count")
        assert statements != []


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_a_call_that_alters_a_declared_table_fails_saying_so_and_keeps_nothing(
    tmp_path: Path, storage: str
) -> None:
    world = memo_world("altering", work_dir=tmp_path / "work")
    add_jot(world)

    @world.tool
    def widen(ctx: seahaven.Ctx) -> None:
        """Add a column to memos and file a memo using it."""
        ctx.db.execute("ALTER TABLE memos ADD COLUMN note TEXT")
        ctx.db.execute("INSERT INTO memos (id, gist, note) VALUES ('w', 'wide', 'n')")

    with world.instance(storage=storage) as inst:  # type: ignore[arg-type]
        inst.call("jot", id="a", gist="one")
        with pytest.raises(seahaven.WorldBug) as failed:
            inst.call("widen")
        message = str(failed.value)
        assert "table 'memos' of the store at 'main' has 3 columns" in message
        assert "declares 2" in message
        assert "UTF-8" not in message
        # The rows are put back; the column, which the change capture cannot take out, stays.
        assert [row["id"] for row in inst.db.rows("SELECT id FROM memos")] == ["a"]
        assert [row["name"] for row in inst.db.rows("PRAGMA table_info(memos)")][-1] == "note"
        with pytest.raises(seahaven.WorldBug, match="has 3 columns"):
            inst.call("jot", id="b", gist="two")
        assert [record["key"]["id"] for record in inst.state()["state"]["db"]["log"]] == ["a"]
