"""A hostile-SQL corpus through ``seahaven.sql_tools.run_sql``: nothing escapes, nothing hangs.

Every statement is sent by an agent to a world's SQL doors, one read-only, one that
writes. Each must be refused with a clear error, or be harmless; afterwards no file
outside the instance directory has appeared or changed, every row and every table of
the store is as it was, the connection's settings are the framework's, and the
instance still answers. Each entry names the outcome it must have, so a statement
that starts to pass where it was refused fails the test.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest

import seahaven
from seahaven import sandbox

SCHEMA = """
CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;
CREATE TABLE secrets (id INTEGER PRIMARY KEY, s TEXT NOT NULL) STRICT;
CREATE TABLE counters (id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER NOT NULL);
CREATE VIEW secret_view AS SELECT s FROM secrets;
CREATE VIRTUAL TABLE notes_fts USING fts5 (body, content = 'notes', content_rowid = 'rowid');
CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
    INSERT INTO notes_fts (rowid, body) VALUES (new.rowid, new.body);
END;
CREATE VIRTUAL TABLE boxes USING rtree (id, x0, x1);
"""

# What an entry must come to: a refusal kind, or one of these.
STATEMENTS = "statements"  # not exactly one statement
LIMIT = "limit"  # stopped by a limit: time, value size, result size
ERROR = "error"  # SQLite's own error (no such function, too long, ...)
OK = "ok"  # ran, and did no harm

READ_DOOR, WRITE_DOOR = "read_sql", "write_sql"


def corpus(sandbox_dir: Path) -> list[tuple[str, str, str | set[str]]]:
    """``(door, statement, outcome)`` for every hostile statement."""
    escape = sandbox_dir / "escape"
    count_forever = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) "
    return [
        # --- ATTACH and other ways to another file -----------------------------------------------
        (READ_DOOR, f"ATTACH DATABASE '{escape}1.db' AS x", "attach"),
        (READ_DOOR, "ATTACH ':memory:' AS m", "attach"),
        (READ_DOOR, f"ATTACH 'file:{escape}2.db?mode=rwc' AS y", "attach"),
        (READ_DOOR, f"attach database '{escape}3.db' as z", "attach"),
        (READ_DOOR, f"ATTACH (SELECT '{escape}4.db') AS q", "attach"),
        (READ_DOOR, "DETACH DATABASE main", "attach"),
        (WRITE_DOOR, f"ATTACH DATABASE '{escape}5.db' AS x", "attach"),
        (READ_DOOR, f"VACUUM INTO '{escape}6.db'", "action"),
        (WRITE_DOOR, f"VACUUM INTO '{escape}7.db'", "action"),
        (READ_DOOR, "VACUUM", "action"),
        (READ_DOOR, f"/* tidy */ vacuum main into '{escape}8.db'", "action"),
        (READ_DOOR, f"SELECT 1; ATTACH '{escape}9.db' AS a", STATEMENTS),
        # --- pragmas ----------------------------------------------------------------------------
        (READ_DOOR, "PRAGMA writable_schema = ON", "pragma"),
        (WRITE_DOOR, "PRAGMA writable_schema = 1", "pragma"),
        (READ_DOOR, "PRAGMA foreign_keys = OFF", "pragma"),
        (READ_DOOR, "PRAGMA journal_mode = DELETE", "pragma"),
        (READ_DOOR, "PRAGMA journal_mode", "pragma"),
        (READ_DOOR, f"PRAGMA temp_store_directory = '{sandbox_dir}'", "pragma"),
        (READ_DOOR, "PRAGMA cache_size = -1000000", "pragma"),
        (READ_DOOR, "PRAGMA query_only = OFF", "pragma"),
        (READ_DOOR, "PRAGMA trusted_schema = ON", "pragma"),
        (READ_DOOR, "PRAGMA main.user_version = 7", "pragma"),
        (READ_DOOR, "PRAGMA recursive_triggers = ON", "pragma"),
        (READ_DOOR, "PRAGMA mmap_size = 1000000000", "pragma"),
        (READ_DOOR, "PRAGMA wal_checkpoint(TRUNCATE)", "pragma"),
        (READ_DOOR, "PRAGMA table_info(secrets)", "pragma"),
        (READ_DOOR, "SELECT * FROM pragma_table_info('secrets')", "read"),
        (READ_DOOR, "SELECT * FROM pragma_database_list", "read"),
        # Counting rows reads a table with no schema named: still held to the list.
        (READ_DOOR, "SELECT count(*) FROM pragma_table_info('secrets')", "read"),
        (READ_DOOR, "SELECT count(*) FROM pragma_database_list", "read"),
        (READ_DOOR, "SELECT count(*) FROM pragma_function_list", "read"),
        (READ_DOOR, "SELECT count(*) FROM dbstat", "read"),
        (READ_DOOR, "SELECT count(*) FROM sqlite_temp_master", "read"),
        # --- extensions and functions off the list ----------------------------------------------
        (READ_DOOR, f"SELECT load_extension('{escape}.so')", "function"),
        (READ_DOOR, "SELECT load_extension('libc.so.6', 'system')", "function"),
        (WRITE_DOOR, "INSERT INTO notes (id, body) VALUES ('x', load_extension('x'))", "function"),
        (READ_DOOR, "SELECT fts5(NULL)", "function"),
        (READ_DOOR, "SELECT sqlite_compileoption_get(0)", "function"),
        (READ_DOOR, "SELECT changes(), total_changes(), last_insert_rowid()", "function"),
        (READ_DOOR, "SELECT sqlite_offset(id) FROM notes", {"function", ERROR}),
        (READ_DOOR, "SELECT readfile('/etc/passwd')", ERROR),
        (READ_DOOR, f"SELECT writefile('{escape}10', 'x')", ERROR),
        # --- schema edits -----------------------------------------------------------------------
        (READ_DOOR, "CREATE TABLE evil (x)", "schema"),
        (WRITE_DOOR, "CREATE TABLE evil (x)", "schema"),
        (WRITE_DOOR, "CREATE INDEX notes_body ON notes (body)", "schema"),
        (WRITE_DOOR, "DROP TABLE notes", "schema"),
        (WRITE_DOOR, "DROP TABLE secrets", "schema"),
        (WRITE_DOOR, "ALTER TABLE notes ADD COLUMN evil TEXT", "schema"),
        (WRITE_DOOR, "ALTER TABLE notes RENAME TO gone", "schema"),
        (WRITE_DOOR, "CREATE VIEW peek AS SELECT * FROM secrets", "schema"),
        (WRITE_DOOR, "DROP VIEW secret_view", "schema"),
        (WRITE_DOOR, "REINDEX", "schema"),
        (WRITE_DOOR, "ANALYZE", "schema"),
        (WRITE_DOOR, "CREATE VIRTUAL TABLE vt USING fts5 (x)", "schema"),
        (WRITE_DOOR, "UPDATE sqlite_master SET sql = '' WHERE name = 'notes'", {"schema", ERROR}),
        (WRITE_DOOR, "DELETE FROM sqlite_schema", {"schema", ERROR}),
        (
            WRITE_DOOR,
            "INSERT INTO sqlite_master VALUES ('table', 'x', 'x', 0, 'CREATE TABLE x (a)')",
            {"schema", ERROR},
        ),
        # --- shadow tables and SQLite's own -----------------------------------------------------
        (READ_DOOR, "SELECT * FROM notes_fts_data", "read"),
        (READ_DOOR, "SELECT * FROM notes_fts_idx", "read"),
        (READ_DOOR, "SELECT * FROM notes_fts_config", "read"),
        (WRITE_DOOR, "DELETE FROM notes_fts_data", "write"),
        (WRITE_DOOR, "INSERT INTO notes_fts_config (k, v) VALUES ('pgsz', 64)", "write"),
        (READ_DOOR, "INSERT INTO notes_fts (notes_fts) VALUES ('delete-all')", "write"),
        (WRITE_DOOR, "INSERT INTO notes_fts (notes_fts) VALUES ('delete-all')", "write"),
        (WRITE_DOOR, "INSERT INTO notes_fts (rowid, body) VALUES (99, 'not in notes')", "write"),
        (READ_DOOR, "SELECT * FROM boxes_node", "read"),
        (WRITE_DOOR, "DELETE FROM boxes_node", "write"),
        (READ_DOOR, "SELECT * FROM sqlite_sequence", "read"),
        (WRITE_DOOR, "INSERT INTO sqlite_sequence (name, seq) VALUES ('counters', 9)", "write"),
        (READ_DOOR, "SELECT * FROM sqlite_temp_master", "read"),
        (READ_DOOR, "SELECT * FROM dbstat", {"read", ERROR}),
        (READ_DOOR, "SELECT * FROM sqlite_dbpage", {"read", ERROR}),
        # --- temp objects -----------------------------------------------------------------------
        (READ_DOOR, "CREATE TEMP TABLE scratch (x)", "schema"),
        (WRITE_DOOR, "CREATE TEMPORARY TABLE stolen AS SELECT * FROM secrets", "schema"),
        (WRITE_DOOR, "CREATE TEMP VIEW peek AS SELECT * FROM secrets", "schema"),
        (READ_DOOR, "SELECT * FROM temp.sqlite_master", "read"),
        # --- triggers ---------------------------------------------------------------------------
        (
            WRITE_DOOR,
            "CREATE TRIGGER wipe AFTER INSERT ON notes BEGIN DELETE FROM secrets; END",
            "schema",
        ),
        (
            WRITE_DOOR,
            "CREATE TEMP TRIGGER wipe AFTER INSERT ON notes BEGIN DELETE FROM secrets; END",
            "schema",
        ),
        (WRITE_DOOR, "DROP TRIGGER notes_ai", "schema"),
        # A CTE named after a world trigger or view gets no exemption.
        (READ_DOOR, "WITH notes_ai AS (SELECT * FROM secrets) SELECT * FROM notes_ai", "read"),
        (WRITE_DOOR, "WITH notes_ai AS (SELECT * FROM secrets) SELECT * FROM notes_ai", "read"),
        (
            READ_DOOR,
            "WITH secret_view AS (SELECT s FROM secrets) SELECT * FROM secret_view",
            "read",
        ),
        (
            WRITE_DOOR,
            "WITH notes_ai AS (SELECT s FROM secrets) "
            "INSERT INTO notes (id, body) SELECT s, s FROM notes_ai",
            "read",
        ),
        # --- other tables, by any spelling ------------------------------------------------------
        (READ_DOOR, "SELECT * FROM secrets", "read"),
        (READ_DOOR, "SELECT * FROM main.secrets", "read"),
        (READ_DOOR, 'SELECT * FROM "SECRETS"', "read"),
        (READ_DOOR, "SELECT count(*) FROM secrets", "read"),
        (READ_DOOR, "SELECT * FROM secret_view", "read"),
        (READ_DOOR, "SELECT (SELECT s FROM secrets LIMIT 1)", "read"),
        (READ_DOOR, "SELECT * FROM notes WHERE id IN (SELECT s FROM secrets)", "read"),
        (READ_DOOR, "SELECT * FROM notes JOIN secrets", "read"),
        (READ_DOOR, "SELECT value FROM json_each((SELECT group_concat(s) FROM secrets))", "read"),
        (READ_DOOR, "EXPLAIN SELECT * FROM secrets", "read"),
        (WRITE_DOOR, "INSERT INTO secrets (s) VALUES ('planted')", "write"),
        (WRITE_DOOR, "UPDATE notes SET body = (SELECT s FROM secrets LIMIT 1)", "read"),
        (WRITE_DOOR, "DELETE FROM notes RETURNING (SELECT s FROM secrets LIMIT 1)", "read"),
        (WRITE_DOOR, "REPLACE INTO notes (id, body) SELECT s, s FROM secrets", "read"),
        # --- writes through a read-only door ----------------------------------------------------
        (READ_DOOR, "INSERT INTO notes (id, body) VALUES ('x', 'y')", "write"),
        (READ_DOOR, "UPDATE notes SET body = 'x'", "write"),
        (READ_DOOR, "DELETE FROM notes", "write"),
        (READ_DOOR, "INSERT INTO notes SELECT * FROM notes RETURNING *", "write"),
        # --- huge values ------------------------------------------------------------------------
        (READ_DOOR, "SELECT randomblob(2000000000)", LIMIT),
        (READ_DOOR, f"SELECT zeroblob({sandbox.MAX_VALUE_BYTES + 1})", LIMIT),
        (READ_DOOR, "SELECT printf('%.*c', 5000000, 'x')", LIMIT),
        (READ_DOOR, "SELECT replace(hex(zeroblob(600000)), '0', 'ab')", LIMIT),
        (
            READ_DOOR,
            "WITH RECURSIVE c(n, s) AS (SELECT 1, 'x' UNION ALL SELECT n + 1, s || s FROM c "
            "WHERE n < 40) SELECT length(s) FROM c",
            LIMIT,
        ),
        (
            READ_DOOR,
            "SELECT group_concat(hex(randomblob(1000))) FROM (WITH RECURSIVE c(n) AS "
            "(SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000) SELECT n FROM c)",
            LIMIT,
        ),
        (
            WRITE_DOOR,
            "INSERT INTO notes (id, body) VALUES ('big', hex(zeroblob(999999)))",
            LIMIT,
        ),
        (READ_DOOR, " " * (sandbox.MAX_SQL_BYTES + 10) + "SELECT 1", LIMIT),
        # Text that is not UTF-8 could never be read back, by anyone.
        (WRITE_DOOR, "INSERT INTO notes (id, body) VALUES ('bad', CAST(x'ff' AS TEXT))", ERROR),
        (WRITE_DOOR, "UPDATE notes SET body = x'c328' || ''", ERROR),
        (READ_DOOR, "SELECT CAST(x'ff' AS TEXT)", ERROR),
        (READ_DOOR, "SELECT " + "(" * 5000 + "1" + ")" * 5000, ERROR),
        # --- runaway queries --------------------------------------------------------------------
        (READ_DOOR, count_forever + "SELECT count(*) FROM c", LIMIT),
        (
            READ_DOOR,
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n FROM c) SELECT max(n) FROM c",
            LIMIT,
        ),
        (READ_DOOR, count_forever + "SELECT n FROM c", LIMIT),
        (
            READ_DOOR,
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100000) "
            "SELECT count(*) FROM c AS a, c AS b",
            LIMIT,
        ),
        (WRITE_DOOR, count_forever + "INSERT INTO counters (n) SELECT n FROM c", LIMIT),
        # --- several statements, and comments hiding one ----------------------------------------
        (READ_DOOR, "SELECT 1; SELECT 2", STATEMENTS),
        (WRITE_DOOR, "SELECT 1; DROP TABLE notes", STATEMENTS),
        (WRITE_DOOR, "SELECT 1 /* ; */ ; DELETE FROM notes", STATEMENTS),
        (WRITE_DOOR, "SELECT 1 -- harmless\n; DELETE FROM notes", STATEMENTS),
        (WRITE_DOOR, "SELECT ';' ; DELETE FROM notes", STATEMENTS),
        (WRITE_DOOR, "SELECT '/*'; DELETE FROM notes; SELECT '*/'", STATEMENTS),
        (WRITE_DOOR, 'SELECT "x;"; DELETE FROM notes', STATEMENTS),
        (WRITE_DOOR, "SELECT 1 -- ; DELETE FROM notes", OK),
        (WRITE_DOOR, "SELECT 1 /* ; DELETE FROM notes */", OK),
        (READ_DOOR, "SELECT 1;;;", OK),
        (READ_DOOR, "", STATEMENTS),
        (READ_DOOR, "-- nothing but a comment", STATEMENTS),
        (WRITE_DOOR, "SELECT 1\x00; DELETE FROM notes", ERROR),
        # --- transaction control ----------------------------------------------------------------
        (READ_DOOR, "BEGIN", "transaction"),
        (WRITE_DOOR, "BEGIN IMMEDIATE", "transaction"),
        (WRITE_DOOR, "COMMIT", "transaction"),
        (WRITE_DOOR, "ROLLBACK", "transaction"),
        (WRITE_DOOR, "SAVEPOINT held", "transaction"),
        (WRITE_DOOR, "RELEASE held", "transaction"),
        (WRITE_DOOR, "END", "transaction"),
        # --- harmless: what the doors are for ---------------------------------------------------
        (READ_DOOR, "SELECT id, body FROM notes ORDER BY id", OK),
        (READ_DOOR, "SELECT sql FROM sqlite_master WHERE name = 'notes'", OK),
        (
            READ_DOOR,
            "SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'harbour' ORDER BY rank",
            OK,
        ),
        (READ_DOOR, "SELECT * FROM json_tree('{\"a\": [1, 2]}')", OK),
        (READ_DOOR, "SELECT count(*) FROM json_each('[1, 2]')", OK),
        (
            READ_DOOR,
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 9) "
            "SELECT count(*) FROM c",
            OK,
        ),
        (READ_DOOR, "SELECT random(), randomblob(16), unlikely(1), typeof(1)", OK),
        (READ_DOOR, "EXPLAIN QUERY PLAN SELECT * FROM notes", OK),
        (READ_DOOR, "SELECT * FROM boxes", OK),
        (WRITE_DOOR, "UPDATE notes SET body = body WHERE 0", OK),
    ]


def make_world(work_dir: Path) -> seahaven.World:
    world = seahaven.World(
        name="vault",
        version="1.0.0",
        schema=SCHEMA,
        state_format="seahaven.state/1",
        work_dir=work_dir,
        untracked_tables=["counters"],
    )
    world.tool(
        seahaven.sql_tools.run_sql(
            name=READ_DOOR, tables=["notes", "notes_fts", "boxes"], functions=["match"]
        )
    )
    world.tool(
        seahaven.sql_tools.run_sql(name=WRITE_DOOR, tables=["notes", "counters"], read_only=False)
    )
    return world


def snapshot(root: Path, skip: Path | None) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` outside ``skip``: its size and modification time."""
    found: dict[str, tuple[int, int]] = {}
    for folder, subfolders, files in os.walk(root):
        if skip is not None and (Path(folder) == skip or skip in Path(folder).parents):
            subfolders[:] = []
            continue
        for name in files:
            stat = (Path(folder) / name).stat()
            found[str(Path(folder) / name)] = (stat.st_size, stat.st_mtime_ns)
    return found


