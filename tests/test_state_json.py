"""``inst.state_json()``: the state document's text, assembled from records encoded once."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import seahaven
from seahaven.instance.state import document_json

NOW = "2031-03-14T08:30:00.000Z"
FORMATS = ["seahaven.state/1", "seahaven.state+last_step/1", "seahaven.state+calls/1"]


def dumps(document: Any) -> str:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def make_world(tmp_path: Path) -> seahaven.World:
    ledger = seahaven.World(
        name="json_ledger",
        version="1.0.0",
        schema="CREATE TABLE entries (id INTEGER PRIMARY KEY, note ANY) STRICT;",
        state_format="seahaven.state/1",
    )
    world = seahaven.World(
        name="json_host",
        version="2.0.0",
        schema=(
            "CREATE TABLE things (a INTEGER NOT NULL, b TEXT NOT NULL, value ANY, "
            "PRIMARY KEY (b, a)) STRICT;"
            'CREATE TABLE "odd ""name""" ("col ""q""" INTEGER PRIMARY KEY, "é" TEXT) STRICT;'
        ),
        state_format="seahaven.state/1",
        work_dir=tmp_path / "work",
    )
    world.add_world(ledger, name="ledger")

    @world.tool
    def put(ctx: seahaven.Ctx, a: int, b: str, value: Any = None) -> None:
        """Insert or replace a thing, and log it in the ledger."""
        ctx.db.execute("INSERT OR REPLACE INTO things VALUES (?, ?, ?)", a, b, value)
        ctx.worlds.ledger.db.execute("INSERT INTO entries (note) VALUES (?)", value)

    @world.tool
    def change(ctx: seahaven.Ctx, a: int, b: str, value: Any = None) -> None:
        """Update a thing."""
        ctx.db.execute("UPDATE things SET value = ? WHERE a = ? AND b = ?", value, a, b)

    @world.tool
    def drop(ctx: seahaven.Ctx, a: int, b: str) -> None:
        """Delete a thing."""
        ctx.db.execute("DELETE FROM things WHERE a = ? AND b = ?", a, b)

    @world.tool
    def odd(ctx: seahaven.Ctx, key: int, text: str) -> None:
        """Write the oddly named table."""
        ctx.db.execute('INSERT INTO "odd ""name""" VALUES (?, ?)', key, text)

    @world.tool
    def blob(ctx: seahaven.Ctx, a: int, hexdigits: str) -> None:
        """Store a blob."""
        ctx.db.execute("INSERT INTO things VALUES (?, 'blob', unhex(?))", a, hexdigits)

    @world.tool
    def real(ctx: seahaven.Ctx, a: int, literal: str) -> None:
        """Store a real written as a SQL literal, infinities too (9e999)."""
        float(literal)  # only a number goes into the statement's text
        ctx.db.execute(f"INSERT INTO things VALUES (?, 'real', {literal})", a)

    return world


def exercise(inst: seahaven.Instance) -> None:
    inst.call("put", a=1, b="plain", value="text")
    inst.call("put", a=2, b="ünïcode ☃ \u2028", value='quote " backslash \\ tab \t nl \n')
    inst.call("put", a=-(2**63), b="\x00\x01\x1f", value=2**63 - 1)
    inst.call("change", a=1, b="plain", value=1.5)
    inst.call("change", a=1, b="plain", value=None)
    inst.call("drop", a=2, b="ünïcode ☃ \u2028")
    inst.call("odd", key=7, text="é")
    inst.call("blob", a=3, hexdigits="00ff10")
    inst.call("real", a=4, literal="9e999")
    inst.call("real", a=5, literal="-9e999")
    inst.call("real", a=6, literal="1e-300")
    with pytest.raises(seahaven.ToolError):
        inst.call("odd", key=7, text="again")
    with inst.bulk() as loading:
        loading.db.execute("INSERT INTO things VALUES (9, 'bulk', x'01')")
        loading.worlds.ledger.db.execute("INSERT INTO entries (note) VALUES ('bulk')")
    inst.call("put", a=10, b="after bulk", value=0.1)


@pytest.mark.parametrize("format", FORMATS)
def test_the_text_is_json_dumps_of_the_document(tmp_path: Path, format: str) -> None:
    with make_world(tmp_path).instance(clock_mode="fixed", now=NOW, seed=3) as inst:
        assert inst.state_json(format) == dumps(inst.state(format))
        exercise(inst)
        assert inst.state_json(format) == dumps(inst.state(format))
        assert json.loads(inst.state_json(format)) == inst.state(format)


def test_the_instance_format_is_the_default(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    with world.instance(clock_mode="fixed", now=NOW, state_format="seahaven.state+calls/1") as inst:
        exercise(inst)
        assert inst.state_json() == dumps(inst.state())
        assert json.loads(inst.state_json())["format"] == "seahaven.state+calls/1"


def test_fields_are_set_as_on_the_document(tmp_path: Path) -> None:
    with make_world(tmp_path).instance(clock_mode="fixed", now=NOW) as inst:
        exercise(inst)
        document = inst.state()
        document["episode_id"] = "chosen"
        document["step_count"] = 12
        document["extra"] = {"nested": [1, "two"]}
        text = document_json(
            inst,
            fields={"episode_id": "chosen", "step_count": 12, "extra": {"nested": [1, "two"]}},
        )
        assert text == dumps(document)
        document["state"] = {"replaced": True}
        assert document_json(inst, fields={**document}) == dumps(document)


def test_a_world_format_is_encoded_as_it_returns(tmp_path: Path) -> None:
    world = make_world(tmp_path)

    @world.state_format("json_host.rows/1")
    def rows(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        if instance is None:
            return {"rows": []}
        return {"rows": instance.inspect().rows("SELECT a, b FROM things ORDER BY a")}

    @world.state_format("json_host.nan/1")
    def not_a_number(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"value": math.nan}

    with world.instance(clock_mode="fixed", now=NOW) as inst:
        exercise(inst)
        assert inst.state_json("json_host.rows/1") == dumps(inst.state("json_host.rows/1"))
        with pytest.raises(ValueError):
            inst.state_json("json_host.nan/1")


def test_state_json_is_refused_where_state_is(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    inst = world.instance(clock_mode="fixed", now=NOW)
    inst.destroy()
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        inst.state_json()
    with (
        world.instance(clock_mode="fixed", now=NOW) as live,
        pytest.raises(seahaven.WorldBug, match="format"),
    ):
        live.state_json("no.such/1")


values = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(max_size=20),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.text(max_size=4), values), max_size=8))
def test_any_values_encode_as_json_dumps_would(tmp_path: Path, rows: list[Any]) -> None:
    world = make_world(tmp_path)
    with world.instance(clock_mode="fixed", now=NOW) as inst:
        with inst.bulk() as loading:
            for a, b, value in rows:
                loading.db.execute("INSERT OR REPLACE INTO things VALUES (?, ?, ?)", a, b, value)
        for a, b, value in rows[:3]:
            inst.call("drop", a=a, b=b)
            inst.db.execute("INSERT OR REPLACE INTO things VALUES (?, ?, ?)", a, b, value)
        for format in FORMATS:
            assert inst.state_json(format) == dumps(inst.state(format))
