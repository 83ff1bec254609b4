"""The call path's shortcuts give what the general path gives.

``Tool.validate`` checks plain scalar parameters itself; these tests hold it to
the tool's own pydantic model, value for value and type for type, over
accepted and refused arguments alike. The change log renders rows of integers,
text and NULL without the general value conversion, and orders a call's
records by store before sorting within each store; both are held to the
published record and its JSON text.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import Field, ValidationError

import seahaven
from seahaven import ArgumentError


def _scalars_world() -> seahaven.World:
    world = seahaven.World(
        name="fast_scalars",
        version="1.0.0",
        schema="CREATE TABLE t (id INTEGER PRIMARY KEY);",
        state_format="seahaven.state/1",
    )

    @world.tool
    def mixed(
        ctx: seahaven.Ctx,
        count: int,
        label: str | None = None,
        ratio: float = 1.5,
        flag: bool = False,
        note: str = "none",
    ) -> dict[str, Any]:
        """Take one of each scalar."""
        return {}

    @world.tool
    def bounded(ctx: seahaven.Ctx, count: Annotated[int, Field(ge=0)]) -> int:
        """A constrained integer."""
        return count

    @world.tool
    def checked_default(
        ctx: seahaven.Ctx, count: int = Field(default="3", validate_default=True)
    ) -> int:
        """A default pydantic validates."""
        return count

    @world.tool
    def relaxed(ctx: seahaven.Ctx, count: Annotated[int, Field(strict=False)] = 0) -> int:
        """A lax integer."""
        return count

    return world


class _Text(str):
    pass


ARGUMENTS: list[dict[str, Any]] = [
    {"count": 1},
    {"count": 0, "label": "a", "ratio": 2.5, "flag": True, "note": "x"},
    {"note": "first", "count": 3},  # order given is not field order
    {"count": 1, "label": None},
    {"count": 2**80},
    {"count": 1, "ratio": 2},  # an int for a float: converted
    {"count": 1, "ratio": math.inf},
    {"count": True},
    {"count": 1.0},
    {"count": "1"},
    {"count": 1, "label": _Text("sub")},
    {"count": 1, "extra": 1},
    {"label": "no count"},
    {},
    {"count": 1, "flag": 1},
    {"count": 1, "label": "x\udc80"},
]


@pytest.mark.parametrize("arguments", ARGUMENTS, ids=repr)
def test_validate_agrees_with_the_model(arguments: dict[str, Any]) -> None:
    tool = _scalars_world().tools["mixed"]
    try:
        expected = tool.params.model_validate(dict(arguments)).__dict__
    except ValidationError as error:
        with pytest.raises(ArgumentError) as refused:
            tool.validate(dict(arguments))
        assert [violation["loc"] for violation in refused.value.violations] == [
            list(item["loc"]) for item in error.errors()
        ]
        return
    got = tool.validate(dict(arguments))
    assert list(got) == list(expected)
    assert [(type(value), value) for value in got.values()] == [
        (type(value), value) for value in expected.values()
    ]


def test_a_constrained_or_relaxed_scalar_keeps_its_rules() -> None:
    world = _scalars_world()
    with pytest.raises(ArgumentError):
        world.tools["bounded"].validate({"count": -1})
    assert world.tools["bounded"].validate({"count": 3}) == {"count": 3}
    assert world.tools["relaxed"].validate({"count": "7"}) == {"count": 7}
    with pytest.raises(ArgumentError):  # the default is validated, and is not an int
        world.tools["checked_default"].validate({})
    assert world.tools["checked_default"].validate({"count": 4}) == {"count": 4}


def test_a_called_tool_gets_its_arguments_in_field_order(tmp_path: Path) -> None:
    world = seahaven.World(
        name="fast_order",
        version="1.0.0",
        schema="CREATE TABLE t (id INTEGER PRIMARY KEY);",
        state_format="seahaven.state/1",
        work_dir=tmp_path,
    )

    @world.tool
    def echo(ctx: seahaven.Ctx, first: int, second: str = "b") -> list[str]:
        """Name the arguments as the call saw them."""
        assert ctx.call is not None
        return list(ctx.call.arguments)

    with world.instance() as inst:
        assert inst.call("echo", second="x", first=1) == ["first", "second"]
        assert inst.call("echo", first=1) == ["first", "second"]


def _rows_world(work_dir: Path) -> seahaven.World:
    world = seahaven.World(
        name="fast_rows",
        version="1.0.0",
        schema=(
            "CREATE TABLE plain (id INTEGER PRIMARY KEY, txt TEXT, num INTEGER);"
            "CREATE TABLE mixed (id INTEGER PRIMARY KEY, val ANY) STRICT;"
            "CREATE TABLE pairs (a TEXT, b INTEGER, note TEXT, PRIMARY KEY (a, b))"
            " WITHOUT ROWID;"
        ),
        state_format="seahaven.state/1",
        work_dir=work_dir,
    )

    @world.tool
    def write(ctx: seahaven.Ctx) -> None:
        """Write rows of every kind of value, then delete some."""
        ctx.db.execute("INSERT INTO plain VALUES (2, 'é \"quoted\"\n', NULL)")
        ctx.db.execute("INSERT INTO plain VALUES (1, NULL, -5)")
        for key, value in enumerate([1.5, b"\x00\xff", 9e999, -9e999, "t", None, 7], start=1):
            ctx.db.execute("INSERT INTO mixed VALUES (?, ?)", key, value)
        ctx.db.execute("INSERT INTO pairs VALUES ('b', 1, 'x'), ('a', 2, NULL), ('a', 1, 'y')")

    @world.tool
    def remove(ctx: seahaven.Ctx) -> None:
        """Delete a row of each table."""
        ctx.db.execute("DELETE FROM plain WHERE id = 2")
        ctx.db.execute("DELETE FROM mixed WHERE id IN (2, 3)")
        ctx.db.execute("DELETE FROM pairs WHERE a = 'a' AND b = 2")

    return world


def test_records_and_their_text_agree_for_every_kind_of_value(tmp_path: Path) -> None:
    with _rows_world(tmp_path).instance() as inst:
        inst.call("write")
        inst.call("remove")
        records = inst.state()["state"]["db"]["log"]
        from_text = json.loads(inst.state_json())["state"]["db"]["log"]
    assert from_text == records
    assert [(r["i"], r["table"], r["op"], r["key"]) for r in records] == [
        (0, "mixed", "insert", {"id": key}) for key in range(1, 8)
    ] + [
        (0, "pairs", "insert", {"a": "a", "b": 1}),
        (0, "pairs", "insert", {"a": "a", "b": 2}),
        (0, "pairs", "insert", {"a": "b", "b": 1}),
        (0, "plain", "insert", {"id": 1}),
        (0, "plain", "insert", {"id": 2}),
        (1, "mixed", "delete", {"id": 2}),
        (1, "mixed", "delete", {"id": 3}),
        (1, "pairs", "delete", {"a": "a", "b": 2}),
        (1, "plain", "delete", {"id": 2}),
    ]
    values = [r["after"]["val"] for r in records[:7]]
    assert values == [1.5, "AP8=", None, None, "t", None, 7]
    assert records[-1]["before"] == {"id": 2, "txt": 'é "quoted"\n', "num": None}
