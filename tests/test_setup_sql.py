"""``setup_sql``: per-episode row changes, run before the startup hooks and held to rows only."""

from pathlib import Path
from typing import Any

import pytest
from sample_worlds import OPENING, cafe_world, memo_world, till_world

import seahaven
from seahaven.sandbox import ALLOWED_FUNCTIONS

SCHEMA = """
CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL, filed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE counters (id INTEGER PRIMARY KEY AUTOINCREMENT, value INTEGER NOT NULL);
CREATE TABLE owners (id TEXT PRIMARY KEY);
CREATE TABLE pets (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL REFERENCES owners (id) DEFERRABLE INITIALLY DEFERRED
);
CREATE TABLE stamps (id TEXT PRIMARY KEY, at TEXT NOT NULL, token);

CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
CREATE VIRTUAL TABLE docs_fts USING fts5(body, content='docs', content_rowid='id');
CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
    INSERT INTO docs_fts (rowid, body) VALUES (new.id, new.body);
END;
CREATE VIRTUAL TABLE boxes USING rtree(id, x0, x1);
CREATE TRIGGER docs_au AFTER UPDATE ON docs BEGIN
    INSERT INTO docs_fts (docs_fts, rowid, body) VALUES ('delete', old.id, old.body);
    INSERT INTO docs_fts (rowid, body) VALUES (new.id, new.body);
END;
"""


def make_world(tmp_path: Path, **options: Any) -> seahaven.World:
    """A memo world kept under ``tmp_path/work``, so a test can see what an instance left."""
    world = memo_world(schema=SCHEMA, work_dir=tmp_path / "work", **options)

    @world.instance_startup
    def count_what_setup_wrote(ctx: seahaven.Ctx) -> None:
        counted = ctx.db.one("SELECT count(*) AS n FROM memos")
        assert counted is not None
        ctx.state["seen_by_hook"] = counted["n"]

    @world.tool
    def seen_by_hook(ctx: seahaven.Ctx) -> int:
        """The memo count the startup hook found."""
        return int(ctx.state["seen_by_hook"])

    @world.tool
    def file_away(ctx: seahaven.Ctx, id: str) -> None:
        """Mark one memo as filed."""
        ctx.db.execute("UPDATE memos SET filed = 1 WHERE id = ?", id)

    return world


def no_instance_left(tmp_path: Path) -> bool:
    """Whether the work directory holds no instance directory."""
    work = tmp_path / "work"
    return not work.exists() or list(work.iterdir()) == []


def rows(inst: seahaven.Instance, sql: str) -> list[dict[str, Any]]:
    """Rows read through the instance's read-only connection."""
    return inst.inspect().rows(sql)


def test_setup_sql_runs_before_the_startup_hooks_and_is_not_logged(tmp_path: Path) -> None:
    setup_sql = """
        INSERT INTO memos (id, gist) VALUES ('m1', 'Water the ferns');
        INSERT INTO memos (id, gist) VALUES ('m2', 'Ring the printer; ask about toner');
        UPDATE memos SET filed = 1 WHERE id = 'm1';
    """
    with make_world(tmp_path).instance(setup_sql=setup_sql) as inst:
        assert rows(inst, "SELECT id, gist, filed FROM memos ORDER BY id") == [
            {"id": "m1", "gist": "Water the ferns", "filed": 1},
            {"id": "m2", "gist": "Ring the printer; ask about toner", "filed": 0},
        ]
        assert inst.call("seen_by_hook") == 2
        assert inst.change_log() == []
        inst.call("file_away", id="m2")
        assert [(record.i, record.key) for record in inst.change_log()] == [(1, {"id": "m2"})]


def test_setup_sql_runs_after_the_fixture_is_copied(tmp_path: Path) -> None:
    world = make_world(tmp_path, fixtures_dir=tmp_path / "fixtures")
    with world.instance(now=OPENING, clock_mode="fixed") as maker:
        with maker.bulk() as loading:
            loading.db.execute("INSERT INTO memos (id, gist) VALUES ('m1', 'Water the ferns')")
        maker.freeze("unfiled", "A single memo, not filed yet.")
    setup_sql = (
        "UPDATE memos SET filed = 1 WHERE id = 'm1'; "
        "INSERT INTO memos (id, gist) VALUES ('m2', 'x')"
    )
    with world.instance("unfiled", setup_sql=setup_sql) as inst:
        assert rows(inst, "SELECT id, filed FROM memos ORDER BY id") == [
            {"id": "m1", "filed": 1},
            {"id": "m2", "filed": 0},
        ]
        assert inst.change_log() == []
        assert inst.state()["setup_sql"] == setup_sql
    # The fixture itself is untouched.
    with world.instance("unfiled") as plain:
        assert rows(plain, "SELECT id, filed FROM memos") == [{"id": "m1", "filed": 0}]


