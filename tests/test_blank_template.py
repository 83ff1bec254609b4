"""Blank instances from a template: the schema built once per process, its bytes copied."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import seahaven
from seahaven.stores.schema import blank_image, describe

NOW = "2031-03-14T08:30:00.000Z"
TABLE = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT;"


def make_world(tmp_path: Path, schema: str, name: str = "template_world") -> seahaven.World:
    world = seahaven.World(
        name=name,
        version="1.0.0",
        schema=schema,
        state_format="seahaven.state/1",
        work_dir=tmp_path / "work",
    )

    @world.tool
    def rows(ctx: seahaven.Ctx, table: str) -> list[dict[str, Any]]:
        """Every row of a table."""
        return ctx.db.rows(f"SELECT * FROM {table} ORDER BY 1")

    @world.tool
    def add_note(ctx: seahaven.Ctx, body: str) -> int:
        """Insert a note."""
        return ctx.db.execute("INSERT INTO notes (body) VALUES (?)", body).last_rowid

    return world


def header_versions(file: Path) -> bytes:
    with open(file, "rb") as handle:
        return handle.read(100)[18:20]


@pytest.mark.usefixtures("on_disk")
def test_a_blank_instance_is_written_from_the_image_in_its_own_journal_mode(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path, TABLE)
    with world.instance(now=NOW) as inst:
        # Marked for the rollback journal a store starts with, so opening rewrites nothing.
        assert header_versions(inst.state_path) == b"\x01\x01"
        inst.call("add_note", body="first")
        assert inst.call("rows", table="notes") == [{"id": 1, "body": "first"}]
        assert inst.db.conn.pragma("journal_mode") == "memory"
        assert header_versions(inst.state_path) == b"\x01\x01"
        # No journal file beside it: the journal is in memory, the file this connection's.
        assert sorted(path.name for path in inst.directory.iterdir()) == ["state.sqlite"]
        assert describe(inst.db.conn).hash == world.schema_hash
        # A reader switches the store to the write-ahead log, for good.
        assert inst.inspect().rows("SELECT body FROM notes") == [{"body": "first"}]
        assert inst.db.conn.pragma("journal_mode") == "wal"
        assert header_versions(inst.state_path) == b"\x02\x02"


def test_the_image_is_built_once_per_schema_text(tmp_path: Path) -> None:
    schema = TABLE + "-- once"
    first = blank_image("a", schema)
    assert first is not None
    assert blank_image("b", schema) is first
    assert blank_image("a", schema + " ") is not first


def test_deterministic_rows_of_the_schema_are_in_the_image(tmp_path: Path) -> None:
    schema = TABLE + "INSERT INTO notes (body) VALUES ('from the schema');"
    assert blank_image("w", schema) is not None
    with make_world(tmp_path, schema).instance(now=NOW) as inst:
        assert inst.call("rows", table="notes") == [{"id": 1, "body": "from the schema"}]


@pytest.mark.parametrize(
    "expression",
    ["random()", "hex(randomblob(4))", "datetime('now')", "current_timestamp"],
)
def test_a_schema_whose_rows_read_the_clock_or_random_runs_per_instance(
    tmp_path: Path, expression: str
) -> None:
    schema = (
        "CREATE TABLE made (id INTEGER PRIMARY KEY, value ANY) STRICT;"
        f"INSERT INTO made (value) VALUES ({expression});"
    )
    assert blank_image("w", schema) is None
    world = make_world(tmp_path, TABLE + schema)
    values = []
    for seed, now in ((1, NOW), (2, "2032-01-01T00:00:00.000Z")):
        with world.instance(seed=seed, now=now, clock_mode="fixed") as inst:
            values.append(inst.call("rows", table="made")[0]["value"])
            # The same statement on a connection of its own gives the instance's own value.
            expected = inst.db.one(f"SELECT {expression} AS value")
            assert expected is not None
            if "random" not in expression:
                assert values[-1] == expected["value"]
    assert values[0] != values[1]


def test_seeded_rows_of_a_schema_repeat_for_the_same_seed(tmp_path: Path) -> None:
    schema = TABLE + "INSERT INTO notes (body) VALUES (hex(randomblob(8)));"
    world = make_world(tmp_path, schema)
    bodies = []
    for _ in range(2):
        with world.instance(seed=7, now=NOW) as inst:
            bodies.append(inst.call("rows", table="notes"))
    assert bodies[0] == bodies[1]


def test_a_schema_that_does_not_execute_keeps_no_image(tmp_path: Path) -> None:
    broken = TABLE + "INSERT INTO nowhere VALUES (1);"
    for _ in range(2):
        with pytest.raises(seahaven.WorldBug, match="does not execute"):
            blank_image("broken", broken)


def test_worlds_with_other_schemas_get_their_own_files(tmp_path: Path) -> None:
    one = make_world(tmp_path, TABLE, name="one")
    other = make_world(tmp_path, TABLE + "CREATE TABLE extra (id INTEGER PRIMARY KEY);", "other")
    with one.instance(now=NOW) as first, other.instance(now=NOW) as second:
        first.call("add_note", body="only here")
        assert second.call("rows", table="notes") == []
        assert second.call("rows", table="extra") == []
        with pytest.raises(seahaven.DbError):
            first.call("rows", table="extra")


def test_startup_hooks_still_run_on_each_blank_instance(tmp_path: Path) -> None:
    world = make_world(tmp_path, TABLE)

    @world.instance_startup
    def seed_note(ctx: seahaven.Ctx, *, body: str = "default") -> None:
        ctx.db.execute("INSERT INTO notes (body) VALUES (?)", body)

    with (
        world.instance(now=NOW, startup={"body": "one"}) as first,
        world.instance(now=NOW) as second,
    ):
        assert first.call("rows", table="notes") == [{"id": 1, "body": "one"}]
        assert second.call("rows", table="notes") == [{"id": 1, "body": "default"}]


@pytest.mark.usefixtures("on_disk")
def test_blank_instances_made_on_many_threads_at_once(tmp_path: Path) -> None:
    world = make_world(tmp_path, TABLE + "CREATE INDEX notes_by_body ON notes (body);")
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def make() -> None:
        try:
            start.wait()
            for index in range(5):
                with world.instance(now=NOW) as inst:
                    inst.call("add_note", body=f"n{index}")
                    assert inst.call("rows", table="notes") == [{"id": 1, "body": f"n{index}"}]
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert list((tmp_path / "work").iterdir()) == []
