"""``seahaven.sql_tools``: ``run_sql`` and ``describe_schema``, registered by a world as its own.

The results and errors an agent sees, the truncation policy, writes that commit
with the call, the registration checks, and a composite world whose SQL door only
reaches its own store.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from sample_worlds import cafe_world, till_world

import seahaven
from seahaven import sandbox
from seahaven.sql_tools import describe_schema, run_sql

SCHEMA = """
CREATE TABLE teams (id TEXT PRIMARY KEY, name TEXT NOT NULL) STRICT;
CREATE TABLE people (
    id TEXT PRIMARY KEY,
    team TEXT REFERENCES teams,
    name TEXT NOT NULL,
    photo BLOB
) STRICT;
CREATE TABLE shifts (
    person TEXT NOT NULL,
    day TEXT NOT NULL,
    team TEXT NOT NULL,
    PRIMARY KEY (person, day),
    FOREIGN KEY (person) REFERENCES people (id),
    FOREIGN KEY (team) REFERENCES teams (id)
) STRICT;
CREATE TABLE payroll (id TEXT PRIMARY KEY, cents INTEGER NOT NULL) STRICT;
CREATE VIEW rota AS SELECT person, day FROM shifts;
CREATE VIRTUAL TABLE people_fts USING fts5 (name, content = 'people', content_rowid = 'rowid');
CREATE TRIGGER people_ai AFTER INSERT ON people BEGIN
    INSERT INTO people_fts (rowid, name) VALUES (new.rowid, new.name);
