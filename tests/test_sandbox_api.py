"""``seahaven.sandbox``'s public containment API, and the doors that share it.

``Authorizer``, ``run_statement``, ``SqlResult``, ``refusal_kind`` and the limits, used
directly as an extension serving another SQL dialect would; then ``setup_sql`` and
the control tool, which run their statements through the same mechanism.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import apsw
import pytest
from sample_worlds import memo_world

import seahaven
from seahaven import sandbox
from seahaven.sandbox import (
    ALLOWED_FUNCTIONS,
    REFUSALS,
    Authorizer,
    Refused,
    SqlResult,
    refusal_kind,
    run_statement,
)

SCHEMA = """
CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL) STRICT;
CREATE TABLE audit (id INTEGER PRIMARY KEY, memo TEXT NOT NULL, n INTEGER NOT NULL) STRICT;
CREATE TABLE hidden (id TEXT PRIMARY KEY) STRICT;
CREATE TRIGGER memos_audit AFTER INSERT ON memos BEGIN
    INSERT INTO audit (memo, n) VALUES (new.id, total_changes());
END;
"""


def connection(tmp_path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(tmp_path / "store.sqlite"))
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
    for _ in conn.execute(SCHEMA):
        pass
    conn.execute("INSERT INTO hidden (id) VALUES ('h1')")
    return conn


def test_the_kinds_of_refusal() -> None:
    assert {"read", "write", "function", "schema", "pragma", "attach", "transaction", "action"} == (
        REFUSALS
    )
    assert refusal_kind("read of table 'secrets'") == "read"
    assert refusal_kind("detach of database 'main'") == "attach"
    assert refusal_kind(Refused("pragma", "user_version", "pragma user_version")) == "pragma"
    with pytest.raises(ValueError, match="not a refusal"):
        refusal_kind("not authorized")


def test_an_authorizer_defaults_to_reading_with_the_default_functions() -> None:
    policy = Authorizer(["memos"])
    assert policy.read_only is True
    assert policy.functions == ALLOWED_FUNCTIONS
    assert policy.may_read("main", "MEMOS")
    assert policy.may_read("main", "sqlite_schema") and policy.may_read("main", "json_each")
    assert not policy.may_read("main", "hidden")
    assert not policy.may_read("other", "memos")
    assert Authorizer(["other.memos"]).may_read("other", "memos")


@pytest.mark.parametrize(
    "options",
    [{"tables": "memos"}, {"tables": [""]}, {"tables": ["memos"], "read_only": 1}],
)
def test_an_authorizer_refuses_options_that_cannot_work(options: dict[str, Any]) -> None:
    with pytest.raises(seahaven.WorldBug):
        Authorizer(**options)


def test_run_statement_on_a_bare_connection_and_its_result(tmp_path: Path) -> None:
    conn = connection(tmp_path)
    policy = Authorizer(["memos", "audit"], read_only=False)
    written = run_statement(
        conn,
        "INSERT INTO memos (id, gist) VALUES (?, ?) RETURNING id",
        ("m1", "x"),
        authorizer=policy,
    )
    assert isinstance(written, SqlResult)
    assert (written.columns, written.rows, written.row_count, written.truncated) == (
        ["id"],
        [["m1"]],
        1,
        False,
    )
    # The world's trigger ran as written, total_changes() and all.
    read = run_statement(conn, "SELECT memo FROM audit", authorizer=Authorizer(["audit"]))
    assert read.rows == [["m1"]]
    assert read.to_dict() == {
        "columns": ["memo"],
        "rows": [["m1"]],
        "row_count": 1,
        "truncated": False,
    }


def test_run_statement_takes_a_db_too(tmp_path: Path) -> None:
    world = memo_world(work_dir=tmp_path / "work")
    with world.instance() as inst:
        result = run_statement(
            inst.db, "SELECT count(*) FROM memos", authorizer=Authorizer(["memos"])
        )
        assert result.rows == [[0]]


def test_a_refusal_is_classified_by_what_the_authorizer_recorded(tmp_path: Path) -> None:
    conn = connection(tmp_path)
    policy = Authorizer(["memos"])
    cases = {
        "SELECT * FROM hidden": "read",
        "DELETE FROM memos": "write",
        "SELECT load_extension('x')": "function",
        "CREATE INDEX g ON memos (gist)": "schema",
        "PRAGMA user_version": "pragma",
        "ATTACH ':memory:' AS other": "attach",
        "SAVEPOINT held": "transaction",
        "VACUUM": "action",
    }
    for statement, kind in cases.items():
        with pytest.raises(seahaven.DbError) as refused:
            run_statement(conn, statement, authorizer=policy)
        assert [refusal_kind(refusal) for refusal in refused.value.refusals][:1] == [kind]
        assert refused.value.message.startswith("not authorized: ")


def test_the_authorizer_and_limits_are_put_back_after_every_statement(tmp_path: Path) -> None:
    conn = connection(tmp_path)

    def standing(*args: Any) -> int:
        return apsw.SQLITE_OK

    conn.authorizer = standing
    length = conn.limit(apsw.SQLITE_LIMIT_LENGTH, -1)
    run_statement(conn, "SELECT 1", authorizer=Authorizer(["memos"]))
    with pytest.raises(seahaven.DbError):
        run_statement(conn, "SELECT * FROM hidden", authorizer=Authorizer(["memos"]))
    assert conn.authorizer is standing
    assert conn.limit(apsw.SQLITE_LIMIT_LENGTH, -1) == length
    # A statement the world prepared before is not reused under the agent's name.
    conn.authorizer = None
    assert conn.execute("SELECT id FROM hidden").fetchall() == [("h1",)]
    with pytest.raises(seahaven.DbError, match="hidden"):
        run_statement(conn, "SELECT id FROM hidden", authorizer=Authorizer(["memos"]))


def test_a_runaway_statement_is_stopped_within_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "STATEMENT_SECONDS", 0.2)
    conn = connection(tmp_path)
    forever = (
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"
    )
    with pytest.raises(seahaven.DbError, match=r"STATEMENT_SECONDS") as stopped:
        run_statement(conn, forever, authorizer=Authorizer(["memos"]))
    assert "0.2 seconds" in stopped.value.message
    assert run_statement(conn, "SELECT 1", authorizer=Authorizer([])).rows == [[1]]


def test_a_result_past_max_result_bytes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "MAX_RESULT_BYTES", 100)
    conn = connection(tmp_path)
    rows = (
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 50) "
        "SELECT n FROM c"
    )
    with pytest.raises(seahaven.DbError, match="MAX_RESULT_BYTES"):
        run_statement(conn, rows, authorizer=Authorizer([]))
    assert run_statement(conn, rows, authorizer=Authorizer([]), max_rows=5).truncated


def test_vacuum_into_writes_no_file(tmp_path: Path) -> None:
    conn = connection(tmp_path)
    target = tmp_path / "copy.sqlite"
    for statement in (f"VACUUM INTO '{target}'", f"-- tidy\nvacuum into '{target}'"):
        with pytest.raises(seahaven.DbError, match="VACUUM"):
            run_statement(conn, statement, authorizer=Authorizer(["memos"], read_only=False))
    assert not target.exists()


def test_a_cte_named_after_a_trigger_is_held_to_the_policy(tmp_path: Path) -> None:
    conn = connection(tmp_path)
    policy = Authorizer(["memos", "audit"], read_only=False)
    with pytest.raises(seahaven.DbError) as refused:
        run_statement(
            conn,
            "WITH memos_audit AS (SELECT id FROM hidden) "
            "INSERT INTO memos (id, gist) SELECT id, id FROM memos_audit",
            authorizer=policy,
        )
    assert refused.value.refusals == ("read of table 'hidden'",)
    with pytest.raises(seahaven.DbError, match="total_changes"):
        run_statement(
            conn,
            "WITH memos_audit AS (SELECT total_changes()) SELECT * FROM memos_audit",
            authorizer=policy,
        )


def test_the_control_tool_runs_through_the_same_containment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "STATEMENT_SECONDS", 0.2)
    world = memo_world(schema=SCHEMA, work_dir=tmp_path / "work")

    def control(inst: seahaven.Instance, query: str) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return inst.call("controller_run_sql", query=query)

    with world.instance(control_tools=True) as inst:
        assert control(inst, "SELECT count(*) FROM hidden")["rows"] == [[0]]
        assert control(inst, "PRAGMA table_info(memos)")["row_count"] == 2
        for statement, kind in (
            ("SELECT load_extension('x')", "function"),
            ("ATTACH ':memory:' AS other", "attach"),
            ("INSERT INTO memos (id, gist) VALUES ('m', 'g')", "write"),
            ("PRAGMA foreign_keys = OFF", "pragma"),
            (f"VACUUM INTO '{tmp_path / 'copy.sqlite'}'", "action"),
        ):
            with pytest.raises(seahaven.DbError) as refused:
                control(inst, statement)
            assert refusal_kind(refused.value.refusals[0]) == kind, statement
        with pytest.raises(seahaven.DbError, match="STATEMENT_SECONDS"):
            control(
                inst,
                "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n FROM c) SELECT max(n) FROM c",
            )
        with pytest.raises(seahaven.DbError, match="holds 2 statements"):
            control(inst, "SELECT 1; SELECT 2")
        assert control(inst, "SELECT 1 AS one") == {
            "columns": ["one"],
            "rows": [[1]],
            "row_count": 1,
        }
    assert not (tmp_path / "copy.sqlite").exists()


def test_setup_sql_holds_a_cte_named_after_a_trigger_to_the_allowlist(tmp_path: Path) -> None:
    world = memo_world(schema=SCHEMA, work_dir=tmp_path / "work")
    with pytest.raises(seahaven.WorldBug, match=r"total_changes\(\), which is not in"):
        world.instance(
            setup_sql="WITH memos_audit AS (SELECT total_changes() AS n) "
            "INSERT INTO memos (id, gist) SELECT n, n FROM memos_audit"
        )
    # The world's own trigger still runs as written.
    with world.instance(setup_sql="INSERT INTO memos (id, gist) VALUES ('m1', 'g')") as inst:
        assert inst.inspect().rows("SELECT memo FROM audit") == [{"memo": "m1"}]


def test_a_second_statement_the_splitter_missed_never_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = connection(tmp_path)
    conn.execute("INSERT INTO memos (id, gist) VALUES ('m1', 'kept')")
    # Pretend the tokenizer saw one statement where SQLite sees two.
    monkeypatch.setattr(sandbox, "split_statements", lambda sql: [sql])
    policy = Authorizer(["memos"], read_only=False)
    with pytest.raises(seahaven.DbError, match="more than one statement"):
        run_statement(conn, "SELECT 1; DELETE FROM memos", authorizer=policy)
    assert conn.execute("SELECT id FROM memos").fetchall() == [("m1",)]


def test_text_that_is_not_utf8_is_never_stored_and_never_half_written(tmp_path: Path) -> None:
    conn = connection(tmp_path)
    policy = Authorizer(["memos", "audit"], read_only=False)
    with pytest.raises(seahaven.DbError, match="not valid UTF-8 in memos"):
        run_statement(
            conn,
            "INSERT INTO memos (id, gist) VALUES ('ok', 'fine'), ('bad', CAST(x'ff' AS TEXT))",
            authorizer=policy,
        )
    # Outside any transaction too, the statement's writes (and its trigger's) are undone.
    assert conn.execute("SELECT count(*) FROM memos").fetchall() == [(0,)]
    assert conn.execute("SELECT count(*) FROM audit").fetchall() == [(0,)]
    assert not conn.in_transaction
    with pytest.raises(seahaven.DbError, match="not valid UTF-8"):
        run_statement(conn, "SELECT CAST(x'ff' AS TEXT)", authorizer=policy)


@pytest.mark.usefixtures("on_disk")
def test_setup_sql_may_not_store_text_that_is_not_utf8(tmp_path: Path) -> None:
    world = memo_world(schema=SCHEMA, work_dir=tmp_path / "work")
    with pytest.raises(seahaven.WorldBug, match=r"statement 1 of 1 .*not valid UTF-8"):
        world.instance(setup_sql="INSERT INTO memos (id, gist) VALUES ('m', CAST(x'ff' AS TEXT))")
    assert list((tmp_path / "work").iterdir()) == []
