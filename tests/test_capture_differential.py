"""The change capture against SQLite's session extension, on random statements.

Each episode runs the same random statements on two connections made alike:
one records with ``Capture`` (the store's preupdate hook, what calls use), the
other with an ``apsw.Session``, the way the change log was captured before and
the oracle here. The statements mix inserts, updates (key changes among them),
deletes, ``REPLACE``, savepoints rolled back or released, statements that fail
half-way and are caught, triggers and foreign-key cascades, on rowid and
``WITHOUT ROWID`` tables, a table without a key, a table with a stored generated
column, with integers, reals (0.0 and -0.0), text, blobs and NULL. The net
changes each one reports, and the records rendered from them, must be identical.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

import apsw
import pytest

import seahaven
from seahaven.stores.capture import Capture, Change
from seahaven.stores.changelog import Shape, render_changes
from seahaven.stores.schema import describe

SCHEMA = """
CREATE TABLE a (id INTEGER PRIMARY KEY, u INTEGER UNIQUE, v, w TEXT);
CREATE TABLE b (k TEXT PRIMARY KEY, v, n REAL);
CREATE TABLE c (x, y, z, PRIMARY KEY (x, y)) WITHOUT ROWID;
CREATE TABLE d (p, q);
CREATE TABLE parent (id INTEGER PRIMARY KEY, name);
CREATE TABLE child (
    id INTEGER PRIMARY KEY,
    pid INTEGER REFERENCES parent (id) ON DELETE CASCADE ON UPDATE CASCADE,
    v
);
CREATE TABLE g (id INTEGER PRIMARY KEY, v, s AS (coalesce(v, 0) || 'x') STORED);
CREATE TABLE audit (id INTEGER PRIMARY KEY, what);
CREATE TABLE strict_t (id INTEGER PRIMARY KEY, r REAL, t TEXT, bl BLOB, n ANY) STRICT;
CREATE TRIGGER a_audit AFTER UPDATE ON a BEGIN
    INSERT INTO audit (what) VALUES ('a:' || new.id);
END;
CREATE TRIGGER b_gone AFTER DELETE ON b BEGIN
    UPDATE a SET v = 7 WHERE id = 1;
