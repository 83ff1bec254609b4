"""Results: what a tool returns comes back as its own object; bytes and sets are refused at any
depth, and the call that returned them keeps none of its writes."""

import dataclasses
import enum
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel

import seahaven


class Note(BaseModel):
    id: str
    tags: list[str]


class Tagged(BaseModel):
    tags: set[str]


@dataclasses.dataclass
class Receipt:
    id: str
    total: int


@dataclasses.dataclass
class Blob:
    data: bytes


class Level(enum.Enum):
    LOW = "low"


RETURNED: list[Any] = []


@pytest.fixture
def results_world() -> seahaven.World:
    """A world whose ``give`` tool writes a row and then returns whatever the test queued."""
    world = seahaven.World(
        name="results",
        version="1.0.0",
        schema="CREATE TABLE writes (id INTEGER PRIMARY KEY, note TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )

    @world.tool
    def give(ctx: seahaven.Ctx) -> Any:
        """Write, then return the queued value."""
        ctx.db.execute("INSERT INTO writes (note) VALUES ('written before returning')")
        return RETURNED.pop()

    return world


ACCEPTED = [
    pytest.param({"a": 1, "nested": {"list": [1, 2.5, None, True]}}, id="dict"),
    pytest.param([{"a": 1}, "b", 3], id="list"),
    pytest.param("text", id="str"),
    pytest.param(7, id="int"),
    pytest.param(2.5, id="float"),
    pytest.param(False, id="bool"),
    pytest.param(None, id="None"),
    pytest.param(Note(id="n1", tags=["a"]), id="pydantic model"),
    pytest.param(Receipt(id="r1", total=5), id="dataclass"),
    pytest.param({"receipts": [Receipt(id="r1", total=5)]}, id="dataclass in a dict"),
    pytest.param((1, "a"), id="tuple"),
    pytest.param(Level.LOW, id="enum"),
    pytest.param(datetime(2026, 1, 1, tzinfo=UTC), id="datetime"),
]


@pytest.mark.parametrize("value", ACCEPTED)
def test_a_result_comes_back_as_the_tools_own_object(
    results_world: seahaven.World, value: Any
) -> None:
    RETURNED.append(value)
    with results_world.instance() as inst:
        result = inst.call("give")
        assert result is value
        assert inst.inspect().one("SELECT count(*) AS n FROM writes") == {"n": 1}


REFUSED = [
    pytest.param(b"raw", "bytes", id="bytes"),
    pytest.param(bytearray(b"raw"), "bytearray", id="bytearray"),
    pytest.param({"a", "b"}, "set", id="set"),
    pytest.param(frozenset({1}), "frozenset", id="frozenset"),
    pytest.param({"deep": [{"deeper": b"x"}]}, "bytes", id="bytes deep in a dict"),
    pytest.param([[{"ids": {1, 2}}]], "set", id="set deep in a list"),
    pytest.param((1, b"x"), "bytes", id="bytes in a tuple"),
    pytest.param(Tagged(tags={"a"}), "set", id="set in a model"),
    pytest.param(Blob(data=b"x"), "bytes", id="bytes in a dataclass"),
    pytest.param({"blob": Blob(data=b"x")}, "bytes", id="dataclass with bytes in a dict"),
]


@pytest.mark.parametrize(("value", "kind"), REFUSED)
def test_bytes_and_sets_are_refused_at_any_depth_and_the_writes_rolled_back(
    results_world: seahaven.World, value: Any, kind: str
) -> None:
    RETURNED.append(value)
    with results_world.instance() as inst:
        with pytest.raises(seahaven.WorldBug) as caught:
            inst.call("give")
        message = str(caught.value)
        assert "'give'" in message
        assert f"returned a {kind}" in message
        assert inst.inspect().one("SELECT count(*) AS n FROM writes") == {"n": 0}
        assert inst.change_log() == []


def test_an_object_with_no_json_rendering_is_refused(results_world: seahaven.World) -> None:
    RETURNED.append({"handle": object()})
    with results_world.instance() as inst:
        with pytest.raises(seahaven.WorldBug, match="no JSON rendering"):
            inst.call("give")
        assert inst.inspect().one("SELECT count(*) AS n FROM writes") == {"n": 0}


def test_the_instance_keeps_working_after_a_refused_result(results_world: seahaven.World) -> None:
    with results_world.instance() as inst:
        RETURNED.append(b"x")
        with pytest.raises(seahaven.WorldBug):
            inst.call("give")
        RETURNED.append({"ok": True})
        assert inst.call("give") == {"ok": True}
        assert inst.inspect().one("SELECT count(*) AS n FROM writes") == {"n": 1}


def test_calling_by_function_returns_the_typed_object() -> None:
    world = seahaven.World(
        name="results",
        version="1.0.0",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )

    @world.tool
    def make_note(ctx: seahaven.Ctx, id: str, tags: list[str]) -> Note:
        """Make a note."""
        return Note(id=id, tags=tags)

    with world.instance() as inst:
        note = inst.call(make_note, "n1", tags=["x"])
        assert isinstance(note, Note)
        assert note == Note(id="n1", tags=["x"])
