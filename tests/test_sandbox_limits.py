"""The limits on SQL the framework did not write: setup_sql, the eval's reader, the control tool.

Every way such SQL can go wrong ends in the framework's own error: a ``WorldBug`` for the
author's ``setup_sql``, a ``DbError`` for a reader or the agent's control tool. Nothing here
may leave an instance directory behind, and nothing here may run forever.
"""

from __future__ import annotations

import signal
import threading
import warnings
from pathlib import Path
from typing import Any

import apsw
import pytest
from sample_worlds import memo_world

import seahaven
from seahaven import sandbox

SCHEMA = """
CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL) STRICT;
CREATE TABLE tally (id INTEGER PRIMARY KEY, v INTEGER NOT NULL) STRICT;
CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE VIRTUAL TABLE docs_fts USING fts5(body, content='docs', content_rowid='id');
CREATE VIRTUAL TABLE loose_fts USING fts5(body, content='');
CREATE VIRTUAL TABLE notes_fts USING fts5(body);
CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
    INSERT INTO docs_fts (rowid, body) VALUES (new.id, new.body);
END;
"""

# Counts to a number large enough to run for many seconds, yet it ends.
LONG_COUNT = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < {n}) "


def make_world(tmp_path: Path) -> seahaven.World:
    return memo_world("contained", schema=SCHEMA, work_dir=tmp_path / "work")


def no_instance_left(tmp_path: Path) -> bool:
    work = tmp_path / "work"
    return not work.exists() or list(work.iterdir()) == []


