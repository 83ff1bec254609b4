"""The state document: the envelope the framework writes around a format's ``state``."""

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import seahaven

ENVELOPE = [
    "format",
    "seahaven_version",
    "world",
    "composition",
    "fixture",
    "episode_id",
    "seed",
    "now",
    "clock_mode",
    "startup",
    "setup_sql",
    "call_count",
    "state",
]
FORMATS = ["seahaven.state/1", "seahaven.state+last_step/1", "seahaven.state+calls/1"]

SCHEMA = """
CREATE TABLE memos (id TEXT PRIMARY KEY, gist TEXT NOT NULL, score REAL, data BLOB) STRICT;
"""


def make_world(**options: Any) -> seahaven.World:
    """A memo world at 2.1.0, with a startup hook and a tool that writes awkward values."""
    world = seahaven.World(
        name="memos",
        version="2.1.0",
        schema=SCHEMA,
        state_format="seahaven.state/1",
        **options,
    )

    @world.instance_startup
    def remember(
        ctx: seahaven.Ctx, *, as_of: dt.datetime | None = None, who: str | None = None
    ) -> None:
        seen_by_hook.append(as_of)
        ctx.state["who"] = who

    @world.tool
    def jot(ctx: seahaven.Ctx, id: str, gist: str) -> None:
        """File a memo with an infinite score and a blob, two values JSON finds awkward."""
        ctx.db.execute(
            "INSERT INTO memos (id, gist, score, data) VALUES (?, ?, 1e999, X'c0ffee')", id, gist
        )

    @world.tool
    def read_state(ctx: seahaven.Ctx) -> str:
        """Try to read the document from inside a call."""
        return str(held["instance"].state()["format"])

    return world


# What the startup hook was handed, and the instance a tool reaches for.
seen_by_hook: list[Any] = []
held: dict[str, Any] = {}


@pytest.fixture
def world() -> seahaven.World:
    """A new memo world, and the hook's record emptied."""
    seen_by_hook.clear()
    return make_world()


def test_the_envelope_holds_every_field_in_order(world: seahaven.World) -> None:
    as_of = dt.datetime(2026, 5, 31, 12, 30, tzinfo=dt.UTC)
    setup_sql = "INSERT INTO memos (id, gist) VALUES ('seed', 'from setup');\n"
    with world.instance(
        seed=7,
        now="2026-06-01T09:00:00Z",
        clock_mode="fixed",
        startup={"as_of": as_of, "who": "ann"},
        setup_sql=setup_sql,
    ) as inst:
        inst.call("jot", id="m1", gist="tea")
        document = inst.state()
        assert list(document) == ENVELOPE
        assert document["format"] == "seahaven.state/1"
        assert document["seahaven_version"] == seahaven.__version__
        assert document["world"] == {"name": "memos", "version": "2.1.0"}
        assert document["composition"] == {
            "main": {
                "world": "memos",
                "world_version": "2.1.0",
                "scope": None,
                "aliases": [],
                "schema_hash": world.schema_hash,
                "frozen_world_version": None,
            }
        }
        assert document["fixture"] is None
        assert document["episode_id"] == inst.id
        assert document["seed"] == 7
        assert document["now"] == "2026-06-01T09:00:00.000Z" == inst.clock.iso()
        assert document["clock_mode"] == "fixed"
        # The hook had the datetime itself; the document has its JSON rendering.
        assert seen_by_hook == [as_of]
        assert document["startup"] == {"as_of": "2026-05-31T12:30:00Z", "who": "ann"}
        assert document["setup_sql"] == setup_sql
        assert document["call_count"] == 1
        assert [entry["key"] for entry in document["state"]["db"]["log"]] == [{"id": "m1"}]


def test_a_bare_blank_instance_has_the_empty_defaults(world: seahaven.World) -> None:
    with world.instance() as inst:
        document = inst.state()
        assert list(document) == ENVELOPE
        assert document["fixture"] is None
        assert document["seed"] is None
        assert document["startup"] == {}
        assert document["setup_sql"] is None
        assert document["clock_mode"] == world.default_clock_mode == "running"
        assert document["call_count"] == 0
        assert document["state"] == {"db": {"log": []}}


def test_a_fixture_instance_names_the_fixture_and_each_nodes_file_hash(tmp_path: Path) -> None:
    world = make_world(fixtures_dir=tmp_path / "fixtures")
    with world.instance(now="2026-06-01T09:00:00Z", clock_mode="fixed") as maker:
        with maker.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('m1', 'frozen')")
        fixture = maker.freeze("one_memo", "A single memo.")
    with world.instance("one_memo") as inst:
        document = inst.state()
    digest = hashlib.sha256(fixture.state_path.read_bytes()).hexdigest()
    assert document["fixture"] == {"id": "one_memo", "nodes": {"main": {"file_sha256": digest}}}
    assert document["state"] == {"db": {"log": []}}