END;
"""

TABLES = ["teams", "people", "shifts"]


def make_world(tmp_path: Path, *tools: seahaven.Tool) -> seahaven.World:
    world = seahaven.World(
        name="staff",
        version="1.0.0",
        schema=SCHEMA,
        state_format="seahaven.state/1",
        work_dir=tmp_path / "work",
    )
    for tool in tools:
        world.tool(tool)
    return world


def seeded(inst: seahaven.Instance) -> None:
    with inst.bulk() as ctx:
        ctx.db.execute("INSERT INTO teams (id, name) VALUES ('t1', 'Harbour')")
        for number in range(1, 6):
            ctx.db.execute(
                "INSERT INTO people (id, team, name, photo) VALUES (?, 't1', ?, ?)",
                f"p{number}",
                f"Person {number}",
                bytes([number, 0, 255]),
            )
        ctx.db.execute("INSERT INTO payroll (id, cents) VALUES ('p1', 990000)")


def test_a_query_returns_columns_rows_the_count_and_whether_it_was_truncated(
    tmp_path: Path,
) -> None:
    with make_world(tmp_path, run_sql(tables=TABLES)).instance() as inst:
        seeded(inst)
        answer = inst.call("run_sql", query="SELECT id, name FROM people ORDER BY id LIMIT 2")
        assert answer == {
            "columns": ["id", "name"],
            "rows": [["p1", "Person 1"], ["p2", "Person 2"]],
            "row_count": 2,
            "truncated": False,
        }


def test_an_empty_result_still_names_its_columns(tmp_path: Path) -> None:
    with make_world(tmp_path, run_sql(tables=TABLES)).instance() as inst:
        answer = inst.call("run_sql", query="SELECT id AS who, name FROM people WHERE 0")
        assert answer["columns"] == ["who", "name"]
        assert answer["rows"] == [] and answer["row_count"] == 0


def test_a_blob_comes_back_as_base64_text(tmp_path: Path) -> None:
    with make_world(tmp_path, run_sql(tables=TABLES)).instance() as inst:
        seeded(inst)
        answer = inst.call("run_sql", query="SELECT photo FROM people WHERE id = 'p3'")
        assert answer["rows"] == [[base64.b64encode(bytes([3, 0, 255])).decode()]]


@pytest.mark.parametrize(
    ("limits", "rows", "truncated"),
    [
        ({}, 5, False),
        ({"max_rows": 5}, 5, False),
        ({"max_rows": 3}, 3, True),
        ({"max_rows": 1}, 1, True),
        # Each row is ["pN"] as JSON text: 6 bytes, and one for the separator.
        ({"max_bytes": 2 + 7 * 2}, 2, True),
        ({"max_bytes": 2 + 7 * 5}, 5, False),
        ({"max_rows": 4, "max_bytes": 2 + 7 * 2}, 2, True),
        ({"max_bytes": 3}, 0, True),
    ],
)
def test_the_worlds_truncation_policy(
    tmp_path: Path, limits: dict[str, int], rows: int, truncated: bool
) -> None:
    with make_world(tmp_path, run_sql(tables=TABLES, **limits)).instance() as inst:
        seeded(inst)
        answer = inst.call("run_sql", query="SELECT id FROM people ORDER BY id")
        assert answer["row_count"] == rows == len(answer["rows"])
        assert answer["truncated"] is truncated
        assert answer["rows"] == [[f"p{n}"] for n in range(1, rows + 1)]


def test_a_read_only_door_refuses_every_write(tmp_path: Path) -> None:
    with make_world(tmp_path, run_sql(tables=TABLES)).instance() as inst:
        seeded(inst)
        with pytest.raises(seahaven.DbError) as refused:
            inst.call("run_sql", query="UPDATE people SET name = 'x'")
        assert sandbox.refusal_kind(refused.value.refusals[0]) == "write"
        assert refused.value.to_dict()["details"]["refusals"] == list(refused.value.refusals)
        assert inst.inspect().one("SELECT name FROM people WHERE id = 'p1'") == {"name": "Person 1"}


def test_a_writable_door_commits_with_the_call_and_the_worlds_trigger_runs(
    tmp_path: Path,
) -> None:
    door = run_sql(tables=TABLES, read_only=False, functions=["match"])
    with make_world(tmp_path, door).instance() as inst:
        seeded(inst)
        answer = inst.call(
            "run_sql",
            query="INSERT INTO people (id, team, name) VALUES ('p9', 't1', 'Quay Keeper') "
            "RETURNING id",
        )
        assert answer["rows"] == [["p9"]]
        assert [(record.i, record.table, record.op) for record in inst.change_log()][-1] == (
            0,
            "people",
            "insert",
        )
        # The trigger kept the FTS5 index, which this door does not list, in step.
        found = inst.inspect().rows("SELECT rowid FROM people_fts WHERE people_fts MATCH 'quay'")
        assert len(found) == 1


def test_a_failing_write_leaves_nothing_and_shows_sqlites_message(tmp_path: Path) -> None:
    door = run_sql(tables=TABLES, read_only=False)
    with make_world(tmp_path, door).instance() as inst:
        seeded(inst)
        with pytest.raises(seahaven.DbError) as failed:
            inst.call(
                "run_sql",
                query="INSERT INTO people (id, team, name) VALUES ('p10', 't1', 'a'), "
                "('p1', 't1', 'duplicate')",
            )
        assert failed.value.message == "UNIQUE constraint failed: people.id"
        assert failed.value.refusals == ()
        assert inst.inspect().one("SELECT count(*) AS n FROM people") == {"n": 5}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("SELEC id FROM people", 'near "SELEC": syntax error'),
        ("SELECT nope FROM people", "no such column: nope"),
        ("SELECT * FROM nowhere", "no such table: nowhere"),
        ("SELECT id FROM people WHERE id = ?", "Incorrect number of bindings"),
    ],
)
def test_the_agent_reads_sqlites_own_message(tmp_path: Path, query: str, message: str) -> None:
    with make_world(tmp_path, run_sql(tables=TABLES)).instance() as inst:
        with pytest.raises(seahaven.DbError) as failed:
            inst.call("run_sql", query=query)
        assert message in failed.value.message
        assert failed.value.code == "db_error"


def test_a_refusal_names_what_was_refused_and_what_the_door_reads(tmp_path: Path) -> None:
    with make_world(tmp_path, run_sql(tables=TABLES)).instance() as inst:
        with pytest.raises(seahaven.DbError) as refused:
            inst.call("run_sql", query="SELECT cents FROM payroll")
        error = refused.value
        assert error.refusals == ("read of table 'payroll'",)
        assert error.message == (
            "not authorized: read of table 'payroll'; the tables this door may use are: "
            "teams, people, shifts"
        )


def test_a_view_is_read_with_the_tables_it_reads(tmp_path: Path) -> None:
    only_view = run_sql(name="view_sql", tables=["rota"])
    with_tables = run_sql(name="rota_sql", tables=["rota", "shifts"])
    with make_world(tmp_path, only_view, with_tables).instance() as inst:
        with pytest.raises(seahaven.DbError, match="read of table 'shifts'"):
            inst.call("view_sql", query="SELECT * FROM rota")
        assert inst.call("rota_sql", query="SELECT * FROM rota")["rows"] == []


def test_exactly_one_statement_per_call(tmp_path: Path) -> None:
    with make_world(tmp_path, run_sql(tables=TABLES)).instance() as inst:
        with pytest.raises(seahaven.DbError, match="holds 2 statements"):
            inst.call("run_sql", query="SELECT 1; SELECT 2")
        with pytest.raises(seahaven.DbError, match="holds no statement"):
            inst.call("run_sql", query="  -- nothing  ")
        assert inst.call("run_sql", query="SELECT 1 -- ; SELECT 2")["rows"] == [[1]]


def test_random_draws_from_the_instances_seeded_stream(tmp_path: Path) -> None:
    world = make_world(tmp_path, run_sql(tables=TABLES))

    def draw(seed: int) -> list[list[Any]]:
        with world.instance(seed=seed) as inst:
            rows: list[list[Any]] = inst.call(
                "run_sql", query="SELECT random(), hex(randomblob(8))"
            )["rows"]
            return rows

    assert draw(1) == draw(1)
    assert draw(1) != draw(2)


def test_an_fts5_table_listed_with_the_match_function_can_be_searched(tmp_path: Path) -> None:
    door = run_sql(tables=["people", "people_fts"], functions=["match", "bm25"])
    with make_world(tmp_path, door).instance() as inst:
        seeded(inst)
        answer = inst.call(
            "run_sql",
            query="SELECT people.id FROM people JOIN people_fts ON people.rowid = people_fts.rowid"
            " WHERE people_fts MATCH 'person AND 4' ORDER BY bm25(people_fts)",
        )
        assert answer["rows"] == [["p4"]]
    without = run_sql(tables=["people", "people_fts"])
    with make_world(tmp_path, without).instance() as inst:
        with pytest.raises(seahaven.DbError) as refused:
            inst.call("run_sql", query="SELECT rowid FROM people_fts WHERE people_fts MATCH 'x'")
        assert sandbox.refusal_kind(refused.value.refusals[0]) == "function"


def test_the_listings_of_both_helpers(tmp_path: Path) -> None:
    world = make_world(
        tmp_path,
        run_sql(tables=TABLES),
        describe_schema(tables=TABLES),
        run_sql(name="console", tables=["teams"], description="The admin console."),
    )
    with world.instance() as inst:
        listed = {tool["name"]: tool for tool in inst.tools()}
    query_schema = listed["run_sql"]["input_schema"]
    assert query_schema["required"] == ["query"]
    assert list(query_schema["properties"]) == ["query"]
    assert query_schema["properties"]["query"]["type"] == "string"
    assert "teams, people, shifts" in listed["run_sql"]["description"]
    assert listed["describe_schema"]["input_schema"]["properties"] == {}
    assert listed["console"]["description"] == "The admin console."


def test_describe_schema_reads_columns_and_foreign_keys_from_the_live_schema(
    tmp_path: Path,
) -> None:
    tool = describe_schema(tables=["shifts", "people", "rota"])
    with make_world(tmp_path, tool).instance() as inst:
        described = inst.call("describe_schema")
    shifts, people, rota = described["tables"]
    assert shifts == {
        "name": "shifts",
        "columns": [
            {"name": "person", "type": "TEXT", "nullable": False, "primary_key": True},
            {"name": "day", "type": "TEXT", "nullable": False, "primary_key": True},
            {"name": "team", "type": "TEXT", "nullable": False, "primary_key": False},
        ],
        "foreign_keys": [
            {"columns": ["team"], "references_table": "teams", "references_columns": ["id"]},
            {"columns": ["person"], "references_table": "people", "references_columns": ["id"]},
        ],
    }
    assert people["columns"][1] == {
        "name": "team",
        "type": "TEXT",
        "nullable": True,
        "primary_key": False,
    }
    # REFERENCES teams with no column list is the parent's primary key.
    assert people["foreign_keys"] == [
        {"columns": ["team"], "references_table": "teams", "references_columns": ["id"]}
    ]
    assert [column["name"] for column in rota["columns"]] == ["person", "day"]
    assert rota["foreign_keys"] == []


def test_describe_schema_names_a_table_the_schema_lacks(tmp_path: Path) -> None:
    world = make_world(tmp_path, describe_schema(tables=["teams", "ghosts"]))
    with world.instance() as inst, pytest.raises(seahaven.WorldBug, match="'ghosts'"):
        inst.call("describe_schema")


@pytest.mark.parametrize(
    ("factory", "options", "fix"),
    [
        (run_sql, {"tables": "people"}, "list of table names"),
        (run_sql, {"tables": []}, "lists no table"),
        (run_sql, {"tables": ["main.people"]}, "without a schema"),
        (run_sql, {"tables": [""]}, "each entry is a table name"),
        (run_sql, {"tables": ["people", "PEOPLE"]}, "more than once"),
        (run_sql, {"tables": ["people"], "max_rows": 0}, "max_rows"),
        (run_sql, {"tables": ["people"], "max_rows": True}, "max_rows"),
        (run_sql, {"tables": ["people"], "max_bytes": 10**12}, "MAX_RESULT_BYTES"),
        (run_sql, {"tables": ["people"], "read_only": "yes"}, "read_only"),
        (run_sql, {"tables": ["people"], "functions": "match"}, "list of function names"),
        (describe_schema, {"tables": []}, "lists no table"),
        (describe_schema, {"tables": ["x.people"]}, "without a schema"),
    ],
)
def test_a_helper_refuses_what_cannot_work_naming_the_fix(
    factory: Any, options: dict[str, Any], fix: str
) -> None:
    with pytest.raises(seahaven.WorldBug, match=fix):
        factory(**options)


def test_a_composites_door_reaches_only_its_own_store(tmp_path: Path) -> None:
    till = till_world()
    till.tool(run_sql(name="till_sql", tables=["receipts"]))
    cafe = cafe_world(till, work_dir=tmp_path / "work")
    cafe.tool(run_sql(name="cafe_sql", tables=["tabs"]))
    with cafe.instance() as inst:
        inst.call("settle_tab", cents=450)
        assert inst.call("cafe_sql", query="SELECT cents FROM tabs")["rows"] == [[450]]
        with pytest.raises(seahaven.DbError, match=r"no such table: till\.receipts"):
            inst.call("cafe_sql", query="SELECT * FROM till.receipts")
        # The till's own door, contributed to the surface, reads the till's store.
        names = [tool["name"] for tool in inst.tools()]
        till_door = next(name for name in names if name.endswith("till_sql"))
        assert inst.call(till_door, query="SELECT cents FROM receipts")["rows"] == [[450]]


def test_a_write_of_text_that_is_not_utf8_is_refused_and_the_document_stays_readable(
    tmp_path: Path,
) -> None:
    door = run_sql(tables=TABLES, read_only=False)
    with make_world(tmp_path, door).instance() as inst:
        seeded(inst)
        with pytest.raises(seahaven.DbError, match="not valid UTF-8"):
            inst.call("run_sql", query="UPDATE people SET name = CAST(x'ff' AS TEXT)")
        assert inst.inspect().one("SELECT name FROM people WHERE id = 'p1'") == {"name": "Person 1"}
        assert inst.state()["call_count"] == 1
