"""The SQL reading behind the schema rules: the clock, where a CREATE is, the failing statement."""

from __future__ import annotations

from pathlib import Path

import pytest

from seahaven.check.schema_db import _pinpoint
from seahaven.check.sqltext import find_create, wall_clock_expressions


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("CREATE TABLE t (at TEXT DEFAULT CURRENT_TIMESTAMP)", ["CURRENT_TIMESTAMP"]),
        ("CREATE TABLE t (d TEXT DEFAULT current_date)", ["CURRENT_DATE"]),
        ("CREATE TABLE t (d TEXT DEFAULT (CURRENT_TIME))", ["CURRENT_TIME"]),
        ("CREATE VIEW v AS SELECT datetime('now') AS at", ["'now'"]),
        ("CREATE VIEW v AS SELECT datetime('NOW', '+1 day')", ["'NOW'"]),
        ("CREATE VIEW v AS SELECT unixepoch() AS at", ["unixepoch()"]),
        ("CREATE VIEW v AS SELECT julianday() - julianday(x) FROM t", ["julianday()"]),
        ("CREATE VIEW v AS SELECT strftime('%s') AS at", ["strftime(...)"]),
        ("CREATE INDEX i ON t (x) WHERE x > date()", ["date()"]),
    ],
)
def test_every_spelling_of_the_clock_is_found(sql: str, expected: list[str]) -> None:
    assert wall_clock_expressions(sql) == expected


@pytest.mark.parametrize(
    "sql",
    [
        # Comments and strings that merely contain the words are not the clock.
        "CREATE TABLE t (at TEXT NOT NULL) -- DEFAULT CURRENT_TIMESTAMP was removed",
        "CREATE TABLE t (at TEXT NOT NULL /* datetime('now') */)",
        "CREATE TABLE t (note TEXT DEFAULT 'CURRENT_TIMESTAMP')",
        "CREATE TABLE t (note TEXT DEFAULT 'right now')",
        # A quoted identifier is a name, not the keyword.
        'CREATE TABLE t ("current_timestamp" TEXT)',
        # Date functions given a time value read that value, not the clock.
        "CREATE VIEW v AS SELECT date(at), strftime('%Y', at), julianday(at) FROM t",
    ],
)
def test_what_only_looks_like_the_clock_is_not_reported(sql: str) -> None:
    assert wall_clock_expressions(sql) == []


def test_a_check_allowing_the_string_now_is_the_documented_false_positive() -> None:
    sql = "CREATE TABLE t (id TEXT PRIMARY KEY, due TEXT CHECK (due IN ('now', 'later')))"
    assert wall_clock_expressions(sql) == ["'now'"]


def test_create_is_found_however_the_name_is_spelled(tmp_path: Path) -> None:
    first = tmp_path / "001_a.sql"
    first.write_text(
        "-- CREATE TABLE items (a commented-out draft)\n"
        "\n"
        'create table if not exists main."Items" (\n'
        "  id TEXT PRIMARY KEY\n"
        ") STRICT;\n"
        "CREATE UNIQUE INDEX [by title] ON items (id);\n",
        encoding="utf-8",
    )
    second = tmp_path / "002_b.sql"
    second.write_text(
        "CREATE VIEW everything AS SELECT * FROM items;\n"
        "CREATE TEMP TRIGGER stamp AFTER INSERT ON items BEGIN SELECT 1; END;\n",
        encoding="utf-8",
    )
    files = [first, second]
    assert find_create(files, "table", "items") == (first, 3)
    assert find_create(files, "index", "by title") == (first, 6)
    assert find_create(files, "view", "EVERYTHING") == (second, 1)
    assert find_create(files, "trigger", "stamp") == (second, 2)
    # The kind must match too: there is no table called everything.
    assert find_create(files, "table", "everything") is None
    assert find_create(files, "table", "missing") is None


def test_the_failing_statement_is_pinpointed_in_filename_order(tmp_path: Path) -> None:
    first = tmp_path / "001_a.sql"
    first.write_text(
        "CREATE TABLE a (id TEXT PRIMARY KEY) STRICT;\n"
        "\n"
        "-- the next statement is fine on its own\n"
        "CREATE TABLE b (\n"
        "  id TEXT PRIMARY KEY,\n"
        "  a_id TEXT REFERENCES a (id)\n"
        ") STRICT;\n",
        encoding="utf-8",
    )
    second = tmp_path / "002_b.sql"
    second.write_text(
        "CREATE TABLE c (\n  id TEXT PRIMARY KEY,\n  size NUMBERISH\n) STRICT;\n",
        encoding="utf-8",
    )
    failure = _pinpoint([first, second])
    assert failure is not None
    assert (failure.path, failure.line) == (second, 1)
    # SQLite gives no offset for this one, so the statement's first line is the answer.
    assert failure.message == 'unknown datatype for c.size: "NUMBERISH"'


def test_a_syntax_error_is_pinpointed_to_its_own_line(tmp_path: Path) -> None:
    schema = tmp_path / "001_a.sql"
    schema.write_text(
        "CREATE TABLE a (\n  id TEXT PRIMARY KEY,\n  title TEXT NOT NULL,\n) STRICT;\n",
        encoding="utf-8",
    )
    failure = _pinpoint([schema])
    assert failure is not None
    assert failure.line == 4
    assert failure.message == 'near ")": syntax error'


def test_a_schema_that_runs_is_not_pinpointed(tmp_path: Path) -> None:
    schema = tmp_path / "001_a.sql"
    # The last statement has no semicolon, which SQLite accepts.
    schema.write_text("CREATE TABLE a (id TEXT PRIMARY KEY) STRICT", encoding="utf-8")
    assert _pinpoint([schema]) is None