def control(inst: seahaven.Instance, query: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return inst.call("controller_run_sql", query=query)


# --- 4: a reader cannot freeze its own view -------------------------------------------------------


@pytest.mark.parametrize(
    "statement", ["BEGIN", "BEGIN IMMEDIATE", "SAVEPOINT held", "COMMIT", "ROLLBACK", "END"]
)
def test_the_reader_refuses_transaction_control(tmp_path: Path, statement: str) -> None:
    with make_world(tmp_path).instance() as inst:
        reader = inst.inspect()
        with pytest.raises(seahaven.DbError) as refused:
            reader.rows(statement)
        assert "transaction" in refused.value.message
        assert not reader.in_transaction


def test_a_reader_that_tried_to_begin_still_sees_later_commits(tmp_path: Path) -> None:
    world = make_world(tmp_path)

    @world.tool
    def add_memo(ctx: seahaven.Ctx, id: str) -> None:
        """Add one memo."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, 'g')", id)

    with world.instance() as inst:
        reader = inst.inspect()
        with pytest.raises(seahaven.DbError):
            reader.rows("BEGIN")
        assert reader.rows("SELECT count(*) AS n FROM memos") == [{"n": 0}]
        inst.call("add_memo", id="m1")
        assert reader.rows("SELECT count(*) AS n FROM memos") == [{"n": 1}]


def test_the_control_tool_refuses_transaction_control(tmp_path: Path) -> None:
    with (
        make_world(tmp_path).instance(control_tools=True) as inst,
        pytest.raises(seahaven.DbError, match="transaction"),
    ):
        control(inst, "SAVEPOINT frozen")


# --- 5: a runaway setup_sql is stopped ------------------------------------------------------------


def test_a_setup_sql_past_its_time_limit_is_refused_naming_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "SETUP_SQL_SECONDS", 0.0)
    setup_sql = (
        "INSERT INTO memos (id, gist) VALUES ('m1', 'first');"
        + LONG_COUNT.format(n=10_000_000)
        + "INSERT INTO tally (v) SELECT count(*) FROM c"
    )
    with pytest.raises(seahaven.WorldBug) as refused:
        make_world(tmp_path).instance(setup_sql=setup_sql)
    message = str(refused.value)
    assert "setup_sql statement 2 of 2" in message
    assert "seahaven.sandbox.SETUP_SQL_SECONDS" in message
    assert no_instance_left(tmp_path)


def test_the_time_limit_has_a_default_and_a_short_setup_is_well_inside_it(
    tmp_path: Path,
) -> None:
    assert sandbox.SETUP_SQL_SECONDS > 0
    # As long as one statement of a SQL door: a runaway setup_sql holds a reset no longer.
    assert sandbox.SETUP_SQL_SECONDS == sandbox.STATEMENT_SECONDS
    setup_sql = LONG_COUNT.format(n=1000) + "INSERT INTO tally (v) SELECT count(*) FROM c"
    with make_world(tmp_path).instance(setup_sql=setup_sql) as inst:
        assert inst.inspect().rows("SELECT v FROM tally") == [{"v": 1000}]


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_ctrl_c_stops_a_runaway_setup_sql_and_leaves_nothing(tmp_path: Path) -> None:
    # Without the interrupt this would count for minutes; the signal arrives while it counts.
    count = "INSERT INTO tally (v) SELECT count(*) FROM c"
    setup_sql = LONG_COUNT.format(n=2_000_000_000) + count
    main = threading.get_ident()
    timer = threading.Timer(0.2, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            make_world(tmp_path).instance(setup_sql=setup_sql)
    finally:
        timer.cancel()
    assert no_instance_left(tmp_path)


# --- 6: raw exceptions become the framework's own -------------------------------------------------


def test_randomblob_past_the_value_limit_is_a_world_bug_in_setup_sql(tmp_path: Path) -> None:
    setup_sql = "INSERT INTO memos (id, gist) VALUES ('m1', hex(randomblob(300000000)))"
    with pytest.raises(seahaven.WorldBug) as refused:
        make_world(tmp_path).instance(setup_sql=setup_sql)
    assert "seahaven.sandbox.MAX_VALUE_BYTES" in str(refused.value)
    assert no_instance_left(tmp_path)


@pytest.mark.parametrize(
    "query",
    [
        f"SELECT randomblob({sandbox.MAX_VALUE_BYTES + 1}) AS b",
        f"SELECT zeroblob({sandbox.MAX_VALUE_BYTES + 1}) AS b",
        f"SELECT printf('%.*c', {sandbox.MAX_VALUE_BYTES + 1}, 'x') AS b",
    ],
)
def test_the_control_tool_refuses_a_value_past_max_value_bytes(tmp_path: Path, query: str) -> None:
    with make_world(tmp_path).instance(control_tools=True) as inst:
        with pytest.raises(seahaven.DbError) as refused:
            control(inst, query)
        assert refused.value.sqlite_code == apsw.SQLITE_TOOBIG
        # Just under the limit is fine.
        limit = str(sandbox.MAX_VALUE_BYTES - 1)
        smaller = query.replace(str(sandbox.MAX_VALUE_BYTES + 1), limit)
        assert control(inst, smaller)["row_count"] == 1


def test_setup_sql_refuses_a_value_past_max_value_bytes(tmp_path: Path) -> None:
    setup_sql = f"INSERT INTO memos (id, gist) VALUES ('m1', printf('%.*c', {2_000_000}, 'x'))"
    with pytest.raises(seahaven.WorldBug, match=r"MAX_VALUE_BYTES \(1000000 bytes\)"):
        make_world(tmp_path).instance(setup_sql=setup_sql)


def test_randomblob_larger_than_any_connection_allows_is_a_db_error(tmp_path: Path) -> None:
    with make_world(tmp_path).instance() as inst:
        # The eval's reader keeps SQLite's own limit (a billion bytes), not the sandbox's.
        with pytest.raises(seahaven.DbError) as refused:
            inst.inspect().one("SELECT randomblob(2000000000) AS b")
        assert refused.value.sqlite_code == apsw.SQLITE_TOOBIG
        drawn = inst.inspect().one("SELECT length(randomblob(300000)) AS n")
        assert drawn == {"n": 300000}


def test_randomblob_of_many_bytes_is_the_same_stream_every_run(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    blobs = []
    for _ in range(2):
        with world.instance(seed=11) as inst:
            row = inst.inspect().one("SELECT randomblob(600000) AS b")
            assert row is not None
            blobs.append(row["b"])
    assert blobs[0] == blobs[1]
    assert len(blobs[0]) == 600000


def test_a_nul_in_a_statement_is_a_db_error_on_the_reader(tmp_path: Path) -> None:
    with make_world(tmp_path).instance(control_tools=True) as inst:
        with pytest.raises(seahaven.DbError, match="NUL"):
            inst.inspect().rows("SELECT 1\x00")
        with pytest.raises(seahaven.DbError, match="NUL"):
            control(inst, "SELECT 1; \x00 SELECT 2")


def test_a_nul_in_setup_sql_is_a_world_bug_naming_where(tmp_path: Path) -> None:
    setup_sql = "INSERT INTO memos (id, gist) VALUES ('m1', 'a');\nSELECT '\x00'"
    offset = setup_sql.index("\x00")
    with pytest.raises(seahaven.WorldBug, match=rf"NUL character at offset {offset}"):
        make_world(tmp_path).instance(setup_sql=setup_sql)
    assert no_instance_left(tmp_path)


def test_an_integer_too_large_for_sqlite_is_a_db_error(tmp_path: Path) -> None:
    with make_world(tmp_path).instance() as inst:
        with pytest.raises(seahaven.DbError, match="64"):
            inst.inspect().one("SELECT ? AS n", 2**70)
        with pytest.raises(seahaven.DbError, match="64"):
            inst.db.execute("INSERT INTO tally (v) VALUES (?)", -(2**64))


# --- 7: a CTE is not a table-valued function ------------------------------------------------------


@pytest.mark.parametrize(
    "setup_sql",
    [
        "WITH x AS (SELECT 1 AS n) INSERT INTO tally (v) SELECT count(*) FROM x",
        "WITH x AS (SELECT 5 AS n) INSERT INTO tally (v) SELECT n FROM x",
        "WITH json_each AS (SELECT 7 AS value) INSERT INTO tally (v) SELECT value FROM json_each",
        "INSERT INTO tally (v) SELECT count(*) FROM (SELECT 1 UNION ALL SELECT 2)",
    ],
)
def test_a_statement_reading_a_cte_runs(tmp_path: Path, setup_sql: str) -> None:
    with make_world(tmp_path).instance(setup_sql=setup_sql) as inst:
        assert len(inst.inspect().rows("SELECT v FROM tally")) == 1


def test_a_real_table_valued_function_is_still_refused(tmp_path: Path) -> None:
    setup_sql = (
        "WITH x AS (SELECT value FROM json_each('[1]')) INSERT INTO tally (v) SELECT * FROM x"
    )
    with pytest.raises(seahaven.WorldBug, match="table-valued function json_each"):
        make_world(tmp_path).instance(setup_sql=setup_sql)


@pytest.mark.parametrize(
    ("setup_sql", "reason"),
    [
        ("WITH x AS (SELECT changes() AS n) INSERT INTO tally (v) SELECT n FROM x", "changes()"),
        (
            "WITH x AS (SELECT value AS v FROM json_each('[1]')) INSERT INTO tally (v) "
            "SELECT v FROM x",
            "json_each",
        ),
    ],
)
def test_what_a_cte_does_is_held_to_the_same_rules(
    tmp_path: Path, setup_sql: str, reason: str
) -> None:
    with pytest.raises(seahaven.WorldBug, match="refused") as refused:
        make_world(tmp_path).instance(setup_sql=setup_sql)
    assert reason in str(refused.value)


# --- 8: FTS5 commands and index-only tables -------------------------------------------------------


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO docs_fts (docs_fts) VALUES ('delete-all')",
        "INSERT INTO docs_fts (docs_fts, rowid, body) VALUES ('delete', 1, 'harbour')",
        "INSERT INTO docs_fts (rowid, body) VALUES (99, 'not in docs')",
        "DELETE FROM docs_fts",
        "INSERT INTO loose_fts (loose_fts) VALUES ('delete-all')",
    ],
)
def test_setup_sql_cannot_write_an_index_its_triggers_keep(tmp_path: Path, statement: str) -> None:
    setup_sql = f"INSERT INTO docs (id, body) VALUES (1, 'harbour'); {statement}"
    with pytest.raises(seahaven.WorldBug) as refused:
        make_world(tmp_path).instance(setup_sql=setup_sql)
    message = str(refused.value)
    assert "setup_sql statement 2 of 2" in message and "refused" in message
    assert "FTS5" in message
    assert no_instance_left(tmp_path)


def test_the_index_stays_in_step_with_what_setup_sql_may_write(tmp_path: Path) -> None:
    setup_sql = (
        "INSERT INTO docs (id, body) VALUES (1, 'harbour lights');"
        "INSERT INTO notes_fts (rowid, body) VALUES (5, 'an ordinary FTS5 table holds its rows')"
    )
    with make_world(tmp_path).instance(setup_sql=setup_sql) as inst:
        main = inst.db
        # FTS5 compares its index with the content table and raises if they disagree.
        main.execute("INSERT INTO docs_fts (docs_fts, rank) VALUES ('integrity-check', 1)")
        assert main.rows("SELECT rowid FROM docs_fts WHERE docs_fts MATCH 'harbour'") == [
            {"rowid": 1}
        ]
        assert main.rows("SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'rows'") == [
            {"rowid": 5}
        ]