def test_setup_sql_is_one_transaction(tmp_path: Path) -> None:
    # The pet's owner arrives one statement later. A deferred foreign key only
    # allows that when both statements share a transaction.
    setup_sql = (
        "INSERT INTO pets (id, owner) VALUES ('rex', 'ann'); INSERT INTO owners (id) VALUES ('ann')"
    )
    with make_world(tmp_path).instance(setup_sql=setup_sql) as inst:
        assert rows(inst, "SELECT id, owner FROM pets") == [{"id": "rex", "owner": "ann"}]


def test_a_setup_that_breaks_a_deferred_constraint_is_a_world_bug(tmp_path: Path) -> None:
    setup_sql = "INSERT INTO pets (id, owner) VALUES ('rex', 'nobody')"
    with pytest.raises(seahaven.WorldBug, match="setup_sql") as refused:
        make_world(tmp_path).instance(setup_sql=setup_sql)
    assert "FOREIGN KEY" in str(refused.value)
    assert no_instance_left(tmp_path)


def test_setup_sql_and_the_document_keep_the_string_as_given(tmp_path: Path) -> None:
    setup_sql = "  -- a comment\n  INSERT INTO memos (id, gist) VALUES ('m1', 'x') ;;\n\n"
    world = make_world(tmp_path)
    with world.instance(setup_sql=setup_sql) as inst:
        assert inst.setup_sql == setup_sql
        assert inst.state()["setup_sql"] == setup_sql
        assert rows(inst, "SELECT id FROM memos") == [{"id": "m1"}]
    with world.instance(setup_sql="") as empty:
        assert empty.setup_sql == ""
        assert empty.state()["setup_sql"] == ""
    with world.instance() as none:
        assert none.setup_sql is None
        assert none.state()["setup_sql"] is None


def test_setup_sql_must_be_a_string(tmp_path: Path) -> None:
    statements: Any = ["INSERT INTO memos (id, gist) VALUES ('a', 'b')"]
    with pytest.raises(seahaven.WorldBug, match="setup_sql must be a string"):
        make_world(tmp_path).instance(setup_sql=statements)
    assert no_instance_left(tmp_path)