def store_contents(inst: seahaven.Instance) -> dict[str, Any]:
    reader = inst.inspect()
    tables = reader.rows("SELECT type, name, sql FROM sqlite_schema ORDER BY name")
    rows = {
        name: reader.rows(f'SELECT * FROM "{name}" ORDER BY 1')
        for name in ("notes", "secrets", "counters", "boxes")
    }
    return {"schema": tables, "rows": rows}


def settings(inst: seahaven.Instance) -> dict[str, Any]:
    conn = inst.db.conn
    return {
        "foreign_keys": conn.execute("PRAGMA foreign_keys").fetchall(),
        "journal_mode": conn.execute("PRAGMA journal_mode").fetchall(),
        # SQLite opens a connection's own temp database when a statement names it,
        # refused or not; it must stay empty, and nothing else may be attached.
        "databases": [row[1] for row in conn.execute("PRAGMA database_list") if row[1] != "temp"],
        "temp_objects": conn.execute("SELECT count(*) FROM temp.sqlite_master").fetchall(),
        "authorizer": conn.authorizer,
        "defensive": conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, -1),
        "triggers": conn.config(apsw.SQLITE_DBCONFIG_ENABLE_TRIGGER, -1),
        "sql_length": conn.limit(apsw.SQLITE_LIMIT_SQL_LENGTH, -1),
        "length": conn.limit(apsw.SQLITE_LIMIT_LENGTH, -1),
    }