def test_producing_the_document_reads_the_clock_and_never_moves_it(world: seahaven.World) -> None:
    with world.instance(now="2026-06-01T09:00:00Z", clock_mode="tick") as inst:
        inst.call("jot", id="m1", gist="one")
        first = inst.state()
        second = inst.state()
        assert first["now"] == second["now"] == inst.clock.iso()
        assert first == second
        inst.call("jot", id="m2", gist="two")
        assert inst.state()["now"] > first["now"]


@pytest.mark.parametrize("format", FORMATS)
def test_every_built_in_document_is_json_with_no_encoder(
    world: seahaven.World, format: str
) -> None:
    with world.instance(
        startup={"as_of": dt.datetime(2026, 1, 1, tzinfo=dt.UTC)}, state_format=format
    ) as inst:
        inst.call("jot", id="ñ9", gist="crème")
        with inst.bulk() as ctx:
            ctx.db.execute("UPDATE memos SET data = X'00'")
        document = inst.state()
        assert document["format"] == format
        assert json.loads(json.dumps(document)) == document


def test_the_document_is_the_callers_to_edit(world: seahaven.World) -> None:
    with world.instance(startup={"who": "ann"}) as inst:
        inst.call("jot", id="m1", gist="tea")
        document = inst.state(format="seahaven.state+calls/1")
        document["state"]["db"]["log"][0]["after"]["gist"] = "edited"
        document["state"]["calls"][0]["arguments"]["id"] = "edited"
        document["startup"]["who"] = "mallory"
        document["composition"]["main"]["aliases"].append("edited")
        again = inst.state(format="seahaven.state+calls/1")
        assert again["state"]["db"]["log"][0]["after"]["gist"] == "tea"
        assert again["state"]["calls"][0]["arguments"]["id"] == "m1"
        assert again["startup"] == {"who": "ann"}
        assert again["composition"]["main"]["aliases"] == []
        assert inst.change_log()[0].after == {
            "id": "m1",
            "gist": "tea",
            "score": None,
            "data": "wP/u",
        }


def test_call_count_counts_every_dispatched_call_and_the_last_ordinal_is_one_less(
    world: seahaven.World,
) -> None:
    with world.instance() as inst:
        inst.call("jot", id="m1", gist="a")
        with pytest.raises(seahaven.DbError):
            inst.call("jot", id="m1", gist="duplicate")
        inst.call("jot", id="m2", gist="b")
        document = inst.state()
        assert document["call_count"] == 3
        assert document["state"]["db"]["log"][-1]["i"] == document["call_count"] - 1


def test_state_is_refused_inside_bulk(world: seahaven.World) -> None:
    with world.instance() as inst:
        with inst.bulk() as loading:
            loading.db.execute("INSERT INTO memos (id, gist) VALUES ('m1', 'bulk')")
            with pytest.raises(seahaven.WorldBug, match="inside a transaction"):
                inst.state()
        # The refusal did not spoil the block: it committed, and now the read works.
        assert [entry["i"] for entry in inst.state()["state"]["db"]["log"]] == [None]


def test_state_is_refused_inside_a_tool_call(world: seahaven.World) -> None:
    with world.instance() as inst:
        held["instance"] = inst
        try:
            with pytest.raises(seahaven.WorldBug, match="inside a transaction"):
                inst.call("read_state")
        finally:
            held.clear()
        assert inst.state()["call_count"] == 1


def test_state_on_a_destroyed_instance_is_refused(world: seahaven.World) -> None:
    inst = world.instance()
    inst.destroy()
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        inst.state()


def test_state_format_picks_another_format_and_leaves_the_instance_alone(
    world: seahaven.World,
) -> None:
    with world.instance() as inst:
        inst.call("jot", id="m1", gist="a")
        calls = inst.state(format="seahaven.state+calls/1")
        assert calls["format"] == "seahaven.state+calls/1"
        assert [entry["tool"] for entry in calls["state"]["calls"]] == ["jot"]
        assert inst.state_format == "seahaven.state/1"
        assert inst.state()["format"] == "seahaven.state/1"
        assert "calls" not in inst.state()["state"]
        with pytest.raises(seahaven.WorldBug, match=r"no state format 'other\.thing/1'"):
            inst.state(format="other.thing/1")