def test_random_in_setup_sql_replays_with_the_same_seed(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    setup_sql = (
        "INSERT INTO stamps (id, at, token) VALUES ('a', 'x', random());"
        "INSERT INTO stamps (id, at, token) VALUES ('b', 'x', randomblob(8))"
    )
    select = "SELECT id, token FROM stamps ORDER BY id"

    def tokens(seed: int) -> list[dict[str, Any]]:
        with world.instance(seed=seed, setup_sql=setup_sql) as inst:
            return rows(inst, select)

    first = tokens(5)
    assert tokens(5) == first
    assert tokens(6) != first
    assert isinstance(first[0]["token"], int) and isinstance(first[1]["token"], bytes)


def test_clock_functions_in_setup_sql_read_the_instance_clock(tmp_path: Path) -> None:
    setup_sql = "INSERT INTO stamps (id, at) VALUES ('a', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"
    world = make_world(tmp_path)
    with world.instance(now=OPENING, clock_mode="fixed", setup_sql=setup_sql) as inst:
        assert rows(inst, "SELECT at FROM stamps") == [{"at": OPENING}]


def test_allowed_reads_functions_and_reporting_pragmas_pass(tmp_path: Path) -> None:
    setup_sql = """
        PRAGMA table_info(memos);
        PRAGMA foreign_key_check;
        SELECT count(*) FROM memos;
        INSERT INTO memos (id, gist) SELECT 'm' || value, upper(json_extract('{"a": "x"}', '$.a'))
            FROM (SELECT 1 AS value UNION ALL SELECT 2);
        INSERT INTO counters (value) VALUES (abs(-3));
        UPDATE memos SET gist = printf('%s!', gist) WHERE id = 'm1';
        INSERT INTO stamps (id, at, token) VALUES ('blob', 'x', X'ff00');
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3)
            INSERT INTO counters (value) SELECT x * 10 FROM c;
    """
    with make_world(tmp_path).instance(setup_sql=setup_sql) as inst:
        assert rows(inst, "SELECT id, gist FROM memos ORDER BY id") == [
            {"id": "m1", "gist": "X!"},
            {"id": "m2", "gist": "X"},
        ]
        assert rows(inst, "SELECT value FROM counters ORDER BY id") == [
            {"value": 3},
            {"value": 10},
            {"value": 20},
            {"value": 30},
        ]
        assert rows(inst, "SELECT token FROM stamps") == [{"token": b"\xff\x00"}]


def test_rows_written_into_an_fts5_indexed_table_through_triggers_work(tmp_path: Path) -> None:
    setup_sql = (
        "INSERT INTO docs (id, body) VALUES (1, 'harbour lights'), (2, 'quiet fields');"
        "UPDATE docs SET body = 'harbour walls' WHERE id = 2"
    )
    with make_world(tmp_path).instance(setup_sql=setup_sql) as inst:
        found = rows(
            inst, "SELECT rowid FROM docs_fts WHERE docs_fts MATCH 'harbour' ORDER BY rowid"
        )
        assert found == [{"rowid": 1}, {"rowid": 2}]
        assert rows(inst, "SELECT rowid FROM docs_fts WHERE docs_fts MATCH 'quiet'") == []


def test_rows_written_into_an_rtree_work_and_its_shadow_tables_stay_shut(tmp_path: Path) -> None:
    setup_sql = (
        "INSERT INTO boxes (id, x0, x1) VALUES (1, 0.0, 2.0);"
        "INSERT INTO stamps (id, at) SELECT id, x1 FROM boxes"
    )
    with make_world(tmp_path).instance(setup_sql=setup_sql) as inst:
        assert rows(inst, "SELECT id, at FROM stamps") == [{"id": "1", "at": "2.0"}]
    with pytest.raises(
        seahaven.WorldBug, match=r"statement 1 of 1 .*boxes_node may not be modified"
    ):
        make_world(tmp_path).instance(setup_sql="DELETE FROM boxes_node")
    assert no_instance_left(tmp_path)


def test_a_commented_statement_writing_an_fts5_indexed_table_works(tmp_path: Path) -> None:
    setup_sql = "-- one document\nINSERT INTO docs (id, body) VALUES (1, 'harbour lights');"
    with make_world(tmp_path).instance(setup_sql=setup_sql) as inst:
        found = rows(inst, "SELECT rowid FROM docs_fts WHERE docs_fts MATCH 'harbour'")
        assert found == [{"rowid": 1}]


def test_a_worlds_own_trigger_is_not_held_to_the_allowlist(tmp_path: Path) -> None:
    # The trigger calls total_changes(), which setup_sql itself may not call.
    assert "total_changes" not in ALLOWED_FUNCTIONS
    audited = seahaven.World(
        name="audited",
        version="1.0.0",
        schema="""
            CREATE TABLE memos (id TEXT PRIMARY KEY);
            CREATE TABLE audit (id INTEGER PRIMARY KEY, memo TEXT NOT NULL, n INTEGER NOT NULL);
            CREATE TRIGGER memos_audit AFTER INSERT ON memos BEGIN
                INSERT INTO audit (memo, n) VALUES (new.id, total_changes());
            END;
        """,
        state_format="seahaven.state/1",
        work_dir=tmp_path / "work",
    )
    with audited.instance(setup_sql="INSERT INTO memos (id) VALUES ('m1')") as inst:
        assert [row["memo"] for row in rows(inst, "SELECT memo FROM audit")] == ["m1"]
    with pytest.raises(seahaven.WorldBug, match=r"total_changes\(\), which is not in"):
        audited.instance(setup_sql="INSERT INTO memos (id) SELECT total_changes()")
    assert no_instance_left(tmp_path)


REFUSED = [
    # schema changes
    ("CREATE TABLE extra (id INTEGER PRIMARY KEY)", "schema"),
    ("CREATE INDEX memos_gist ON memos (gist)", "schema"),
    ("CREATE VIEW unfiled AS SELECT * FROM memos", "schema"),
    ("CREATE TRIGGER t AFTER INSERT ON memos BEGIN SELECT 1; END", "schema"),
    ("CREATE TEMP TABLE scratch (id INTEGER)", "schema"),
    ("DROP TABLE memos", "schema"),
    ("ALTER TABLE memos ADD COLUMN extra TEXT", "schema"),
    ("REINDEX", "schema"),
    ("ANALYZE", "schema"),
    # transaction control
    ("BEGIN", "transaction"),
    ("COMMIT", "transaction"),
    ("ROLLBACK", "transaction"),
    ("SAVEPOINT sp", "transaction"),
    ("RELEASE sp", "transaction"),
    # other databases
    ("ATTACH DATABASE ':memory:' AS other", "attach"),
    ("DETACH DATABASE main", "attach"),
    # pragmas that do more than report
    ("PRAGMA foreign_keys = OFF", "PRAGMA"),
    ("PRAGMA user_version", "PRAGMA"),
    ("PRAGMA user_version = 3", "PRAGMA"),
    ("PRAGMA journal_mode", "PRAGMA"),
    ("PRAGMA writable_schema = ON", "PRAGMA"),
    # functions outside the allowlist
    ("SELECT load_extension('anything')", "ALLOWED_FUNCTIONS"),
    ("SELECT changes()", "ALLOWED_FUNCTIONS"),
    ("SELECT sqlite_compileoption_used('THREADSAFE')", "ALLOWED_FUNCTIONS"),
    ("SELECT rowid FROM docs_fts WHERE docs_fts MATCH 'harbour'", "match"),
    ("SELECT highlight(docs_fts, 0, '[', ']') FROM docs_fts", "ALLOWED_FUNCTIONS"),
    # table-valued functions
    ("SELECT * FROM json_each('[1, 2]')", "table-valued"),
    ("SELECT * FROM pragma_table_info('memos')", "table-valued"),
    (
        'INSERT INTO memos (id, gist) SELECT key, value FROM json_each(\'{"a": "b"}\')',
        "table-valued",
    ),
    # FTS5's shadow tables and SQLite's own tables
    ("DELETE FROM docs_fts_data", "shadow"),
    ("INSERT INTO docs_fts_idx (segid, term, pgno) VALUES (1, 'x', 1)", "shadow"),
    ("UPDATE docs_fts_config SET v = 1", "shadow"),
    ("DELETE FROM sqlite_sequence", "SQLite's own"),
    ("INSERT INTO sqlite_sequence (name, seq) VALUES ('counters', 99)", "SQLite's own"),
]


@pytest.mark.parametrize(("statement", "reason"), REFUSED, ids=[s for s, _ in REFUSED])
def test_a_refused_statement_is_a_world_bug_naming_its_position(
    tmp_path: Path, statement: str, reason: str
) -> None:
    setup_sql = (
        "INSERT INTO memos (id, gist) VALUES ('m1', 'first');\n"
        "INSERT INTO counters (value) VALUES (1);\n"
        f"{statement};\n"
        "INSERT INTO memos (id, gist) VALUES ('m3', 'never');"
    )
    with pytest.raises(seahaven.WorldBug) as refused:
        make_world(tmp_path).instance(setup_sql=setup_sql)
    message = str(refused.value)
    assert "setup_sql statement 3 of 4" in message
    assert "refused" in message
    assert reason.lower() in message.lower()
    assert no_instance_left(tmp_path)


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO memos (id, gist) VALUES ('m1', 'duplicate key')",
        "INSERT INTO nowhere (id) VALUES (1)",
        "INSERT INTO memos (id) VALUES ('missing gist')",
        "THIS IS NOT SQL",
        # SQLite refuses this itself (writable_schema is off, and no pragma can turn it on).
        "UPDATE sqlite_schema SET sql = '' WHERE name = 'memos'",
    ],
)
def test_a_failing_statement_is_a_world_bug_naming_its_position(
    tmp_path: Path, statement: str
) -> None:
    setup_sql = f"INSERT INTO memos (id, gist) VALUES ('m1', 'first'); {statement}"
    with pytest.raises(seahaven.WorldBug, match=r"setup_sql statement 2 of 2 .* failed"):
        make_world(tmp_path).instance(setup_sql=setup_sql)
    assert no_instance_left(tmp_path)