END;
"""

VALUES: list[Any] = [
    None,
    0,
    1,
    -1,
    2,
    1.0,
    0.0,
    -0.0,
    1.5,
    2**40,
    1e300,
    "x",
    "y",
    "1",
    "",
    "é",
    b"x",
    b"",
    b"\x00\x01",
]
KEYS: list[Any] = [1, 2, 3, 4, 5]
TEXT_KEYS: list[Any] = ["p", "q", "r", "1", None, 1]


def _value(rng: random.Random) -> Any:
    return rng.choice(VALUES)


def _statement(rng: random.Random) -> tuple[str, tuple[Any, ...]]:
    """One random statement and its parameters; some fail, which the episode catches."""
    key, other = rng.choice(KEYS), rng.choice(KEYS)
    text_key, other_text = rng.choice(TEXT_KEYS), rng.choice(TEXT_KEYS)
    pair = (rng.choice([1, 2, "1", 1.0]), rng.choice(["a", "b", b"a", 0.0, -0.0]))
    choices: list[tuple[str, tuple[Any, ...]]] = [
        ("INSERT INTO a (id, u, v, w) VALUES (?, ?, ?, ?)", (key, other, _value(rng), "w")),
        (
            "INSERT OR REPLACE INTO a (id, u, v, w) VALUES (?, ?, ?, ?)",
            (key, other, _value(rng), None),
        ),
        ("INSERT OR IGNORE INTO a (id, u, v) VALUES (?, ?, ?)", (key, other, _value(rng))),
        ("UPDATE a SET v = ? WHERE id = ?", (_value(rng), key)),
        ("UPDATE a SET v = v WHERE id = ?", (key,)),
        ("UPDATE a SET id = ? WHERE id = ?", (other, key)),
        ("UPDATE a SET u = u + 1", ()),
        ("UPDATE OR REPLACE a SET u = ? WHERE id = ?", (other, key)),
        ("DELETE FROM a WHERE id = ?", (key,)),
        ("INSERT INTO a (u, v) SELECT u + 10, v FROM a", ()),
        ("INSERT INTO b (k, v, n) VALUES (?, ?, ?)", (text_key, _value(rng), _value(rng))),
        ("INSERT OR REPLACE INTO b (k, v, n) VALUES (?, ?, ?)", (text_key, _value(rng), 1)),
        ("UPDATE b SET k = ? WHERE k IS ?", (other_text, text_key)),
        ("UPDATE b SET n = ?, v = ? WHERE k IS ?", (_value(rng), _value(rng), text_key)),
        ("DELETE FROM b WHERE k IS ?", (text_key,)),
        ("INSERT INTO c (x, y, z) VALUES (?, ?, ?)", (*pair, _value(rng))),
        ("INSERT OR REPLACE INTO c (x, y, z) VALUES (?, ?, ?)", (*pair, _value(rng))),
        ("UPDATE c SET z = ? WHERE x = ?", (_value(rng), pair[0])),
        ("UPDATE c SET y = ? WHERE x = ? AND y = ?", (rng.choice(["a", "c"]), *pair)),
        ("DELETE FROM c WHERE x = ?", (pair[0],)),
        ("INSERT INTO d (p, q) VALUES (?, ?)", (_value(rng), _value(rng))),
        ("UPDATE d SET q = ?", (_value(rng),)),
        ("DELETE FROM d WHERE rowid = ?", (key,)),
        ("INSERT INTO parent (id, name) VALUES (?, ?)", (key, _value(rng))),
        ("UPDATE parent SET id = ? WHERE id = ?", (other, key)),
        ("DELETE FROM parent WHERE id = ?", (key,)),
        ("INSERT INTO child (id, pid, v) VALUES (?, ?, ?)", (other, key, _value(rng))),
        ("UPDATE child SET pid = ? WHERE id = ?", (key, other)),
        ("INSERT OR REPLACE INTO g (id, v) VALUES (?, ?)", (key, _value(rng))),
        ("UPDATE g SET v = ? WHERE id = ?", (_value(rng), key)),
        ("DELETE FROM g WHERE id = ?", (key,)),
        (
            "INSERT OR REPLACE INTO strict_t VALUES (?, ?, ?, ?, ?)",
            (key, 1.0, "t", b"b", _value(rng)),
        ),
        (
            "UPDATE strict_t SET r = ?, n = ? WHERE id = ?",
            (rng.choice([1, 1.0, -0.0, 0.0]), _value(rng), key),
        ),
        ("UPDATE strict_t SET n = CAST(n AS TEXT) WHERE id = ?", (key,)),
        ("DELETE FROM strict_t WHERE id = ?", (key,)),
        ("INSERT INTO a (id, u) VALUES (?, ?)", (key, "not an integer")),
    ]
    return rng.choice(choices)


SEED_ROWS = [
    "INSERT INTO a VALUES (1, 1, 'one', 'w'), (2, 2, 2.0, NULL), (3, 3, x'00', 't')",
    "INSERT INTO b VALUES ('p', 1, 0.0), ('q', 'two', -0.0), (NULL, 'nokey', 1)",
    "INSERT INTO c VALUES (1, 'a', 1), (1, 'b', 2), ('1', 'a', 3), (2, -0.0, 4)",
    "INSERT INTO d VALUES (1, 2), (3, 4)",
    "INSERT INTO parent VALUES (1, 'p1'), (2, 'p2')",
    "INSERT INTO child VALUES (1, 1, 'c1'), (2, 2, 'c2'), (3, 1, 'c3')",
    "INSERT INTO g (id, v) VALUES (1, 1), (2, 'v')",
    "INSERT INTO strict_t VALUES (1, 0.0, 't', x'01', 1), (2, -0.0, '', x'', 1.0)",
    # sqlite_stat1 exists before recording starts: a session cannot read back a changeset
    # across the schema change that creates it.
    "ANALYZE",
]


def _connection() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(SCHEMA)
    conn.execute("PRAGMA foreign_keys = ON")
    for statement in SEED_ROWS:
        conn.execute(statement)
    return conn


def _episode(conn: apsw.Connection, seed: int) -> None:
    """Run episode ``seed``'s statements on ``conn``: the same ones, whatever records them."""
    rng = random.Random(seed)
    conn.execute("BEGIN")
    savepoints: list[str] = []
    for step in range(rng.randint(1, 40)):
        roll = rng.random()
        if roll < 0.08:
            name = f"sp{step}"
            conn.execute(f"SAVEPOINT {name}")
            savepoints.append(name)
            continue
        if roll < 0.16 and savepoints:
            # Releasing or rolling back a savepoint ends every savepoint opened after it.
            position = rng.randrange(len(savepoints))
            name = savepoints[position]
            del savepoints[position:]
            if rng.random() < 0.5:
                conn.execute(f"ROLLBACK TO {name}; RELEASE {name}")
            else:
                conn.execute(f"RELEASE {name}")
            continue
        if roll < 0.18:
            conn.execute("ANALYZE")
            continue
        sql, params = _statement(rng)
        # A failed statement's own changes are undone; the episode goes on.
        with contextlib.suppress(apsw.ConstraintError):
            conn.execute(sql, params)
    end = rng.random()
    if end < 0.1:
        conn.execute("ROLLBACK")
    else:
        conn.execute("COMMIT")