@pytest.fixture
def sandbox_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory holding the world's instances and serving as the working directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sandbox, "STATEMENT_SECONDS", 0.5)
    yield tmp_path


def outcome(inst: seahaven.Instance, door: str, statement: str) -> tuple[str, str]:
    try:
        inst.call(door, query=statement)
    except seahaven.DbError as error:
        assert error.message, f"{statement!r}: a refusal with no message"
        if error.refusals:
            return sandbox.refusal_kind(error.refusals[0]), error.message
        if "STATEMENT_SECONDS" in error.message or "MAX_VALUE_BYTES" in error.message:
            return LIMIT, error.message
        if "MAX_RESULT_BYTES" in error.message or "MAX_SQL_BYTES" in error.message:
            return LIMIT, error.message
        if "one SQL statement" in error.message or "more than one statement" in error.message:
            return STATEMENTS, error.message
        return ERROR, error.message
    return OK, ""


def test_the_corpus_is_refused_or_harmless_and_leaves_nothing_behind(sandbox_dir: Path) -> None:
    statements = corpus(sandbox_dir)
    assert len(statements) >= 80
    world = make_world(sandbox_dir / "work")
    with world.instance(seed=3) as inst:
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO notes (id, body) VALUES ('n1', 'harbour lights')")
            ctx.db.execute("INSERT INTO secrets (s) VALUES ('the vault code is 0451')")
            ctx.db.execute("INSERT INTO boxes (id, x0, x1) VALUES (1, 0.0, 2.0)")
        # An instance in memory has no directory: every file under the sandbox is watched.
        instance_dir = inst.state_path.parent if inst.storage == "disk" else None
        before_files = snapshot(sandbox_dir, instance_dir)
        before_store = store_contents(inst)
        before_settings = settings(inst)
        before_log = inst.change_log()
        wrong = []
        for door, statement, expected in statements:
            got, message = outcome(inst, door, statement)
            allowed = expected if isinstance(expected, set) else {expected}
            if got not in allowed:
                wrong.append(
                    f"{door}: {statement[:90]!r}: expected {expected}, got {got}: {message}"
                )
            # Whatever happened, the instance answers the next call.
            assert inst.call(READ_DOOR, query="SELECT count(*) AS n FROM notes")["rows"] == [[1]]
        assert not wrong, "\n".join(wrong)
        assert snapshot(sandbox_dir, instance_dir) == before_files
        assert store_contents(inst) == before_store
        assert settings(inst) == before_settings
        assert not any(sandbox_dir.glob("escape*"))
        # And the eval's view of it is the same as before: no call changed a row.
        assert inst.change_log() == before_log