def test_every_allowlisted_function_name_is_lower_case_and_excludes_the_dangerous_ones() -> None:
    assert all(name == name.lower() for name in ALLOWED_FUNCTIONS)
    assert {"random", "randomblob", "json_extract", "datetime"} <= ALLOWED_FUNCTIONS
    assert not {"match", "load_extension", "fts5", "highlight", "changes"} & ALLOWED_FUNCTIONS


def test_an_added_worlds_tables_are_written_under_its_schema_name(tmp_path: Path) -> None:
    cafe = cafe_world(till_world(), work_dir=tmp_path / "work")
    setup_sql = (
        "INSERT INTO tabs (id, cents) VALUES (7, 500);"
        "INSERT INTO till.receipts (id, cents) SELECT 'tab-' || id, cents FROM tabs"
    )
    with cafe.instance(setup_sql=setup_sql) as inst:
        assert rows(inst, "SELECT id, cents FROM till.receipts") == [{"id": "tab-7", "cents": 500}]
        assert inst.change_log() == []
    with pytest.raises(seahaven.WorldBug, match="statement 1 of 1"):
        cafe.instance(setup_sql="DETACH DATABASE till")
    assert no_instance_left(tmp_path)


def test_an_interrupt_while_setup_sql_is_prepared_is_reported_as_its_first_statements(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import apsw

    from seahaven import sandbox

    def interrupted(conn: Any) -> Any:
        raise apsw.InterruptError("interrupted")

    # An interrupt meant for the statements, landing while they are being prepared.
    monkeypatch.setattr(sandbox, "catalog", interrupted)
    with pytest.raises(seahaven.WorldBug) as raised:
        make_world(tmp_path).instance(setup_sql="INSERT INTO memos (id, gist) VALUES ('m', 'g')")
    assert "setup_sql statement 1 of 1" in str(raised.value)
    assert "was interrupted from another thread" in str(raised.value)
    assert no_instance_left(tmp_path)
