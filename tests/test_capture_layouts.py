"""What the capture knows of a table's columns: read once per schema, and never stale.

A table's layout (the columns the preupdate hook reports, and its key) is kept
for the whole process, keyed by the table's name and its ``CREATE TABLE`` text.
Two stores whose tables share a name but not their columns or key, a table
altered between two stretches of recording, a table created after the first
read: each must be captured exactly as SQLite's session extension (the oracle
here) captures it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apsw
import pytest

import seahaven
from seahaven.stores import capture as capture_module
from seahaven.stores.capture import Capture, Change


def _oracle(conn: apsw.Connection, statements: list[str]) -> list[Change]:
    """The changes a session records for ``statements`` run on ``conn``."""
    session = apsw.Session(conn, "main")
    session.attach()
    try:
        for statement in statements:
            conn.execute(statement)
        return [
            (change.name, change.op, change.old, change.new)
            for change in apsw.Changeset.iter(session.changeset())
        ]
    finally:
        session.close()


def _captured(capture: Capture, conn: apsw.Connection, statements: list[str]) -> list[Change]:
    """The changes ``capture`` records for ``statements`` run on ``conn``, as one stretch."""
    capture.start()
    try:
        for statement in statements:
            conn.execute(statement)
        return capture.changes()
    finally:
        capture.stop()


def _pair(schema: str) -> tuple[apsw.Connection, apsw.Connection]:
    made = []
    for _ in range(2):
        conn = apsw.Connection(":memory:")
        conn.execute(schema)
        made.append(conn)
    return made[0], made[1]


def _same(ours: list[Change], theirs: list[Change], conn: apsw.Connection) -> None:
    """The same changes, an update's by its key and changed columns (a session's old row
    holds those alone), each value with its storage class."""

    def normal(changes: list[Change]) -> list[str]:
        found = []
        for name, op, old, new in changes:
            if op == "UPDATE":
                assert old is not None and new is not None
                key = {row[0] for row in conn.execute(f"PRAGMA table_info({name})") if row[5]}
                kept = [
                    index in key or value is not apsw.no_change for index, value in enumerate(new)
                ]
                old = tuple(value for value, keep in zip(old, kept, strict=True) if keep)
            found.append(repr([(type(value).__name__, value) for value in (name, op, old, new)]))
        return sorted(found)

    assert normal(ours) == normal(theirs)


@pytest.fixture
def few_layouts(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[Any, Any]]:
    """The process's layout cache, emptied for the test (and its bound at 4)."""
    cache: dict[Any, Any] = {}
    monkeypatch.setattr(capture_module, "_LAYOUTS", cache)
    monkeypatch.setattr(capture_module, "_LAYOUTS_KEPT", 4)
    yield cache


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # The same name, other columns.
        (
            "CREATE TABLE t (id INTEGER PRIMARY KEY, a)",
            "CREATE TABLE t (id INTEGER PRIMARY KEY, b, a)",
        ),
        # The same columns, another key.
        ("CREATE TABLE t (id INTEGER PRIMARY KEY, a)", "CREATE TABLE t (id, a PRIMARY KEY)"),
        # The same columns, a key of two parts.
        ("CREATE TABLE t (id, a, PRIMARY KEY (id))", "CREATE TABLE t (id, a, PRIMARY KEY (a, id))"),
        # A key, and none.
        ("CREATE TABLE t (id INTEGER PRIMARY KEY, a)", "CREATE TABLE t (id, a)"),
    ],
)
def test_two_stores_with_a_table_of_one_name_and_two_shapes(
    few_layouts: dict[Any, Any], first: str, second: str
) -> None:
    for _ in range(2):
        # Each in turn, twice over: the second round reads the layouts from the cache.
        for schema in (first, second):
            captured_on, oracle_on = _pair(schema)
            statements = [
                "INSERT INTO t (id, a) VALUES (1, 'one'), (2, 'two')",
                "UPDATE t SET a = 'changed' WHERE id = 1",
            ]
            ours = _captured(Capture(captured_on, None), captured_on, statements)
            _same(ours, _oracle(oracle_on, statements), oracle_on)
            statements = ["UPDATE t SET id = 3 WHERE id = 2", "DELETE FROM t WHERE id = 1"]
            ours = _captured(Capture(captured_on, None), captured_on, statements)
            _same(ours, _oracle(oracle_on, statements), oracle_on)
    assert len(few_layouts) == 2


