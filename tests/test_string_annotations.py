"""Annotations written as strings register and validate exactly as real ones.

This module starts with ``from __future__ import annotations``, so every
annotation below is a string until the framework resolves it. The twins in
``annotation_twins.py`` carry the real objects.
"""

from __future__ import annotations

import sys
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any

import annotation_twins
import pytest
from annotation_twins import Address, Limit, Point, Priority, Status, Window
from pydantic import BaseModel, ConfigDict, Field

import seahaven

if TYPE_CHECKING:
    from fractions import Fraction


def search(
    ctx: seahaven.Ctx,
    query: str,
    status: Status,
    priority: Priority,
    limit: Limit = 50,
    window: Window | None = None,
    tags: tuple[str, ...] = (),
    ids: set[int] | None = None,
    when: datetime | None = None,
    key: uuid.UUID | None = None,
    amount: Decimal | None = None,
    at: Point | None = None,
    address: Address | None = None,
    from_: Annotated[str, Field(alias="from")] = "me",
    exact: bool = False,
) -> dict[str, Any]:
    """Search with one argument of every kind."""
    return {"query": query}


def typed_context(ctx: seahaven.Ctx[seahaven.Worlds], count: int) -> dict[str, Any]:
    """A context written with its type parameter."""
    return {"count": count}


def nested(
    ctx: seahaven.Ctx, windows: list[Window], points: dict[str, Point]
) -> list[dict[str, Any]]:
    """Models inside containers."""
    return [window.model_dump() for window in windows]


PAIRS = [
    (search, annotation_twins.search),
    (typed_context, annotation_twins.typed_context),
    (nested, annotation_twins.nested),
]


def test_this_module_really_has_string_annotations() -> None:
    assert isinstance(search.__annotations__["query"], str)
    assert not isinstance(annotation_twins.search.__annotations__["query"], str)


@pytest.mark.parametrize(("stringly", "real"), PAIRS, ids=lambda fn: fn.__name__)
def test_the_published_schema_is_identical(stringly: Any, real: Any) -> None:
    assert seahaven.Tool.from_function(stringly).schema == seahaven.Tool.from_function(real).schema
    assert (
        seahaven.Tool.from_function(stringly).listing()
        == seahaven.Tool.from_function(real).listing()
    )


WINDOW = {"start": "2026-06-01T09:00:00Z", "end": "2026-06-02T09:00:00Z"}
SEARCH_CASES: list[dict[str, Any]] = [
    # plain JSON, every argument
    {
        "query": "export",
        "status": "open",
        "priority": "high",
        "limit": 10,
        "window": WINDOW,
        "tags": ["a", "b"],
        "ids": [1, 2],
        "when": "2026-06-01T09:00:00.000Z",
        "key": "12345678-1234-5678-1234-567812345678",
        "amount": "12.50",
        "at": {"x": 1, "y": 2},
        "address": {"city": "Oslo", "zip": "0150"},
        "from": "ada",
        "exact": True,
    },
    # only the required ones
    {"query": "q", "status": "closed", "priority": "low"},
    # Python objects
    {
        "query": "q",
        "status": "closed",
        "priority": Priority.LOW,
        "window": Window(start=datetime(2026, 1, 1, tzinfo=UTC), end=datetime.now(UTC)),
        "tags": ("a",),
        "ids": {3},
        "when": datetime(2026, 6, 1, tzinfo=UTC),
        "key": uuid.UUID(int=7),
        "amount": Decimal("1.5"),
        "at": Point(1, 2),
    },
    # every kind of mistake at once
    {
        "query": 5,
        "status": "archived",
        "priority": "medium",
        "limit": 0,
        "window": {"start": "yesterday"},
        "tags": "a",
        "when": 1,
        "key": "not-a-uuid",
        "at": {"x": "1", "y": 2},
        "address": {"city": "Oslo"},
        "from_": "ada",
        "exact": 1,
        "unexpected": True,
    },
    # Python mode, where only the annotated type's own object will do
    {"query": "q", "status": "closed", "priority": "low", "key": uuid.UUID(int=1), "tags": ["a"]},
    {"query": "q", "status": "open", "priority": "low", "limit": 201},
]