def _exact(value: Any) -> Any:
    # A value with its storage class: 1 and 1.0, 0.0 and -0.0, text and blob all differ.
    return (type(value).__name__, repr(value))


def _normal(changes: list[Change], keys: dict[str, tuple[int, ...]]) -> list[Any]:
    """Changes in one order, each update as its key and its changed columns alone."""
    normal = []
    for name, op, old, new in changes:
        if op == "UPDATE":
            assert old is not None and new is not None
            key = tuple(_exact(old[index]) for index in keys[name])
            changed = tuple(
                (index, _exact(old[index]), _exact(value))
                for index, value in enumerate(new)
                if value is not apsw.no_change and index not in keys[name]
            )
            normal.append((name, op, key, changed))
        else:
            row = old if op == "DELETE" else new
            assert row is not None
            normal.append((name, op, tuple(map(_exact, row)), ()))
    return sorted(normal, key=repr)


def _session_changes(session: apsw.Session) -> list[Change]:
    """The oracle's changes: the session's changeset, change by change."""
    return [
        (change.name, change.op, change.old, change.new)
        for change in apsw.Changeset.iter(session.changeset())
    ]


def _rendered(conn: apsw.Connection, changes: list[Change]) -> list[str]:
    tables = describe(conn).tables
    shapes: dict[str, Shape] = {}
    kept = [change for change in changes if change[0] in tables]
    texts: list[str] = []
    render_changes("main", kept, 0, tables.__getitem__, shapes, "agent", [], texts)
    return sorted(texts)


def test_episodes_capture_what_a_session_captures() -> None:
    keys = {name: table.primary_key for name, table in describe(_connection()).tables.items()}
    keys["sqlite_stat1"] = (0, 1)
    compared = 0
    for seed in range(400):
        captured_on, oracle_on = _connection(), _connection()
        capture = Capture(captured_on, None)
        capture.start()
        session = apsw.Session(oracle_on, "main")
        session.attach()
        _episode(captured_on, seed)
        _episode(oracle_on, seed)
        assert (
            captured_on.execute("SELECT count(*) FROM a").fetchall()
            == oracle_on.execute("SELECT count(*) FROM a").fetchall()
        )
        ours, theirs = capture.changes(), _session_changes(session)
        session.close()
        assert _normal(ours, keys) == _normal(theirs, keys), f"episode {seed}"
        assert _rendered(captured_on, ours) == _rendered(oracle_on, theirs), f"episode {seed}"
        compared += len(theirs)
    # The episodes change plenty: the comparison is not between two empty accounts.
    assert compared > 2000


def test_a_stopped_capture_forgets_and_records_again_from_scratch() -> None:
    conn = _connection()
    capture = Capture(conn, None)
    capture.start()
    conn.execute("UPDATE b SET v = 'changed' WHERE k = 'p'")
    capture.stop()
    assert capture.is_empty
    conn.execute("UPDATE b SET v = 'unseen' WHERE k = 'q'")
    capture.start()
    conn.execute("UPDATE b SET v = 'changed again' WHERE k = 'p'")
    nothing = apsw.no_change
    assert capture.changes() == [
        ("b", "UPDATE", ("p", "changed", 0.0), (nothing, "changed again", nothing))
    ]


@pytest.mark.parametrize("untracked", [True, False])
def test_a_table_the_store_does_not_track_is_not_captured(untracked: bool) -> None:
    conn = _connection()
    capture = Capture(conn, (lambda name: name != "d" and name != "a") if untracked else None)
    capture.start()
    conn.execute("UPDATE a SET v = 'changed' WHERE id = 1")
    tables = {name for name, *_ in capture.changes()}
    assert tables == ({"audit"} if untracked else {"a", "audit"})


def test_text_that_is_not_utf8_fails_only_in_a_table_the_capture_records() -> None:
    # A session never reads a row of a table without a key or of one it does not
    # track, so such a row's text cannot fail the stretch; a recorded one's can.
    bad = "CAST(X'FF' AS TEXT)"
    conn = _connection()
    capture = Capture(conn, lambda name: name != "audit")
    capture.start()
    conn.execute(f"INSERT INTO d (p, q) VALUES (1, {bad})")
    conn.execute(f"INSERT INTO audit (what) VALUES ({bad})")
    assert capture.changes() == []
    conn.execute(f"INSERT INTO b (k, v) VALUES ('bad', {bad})")
    with pytest.raises(UnicodeDecodeError):
        capture.changes()
    capture.undo()
    assert conn.execute("SELECT count(*) FROM b WHERE k = 'bad'").fetchone() == (0,)


# --- through an instance ---------------------------------------------------------------------

GENERATED = seahaven.World(
    name="generated_columns",
    version="1.0.0",
    schema=(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, price INTEGER, "
        "doubled AS (price * 2), label AS ('#' || id) STORED);"
    ),
    state_format="seahaven.state/1",
)