@pytest.mark.parametrize(
    ("alter", "after"),
    [
        ("ALTER TABLE t RENAME COLUMN a TO b", "UPDATE t SET b = 'changed'"),
        ("ALTER TABLE t ADD COLUMN c DEFAULT 'c'", "UPDATE t SET z = 'changed'"),
        ("ALTER TABLE t DROP COLUMN a", "UPDATE t SET z = 'changed'"),
        ("ALTER TABLE t RENAME TO u; ALTER TABLE w RENAME TO t", "UPDATE t SET a = 'changed'"),
        ("DROP TABLE t; CREATE TABLE t (a PRIMARY KEY, id)", "UPDATE t SET id = 'changed'"),
    ],
)
def test_a_table_altered_between_two_stretches(
    few_layouts: dict[Any, Any], alter: str, after: str
) -> None:
    # One capture records both stretches: what it knew of the table before the change is
    # not what it knows after.
    schema = (
        "CREATE TABLE t (id INTEGER PRIMARY KEY, a, z);"
        "CREATE TABLE w (id INTEGER PRIMARY KEY, x, y, a, z);"
        "INSERT INTO w (id, a) VALUES (7, 'w')"
    )
    captured_on, oracle_on = _pair(schema)
    capture = Capture(captured_on, None)
    before = ["INSERT INTO t (id, a, z) VALUES (1, 'one', 1)", "UPDATE w SET z = 1"]
    _same(_captured(capture, captured_on, before), _oracle(oracle_on, before), oracle_on)
    for conn in (captured_on, oracle_on):
        conn.execute(alter)
        conn.execute("INSERT INTO t (id, a) VALUES (2, 'two')" if "DROP TABLE" in alter else "")
    _same(_captured(capture, captured_on, [after]), _oracle(oracle_on, [after]), oracle_on)


def test_a_table_created_after_the_first_read(few_layouts: dict[Any, Any]) -> None:
    captured_on, oracle_on = _pair("CREATE TABLE t (id INTEGER PRIMARY KEY, a)")
    capture = Capture(captured_on, None)
    first = ["INSERT INTO t VALUES (1, 'one')"]
    _same(_captured(capture, captured_on, first), _oracle(oracle_on, first), oracle_on)
    for conn in (captured_on, oracle_on):
        conn.execute("CREATE TABLE later (k TEXT PRIMARY KEY, v)")
    second = ["INSERT INTO later VALUES ('k', 1)", "UPDATE t SET a = 'two'"]
    _same(_captured(capture, captured_on, second), _oracle(oracle_on, second), oracle_on)


def test_the_cache_is_bounded(few_layouts: dict[Any, Any]) -> None:
    for columns in range(10):
        conn = apsw.Connection(":memory:")
        extra = "".join(f", c{index}" for index in range(columns))
        conn.execute(f"CREATE TABLE t (id INTEGER PRIMARY KEY{extra})")
        changes = _captured(Capture(conn, None), conn, ["INSERT INTO t (id) VALUES (1)"])
        assert changes == [("t", "INSERT", None, (1, *[None] * columns))]
        assert len(few_layouts) <= 4