def _outcome(tool: seahaven.Tool, arguments: dict[str, Any]) -> Any:
    try:
        return ("ok", tool.validate(arguments))
    except seahaven.ArgumentError as error:
        return ("refused", error.violations)


@pytest.mark.parametrize("arguments", SEARCH_CASES)
def test_validation_is_identical(arguments: dict[str, Any]) -> None:
    stringly = seahaven.Tool.from_function(search)
    real = seahaven.Tool.from_function(annotation_twins.search)
    assert _outcome(stringly, arguments) == _outcome(real, arguments)


def test_the_cases_cover_both_outcomes() -> None:
    # Guards the comparison above against comparing two identical failures everywhere.
    tool = seahaven.Tool.from_function(search)
    outcomes = [_outcome(tool, arguments)[0] for arguments in SEARCH_CASES]
    assert outcomes == ["ok", "ok", "ok", "refused", "refused", "refused"]
    refused = _outcome(tool, SEARCH_CASES[3])[1]
    assert len(refused) >= 12


def test_validated_values_are_the_annotated_types() -> None:
    values = seahaven.Tool.from_function(search).validate(SEARCH_CASES[0])
    assert values["priority"] is Priority.HIGH
    assert isinstance(values["window"], Window)
    assert values["tags"] == ("a", "b")
    assert values["ids"] == {1, 2}
    assert values["when"] == datetime(2026, 6, 1, 9, tzinfo=UTC)
    assert values["key"] == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert values["amount"] == Decimal("12.50")
    assert values["at"] == Point(1, 2)
    assert values["address"] == {"city": "Oslo", "zip": "0150"}
    assert values["from_"] == "ada"


def test_a_string_annotated_tool_runs_end_to_end() -> None:
    world = seahaven.World(
        name="strings",
        version="1.0.0",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )
    world.tool(nested)
    with world.instance() as inst:
        assert inst.call("nested", windows=[WINDOW], points={"a": {"x": 1, "y": 2}}) == [
            {
                "start": datetime(2026, 6, 1, 9, tzinfo=UTC),
                "end": datetime(2026, 6, 2, 9, tzinfo=UTC),
            }
        ]
        with pytest.raises(seahaven.ArgumentError):
            inst.call("nested", windows=[{"start": "x"}], points={})


def test_an_annotation_that_exists_only_under_type_checking_is_refused_naming_the_symbol() -> None:
    def ratio(ctx: seahaven.Ctx, value: Fraction) -> dict[str, Any]:
        return {}

    with pytest.raises(seahaven.WorldBug) as caught:
        seahaven.Tool.from_function(ratio)
    message = str(caught.value)
    assert "'ratio'" in message
    assert "parameter 'value'" in message
    assert "'Fraction'" in message


def test_a_type_local_to_the_registering_function_resolves() -> None:
    class Local(BaseModel):
        model_config = ConfigDict(strict=True)

        count: int

    def tool(ctx: seahaven.Ctx, local: Local) -> dict[str, Any]:
        return {}

    built = seahaven.Tool.from_function(tool)
    assert built.validate({"local": {"count": 1}}) == {"local": Local(count=1)}
    with pytest.raises(seahaven.ArgumentError):
        built.validate({"local": {"count": "1"}})


def test_a_string_annotated_non_strict_nested_model_is_refused() -> None:
    def tool(ctx: seahaven.Ctx, loose: LooseModel) -> dict[str, Any]:
        return {}

    with pytest.raises(seahaven.WorldBug, match=r"parameter 'loose'.*strict"):
        seahaven.Tool.from_function(tool)


class LooseModel(BaseModel):
    """Declared after the tool that names it: a string annotation resolves at registration."""

    count: int


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="typing.TypedDict is accepted on 3.12+")
def test_a_typing_typed_dict_is_refused_clearly_before_python_3_12() -> None:
    from typing import TypedDict as PlainTypedDict

    class Plain(PlainTypedDict):
        city: str

    def tool(ctx: seahaven.Ctx, address: Plain) -> dict[str, Any]:
        return {}

    with pytest.raises(seahaven.WorldBug) as caught:
        seahaven.Tool.from_function(tool)
    message = str(caught.value)
    assert "parameter 'address'" in message
    assert "typing_extensions.TypedDict" in message