@GENERATED.tool
def price(ctx: seahaven.Ctx, id: int, price: int) -> None:
    """Set an item's price, adding the item when it is new."""
    ctx.db.execute(
        "INSERT INTO items (id, price) VALUES (?, ?) "
        "ON CONFLICT (id) DO UPDATE SET price = excluded.price",
        id,
        price,
    )


def test_a_store_with_a_virtual_generated_column_records_its_other_columns() -> None:
    # APSW cannot hand out the hook's values for such a table, so its store records
    # with a session: the log is the same either way.
    with GENERATED.instance(now="2030-01-01T00:00:00.000Z", clock_mode="fixed") as inst:
        inst.call("price", id=1, price=5)
        inst.call("price", id=1, price=7)
        assert inst.calls.runtimes[0].capture.by_session is True
        assert [record.to_dict() for record in inst.change_log()] == [
            {
                "i": 0,
                "world": "main",
                "table": "items",
                "op": "insert",
                "key": {"id": 1},
                "before": None,
                "after": {"id": 1, "price": 5},
                "actor": "agent",
            },
            {
                "i": 1,
                "world": "main",
                "table": "items",
                "op": "update",
                "key": {"id": 1},
                "before": {"price": 5},
                "after": {"price": 7},
                "actor": "agent",
            },
        ]


def test_a_store_without_one_records_with_the_hook() -> None:
    world = seahaven.World(
        name="stored_generated",
        version="1.0.0",
        schema="CREATE TABLE items (id INTEGER PRIMARY KEY, p INTEGER, q AS (p + 1) STORED);",
        state_format="seahaven.state/1",
    )

    @world.tool
    def add(ctx: seahaven.Ctx, id: int) -> None:
        """Add an item."""
        ctx.db.execute("INSERT INTO items (id, p) VALUES (?, 1)", id)

    with world.instance() as inst:
        inst.call("add", id=3)
        assert inst.calls.runtimes[0].capture.by_session is False
        assert [record.after for record in inst.change_log()] == [{"id": 3, "p": 1}]


SCRIBE = seahaven.World(
    name="scribe",
    version="1.0.0",
    schema="CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);",
    state_format="seahaven.state/1",
)


@SCRIBE.tool
def note(ctx: seahaven.Ctx, id: int, body: str, watch: bool = False) -> None:
    """Write a note; with ``watch``, open a session on the store's connection first."""
    if watch:
        session = apsw.Session(ctx.db.conn, "main")
        session.attach()
    ctx.db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", id, body)


def test_a_session_held_on_a_stores_connection_is_refused_and_then_let_go() -> None:
    with SCRIBE.instance() as inst:
        inst.call("note", id=1, body="before")
        session = apsw.Session(inst.db.conn, "main")
        session.attach()
        with pytest.raises(seahaven.WorldBug, match="session is attached to this store"):
            inst.call("note", id=2, body="refused")
        session.close()
        inst.call("note", id=3, body="after")
        assert [record.key for record in inst.change_log()] == [{"id": 1}, {"id": 3}]


def test_a_session_opened_inside_a_call_stops_the_instance() -> None:
    with SCRIBE.instance() as inst:
        with pytest.raises(seahaven.WorldBug, match="refuses further use"):
            inst.call("note", id=1, body="unseen", watch=True)
        with pytest.raises(seahaven.WorldBug, match="no longer matches its state document"):
            inst.state()


INDEXED = seahaven.World(
    name="indexed_notes",
    version="1.0.0",
    schema=(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);"
        "CREATE VIRTUAL TABLE notes_fts USING fts5(body);"
    ),
    state_format="seahaven.state/1",
)


@INDEXED.tool
def check_index(ctx: seahaven.Ctx) -> None:
    """Run FTS5's integrity check: a write to a virtual table, which no hook sees."""
    ctx.db.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', 1)")


@INDEXED.tool
def add_note(ctx: seahaven.Ctx, id: int, body: str) -> None:
    """Write a note and index it."""
    ctx.db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", id, body)
    ctx.db.execute("INSERT INTO notes_fts (rowid, body) VALUES (?, ?)", id, body)


def test_a_write_only_a_virtual_table_sees_records_nothing_and_fails_nothing() -> None:
    # The count of changes moves and the hook sees nothing, as when a session takes the
    # hook; the capture tells the two apart, and a virtual table's rows are not recorded,
    # as a session does not record them.
    with INDEXED.instance() as inst:
        inst.call("check_index")
        inst.call("add_note", id=1, body="indexed")
        inst.call("check_index")
        assert [record.key for record in inst.change_log()] == [{"id": 1}]
        # The probe that told them apart left no temporary table behind.
        assert inst.db.conn.execute("SELECT name FROM temp.sqlite_master").fetchall() == []