def test_a_store_of_a_schema_met_before_reads_its_tables_in_one_statement() -> None:
    schema = (
        "CREATE TABLE a (id INTEGER PRIMARY KEY, v); CREATE TABLE b (id INTEGER PRIMARY KEY, v)"
    )
    statements = ["INSERT INTO a VALUES (1, 1)", "INSERT INTO b VALUES (1, 1)"]
    seen: list[str] = []
    for round_ in range(2):
        conn = apsw.Connection(":memory:")
        conn.execute(schema)
        capture = Capture(conn, None)
        capture.start()
        for statement in statements:
            conn.execute(statement)
        if round_:
            conn.exec_trace = lambda _cursor, sql, _bindings: seen.append(sql) or True
        assert len(capture.changes()) == 2
        capture.stop()
    assert not [sql for sql in seen if "table_xinfo" in sql]
    assert len([sql for sql in seen if "sqlite_schema" in sql]) == 1


def test_a_later_stretch_on_an_unchanged_schema_reads_no_table_again() -> None:
    # What an earlier stretch learnt is trusted once the schema cookie is seen unchanged: one
    # PRAGMA a stretch that writes, and no read of sqlite_schema or of a table's columns.
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE a (id INTEGER PRIMARY KEY, v); CREATE TABLE b (id, v)")
    capture = Capture(conn, None)
    first = ["INSERT INTO a VALUES (1, 1)", "INSERT INTO b VALUES (0, 0)"]
    assert len(_captured(capture, conn, first)) == 1  # b has no key: not recorded
    seen: list[str] = []
    conn.exec_trace = lambda _cursor, sql, _bindings: seen.append(sql) or True
    for number in range(2, 5):
        statements = [f"INSERT INTO a VALUES ({number}, 1)", "INSERT INTO b VALUES (1, 1)"]
        assert len(_captured(capture, conn, statements)) == 1
        assert len(_captured(capture, conn, ["SELECT count(*) FROM a"])) == 0
    conn.exec_trace = None
    assert not [sql for sql in seen if "sqlite_schema" in sql or "table_xinfo" in sql]
    assert len([sql for sql in seen if "schema_version" in sql]) == 3


# --- through instances: two worlds with a table of one name ----------------------------------

NARROW = seahaven.World(
    name="layout_narrow",
    version="1.0.0",
    schema="CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT);",
    state_format="seahaven.state/1",
)
WIDE = seahaven.World(
    name="layout_wide",
    version="1.0.0",
    schema=(
        "CREATE TABLE items (code TEXT NOT NULL, id INTEGER NOT NULL, label TEXT, "
        "PRIMARY KEY (code, id)) WITHOUT ROWID;"
    ),
    state_format="seahaven.state/1",
)


@NARROW.tool
def label_narrow(ctx: seahaven.Ctx, id: int, label: str) -> None:
    """Label an item, adding it when it is new."""
    ctx.db.execute(
        "INSERT INTO items (id, label) VALUES (?, ?) "
        "ON CONFLICT (id) DO UPDATE SET label = excluded.label",
        id,
        label,
    )


@WIDE.tool
def label_wide(ctx: seahaven.Ctx, id: int, label: str) -> None:
    """Label an item of code 'x', adding it when it is new."""
    ctx.db.execute(
        "INSERT INTO items (code, id, label) VALUES ('x', ?, ?) "
        "ON CONFLICT (code, id) DO UPDATE SET label = excluded.label",
        id,
        label,
    )


def test_two_worlds_with_a_table_of_one_name_log_their_own_columns() -> None:
    for _ in range(2):
        with NARROW.instance() as narrow, WIDE.instance() as wide:
            narrow.call("label_narrow", id=1, label="a")
            wide.call("label_wide", id=1, label="a")
            narrow.call("label_narrow", id=1, label="b")
            wide.call("label_wide", id=1, label="b")
            assert [(r.op, r.key, r.before, r.after) for r in narrow.change_log()] == [
                ("insert", {"id": 1}, None, {"id": 1, "label": "a"}),
                ("update", {"id": 1}, {"label": "a"}, {"label": "b"}),
            ]
            assert [(r.op, r.key, r.before, r.after) for r in wide.change_log()] == [
                ("insert", {"code": "x", "id": 1}, None, {"code": "x", "id": 1, "label": "a"}),
                ("update", {"code": "x", "id": 1}, {"label": "a"}, {"label": "b"}),
            ]
