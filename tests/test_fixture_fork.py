"""Forking: an instance of a fixture, changed and frozen under a new id."""

from __future__ import annotations

from pathlib import Path

import pytest

import seahaven
from seahaven import fixtures

NOW = "2026-06-01T09:00:00.000Z"
LATER = "2026-08-01T12:00:00.000Z"


def notes_world(fixtures_dir: Path) -> seahaven.World:
    world = seahaven.World(
        name="notes",
        version="1.0.0",
        schema="CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;",
        fixtures_dir=fixtures_dir,
        state_format="seahaven.state/1",
    )

    @world.tool
    def write_note(ctx: seahaven.Ctx, id: str, body: str) -> None:
        """Write one note."""
        ctx.db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", id, body)

    return world


def note_ids(inst: seahaven.Instance) -> list[str]:
    return [row["id"] for row in inst.inspect().rows("SELECT id FROM notes ORDER BY id")]


def test_a_fork_records_its_parent_and_the_parents_now(tmp_path: Path) -> None:
    world = notes_world(tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.call("write_note", id="n1", body="first")
        parent = inst.freeze("base", "One note.")
    parent_bytes = parent.state_path.read_bytes()

    with world.instance("base", clock_mode="fixed") as inst:
        inst.call("write_note", id="n2", body="second")
        fork = inst.freeze("base_plus_one", "The base note, and one more.")

    assert fork.parent_id == "base"
    assert fork.now == parent.now == NOW
    assert fork.file_sha256 != parent.file_sha256
    # The parent is untouched, and both open as what they say.
    assert parent.state_path.read_bytes() == parent_bytes
    fixtures.verify(fixtures.load(parent.directory))
    with world.instance("base") as inst:
        assert note_ids(inst) == ["n1"]
    with world.instance("base_plus_one") as inst:
        assert note_ids(inst) == ["n1", "n2"]
        # The fork's own change is starting state now, not this instance's history.
        assert inst.change_log() == []


def test_a_fork_started_later_records_the_later_now(tmp_path: Path) -> None:
    world = notes_world(tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.freeze("base", "Nothing.")
    with world.instance("base", now=LATER, clock_mode="fixed") as inst:
        fork = inst.freeze("later", "Nothing, a little later.")
    assert fork.now == LATER
    assert fork.parent_id == "base"


def test_a_chain_of_forks_names_each_parent(tmp_path: Path) -> None:
    world = notes_world(tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.freeze("a", "Empty.")
    with world.instance("a", clock_mode="fixed") as inst:
        inst.call("write_note", id="n1", body="one")
        inst.freeze("b", "One note.")
    with world.instance("b", clock_mode="fixed") as inst:
        inst.call("write_note", id="n2", body="two")
        inst.freeze("c", "Two notes.")
    parents = {fixture.id: fixture.parent_id for fixture in world.fixtures()}
    assert parents == {"a": None, "b": "a", "c": "b"}


def test_a_fork_cannot_take_its_parents_id(tmp_path: Path) -> None:
    world = notes_world(tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        parent = inst.freeze("base", "Nothing.")
    with world.instance("base") as inst:
        inst.call("write_note", id="n1", body="sneaked in")
        with pytest.raises(seahaven.WorldBug, match="already exists"):
            inst.freeze("base", "An in-place edit, which is not allowed.")
    assert fixtures.load(parent.directory) == parent
    fixtures.verify(parent)


def test_a_composite_fork_keeps_every_node(tmp_path: Path) -> None:
    payments = seahaven.World(
        name="payments",
        version="1.0.0",
        schema="CREATE TABLE charges (id TEXT PRIMARY KEY, amount INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )
    company = notes_world(tmp_path / "fixtures")
    company.add_world(payments, name="payments")
    with company.instance(now=NOW, clock_mode="fixed") as inst:
        with inst.bulk() as ctx:
            ctx.worlds.payments.db.execute("INSERT INTO charges (id, amount) VALUES ('c1', 5)")
        parent = inst.freeze("acme", "One charge.")
    with company.instance("acme", clock_mode="fixed") as inst:
        with inst.bulk() as ctx:
            ctx.worlds.payments.db.execute("INSERT INTO charges (id, amount) VALUES ('c2', 7)")
        fork = inst.freeze("acme_two", "Two charges.")

    assert fork.format_version == 2
    assert fork.parent_id == "acme"
    assert fork.now == parent.now
    assert [node.path for node in fork.nodes] == ["payments"]
    assert fork.nodes[0].file_sha256 != parent.nodes[0].file_sha256
    with company.instance("acme_two") as inst:
        total = inst.inspect().one("SELECT sum(amount) AS total FROM payments.charges")
    assert total == {"total": 12}
    with company.instance("acme") as inst:
        total = inst.inspect().one("SELECT sum(amount) AS total FROM payments.charges")
    assert total == {"total": 5}
