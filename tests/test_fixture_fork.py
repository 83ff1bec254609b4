"""Forking: an instance of a fixture, changed and frozen under a new id."""

from __future__ import annotations

from pathlib import Path

import pytest
from sample_worlds import OPENING, add_jot, memo_ids, memo_world, till_world

import seahaven
from seahaven import fixtures

NOW = OPENING
LATER = "2031-05-02T17:15:00.000Z"


def forkable(fixtures_dir: Path) -> seahaven.World:
    """A memo world with ``jot``, freezing into ``fixtures_dir``."""
    world = memo_world(fixtures_dir=fixtures_dir)
    add_jot(world)
    return world


def test_a_fork_records_its_parent_and_the_parents_now(tmp_path: Path) -> None:
    world = forkable(tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.call("jot", id="m1", gist="first")
        parent = inst.freeze("base", "A single memo.")
    parent_bytes = parent.state_path.read_bytes()

    with world.instance("base", clock_mode="fixed") as inst:
        inst.call("jot", id="m2", gist="second")
        fork = inst.freeze("base_plus_one", "The base memo and a second one.")

    assert fork.parent_id == "base"
    assert fork.now == parent.now == NOW
    assert fork.file_sha256 != parent.file_sha256
    # The parent is untouched, and both open as what they say.
    assert parent.state_path.read_bytes() == parent_bytes
    fixtures.verify(fixtures.load(parent.directory))
    with world.instance("base") as inst:
        assert memo_ids(inst) == ["m1"]
    with world.instance("base_plus_one") as inst:
        assert memo_ids(inst) == ["m1", "m2"]
        # The fork's own change is starting state now, not this instance's history.
        assert inst.change_log() == []


def test_a_fork_started_later_records_the_later_now(tmp_path: Path) -> None:
    world = forkable(tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.freeze("base", "Nothing.")
    with world.instance("base", now=LATER, clock_mode="fixed") as inst:
        fork = inst.freeze("later", "Nothing, a little later.")
    assert fork.now == LATER
    assert fork.parent_id == "base"


def test_a_chain_of_forks_names_each_parent(tmp_path: Path) -> None:
    world = forkable(tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.freeze("a", "Empty.")
    with world.instance("a", clock_mode="fixed") as inst:
        inst.call("jot", id="m1", gist="one")
        inst.freeze("b", "A single memo.")
    with world.instance("b", clock_mode="fixed") as inst:
        inst.call("jot", id="m2", gist="two")
        inst.freeze("c", "Two memos.")
    parents = {fixture.id: fixture.parent_id for fixture in world.fixtures()}
    assert parents == {"a": None, "b": "a", "c": "b"}


def test_a_fork_cannot_take_its_parents_id(tmp_path: Path) -> None:
    world = forkable(tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        parent = inst.freeze("base", "Nothing.")
    with world.instance("base") as inst:
        inst.call("jot", id="m1", gist="sneaked in")
        with pytest.raises(seahaven.WorldBug, match="already exists"):
            inst.freeze("base", "An in-place edit, which is not allowed.")
    assert fixtures.load(parent.directory) == parent
    fixtures.verify(parent)


def test_a_composite_fork_keeps_every_node(tmp_path: Path) -> None:
    host = forkable(tmp_path / "fixtures")
    host.add_world(till_world(), name="till")
    with host.instance(now=NOW, clock_mode="fixed") as inst:
        with inst.bulk() as loading:
            loading.worlds.till.db.execute("INSERT INTO receipts (id, cents) VALUES ('r1', 5)")
        parent = inst.freeze("corner_shop", "One receipt on the till.")
    with host.instance("corner_shop", clock_mode="fixed") as inst:
        with inst.bulk() as loading:
            loading.worlds.till.db.execute("INSERT INTO receipts (id, cents) VALUES ('r2', 7)")
        fork = inst.freeze("corner_shop_two", "Two receipts on the till.")

    assert fork.format_version == 2
    assert fork.parent_id == "corner_shop"
    assert fork.now == parent.now
    assert [node.path for node in fork.nodes] == ["till"]
    assert fork.nodes[0].file_sha256 != parent.nodes[0].file_sha256
    with host.instance("corner_shop_two") as inst:
        total = inst.inspect().one("SELECT sum(cents) AS total FROM till.receipts")
    assert total == {"total": 12}
    with host.instance("corner_shop") as inst:
        total = inst.inspect().one("SELECT sum(cents) AS total FROM till.receipts")
    assert total == {"total": 5}
