"""Arguments: one strict model per tool, validated in JSON or Python mode, every violation at
once, aliases, and the types an argument may have."""

import dataclasses
import enum
import sys
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal
from uuid import UUID

import pytest
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

import seahaven


def declare() -> seahaven.World:
    """A world whose one table records what each call received."""
    return seahaven.World(
        name="arguments",
        version="1.0.0",
        schema="CREATE TABLE seen (id INTEGER PRIMARY KEY, value TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )


def violations(error: seahaven.ArgumentError) -> dict[str, str]:
    """Each violation's location, joined with dots, mapped to its pydantic type."""
    return {".".join(str(part) for part in v["loc"]): v["type"] for v in error.violations}


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Window(BaseModel):
    model_config = ConfigDict(strict=True)

    start: datetime
    end: datetime


class Team(BaseModel):
    model_config = ConfigDict(strict=True)

    name: str
    windows: list[Window]


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Address(TypedDict):
    city: str
    zip: str


# --- strictness ----------------------------------------------------------------------------------


@pytest.fixture
def counter() -> seahaven.World:
    world = declare()

    @world.tool
    def count(ctx: seahaven.Ctx, n: int, flag: bool = False, ratio: float = 0.0) -> dict[str, Any]:
        """Count."""
        return {"n": n, "flag": flag, "ratio": ratio}

    return world


@pytest.mark.parametrize(
    ("arguments", "loc", "kind"),
    [
        ({"n": "5"}, "n", "int_type"),
        ({"n": 2.0}, "n", "int_type"),
        ({"n": True}, "n", "int_type"),
        ({"n": None}, "n", "int_type"),
        ({"n": 1, "flag": 1}, "flag", "bool_type"),
        ({"n": 1, "flag": "true"}, "flag", "bool_type"),
        ({"n": 1, "ratio": "0.5"}, "ratio", "float_type"),
        ({"n": 1, "extra": 1}, "extra", "extra_forbidden"),
        ({}, "n", "missing"),
    ],
)
def test_arguments_are_validated_strictly(
    counter: seahaven.World, arguments: dict[str, Any], loc: str, kind: str
) -> None:
    with counter.instance() as inst:
        with pytest.raises(seahaven.ArgumentError) as caught:
            inst.call("count", **arguments)
        assert violations(caught.value) == {loc: kind}


def test_well_typed_arguments_pass_and_an_int_is_a_float(counter: seahaven.World) -> None:
    with counter.instance() as inst:
        assert inst.call("count", n=5, flag=True, ratio=1) == {"n": 5, "flag": True, "ratio": 1}
        assert inst.call("count", n=-3) == {"n": -3, "flag": False, "ratio": 0.0}


def test_every_violation_is_reported_at_once(counter: seahaven.World) -> None:
    with counter.instance() as inst, pytest.raises(seahaven.ArgumentError) as caught:
        inst.call("count", n="5", flag=1, ratio="x", typo=True)
    error = caught.value
    assert violations(error) == {
        "n": "int_type",
        "flag": "bool_type",
        "ratio": "float_type",
        "typo": "extra_forbidden",
    }
    assert error.code == "invalid_arguments"
    assert error.details is not None
    assert error.details["tool"] == "count"
    assert error.details["violations"] == error.violations
    for name in ("n", "flag", "ratio", "typo"):
        assert name in error.message
    assert error.message.startswith("4 invalid arguments for count")


def test_a_refused_call_does_not_run_the_tool() -> None:
    world = declare()

    @world.tool
    def record(ctx: seahaven.Ctx, value: str) -> dict[str, Any]:
        ctx.db.execute("INSERT INTO seen (value) VALUES (?)", value)
        return {}

    with world.instance() as inst:
        with pytest.raises(seahaven.ArgumentError):
            inst.call("record", value=1)
        assert inst.inspect().rows("SELECT * FROM seen") == []


def test_a_field_may_relax_strictness_on_purpose() -> None:
    world = declare()

    @world.tool
    def pay(ctx: seahaven.Ctx, amount: Annotated[int, Field(strict=False)]) -> dict[str, Any]:
        return {"amount": amount}

    with world.instance() as inst:
        assert inst.call("pay", amount="5") == {"amount": 5}


def test_field_constraints_are_enforced_and_published() -> None:
    world = declare()
    limit = Annotated[int, Field(ge=1, le=250, description="How many rows.")]

    @world.tool
    def page(ctx: seahaven.Ctx, size: limit = 50) -> dict[str, Any]:
        return {"size": size}

    schema = world.tools["page"].schema["properties"]["size"]
    assert (schema["minimum"], schema["maximum"], schema["description"]) == (
        1,
        250,
        "How many rows.",
    )
    with world.instance() as inst:
        assert inst.call("page") == {"size": 50}
        with pytest.raises(seahaven.ArgumentError) as caught:
            inst.call("page", size=0)
        assert violations(caught.value) == {"size": "greater_than_equal"}


# --- aliases -------------------------------------------------------------------------------------


@pytest.fixture
def ledger() -> seahaven.World:
    world = declare()

    @world.tool
    def transfer(
        ctx: seahaven.Ctx,
        from_: Annotated[str, Field(alias="from")],
        to: str,
    ) -> dict[str, Any]:
        return {"from": from_, "to": to}

    return world


def test_an_alias_is_the_wire_name(ledger: seahaven.World) -> None:
    schema = ledger.tools["transfer"].schema
    assert sorted(schema["required"]) == ["from", "to"]
    assert "from_" not in schema["properties"]
    with ledger.instance() as inst:
        assert inst.call("transfer", **{"from": "a", "to": "b"}) == {"from": "a", "to": "b"}


def test_the_python_name_of_an_aliased_argument_is_refused(ledger: seahaven.World) -> None:
    with ledger.instance() as inst, pytest.raises(seahaven.ArgumentError) as caught:
        inst.call("transfer", from_="a", to="b")
    assert violations(caught.value) == {"from": "missing", "from_": "extra_forbidden"}


def test_parameters_named_like_pydantic_members_keep_their_names() -> None:
    world = declare()

    @world.tool
    def odd(
        ctx: seahaven.Ctx, schema: str, copy: int, model_config: str, _hidden: int = 0
    ) -> dict[str, Any]:
        return {"schema": schema, "copy": copy, "model_config": model_config, "hidden": _hidden}

    properties = world.tools["odd"].schema["properties"]
    assert list(properties) == ["schema", "copy", "model_config", "_hidden"]
    with world.instance() as inst:
        assert inst.call("odd", schema="s", copy=1, model_config="m", _hidden=2) == {
            "schema": "s",
            "copy": 1,
            "model_config": "m",
            "hidden": 2,
        }
        with pytest.raises(seahaven.ArgumentError) as caught:
            inst.call("odd", schema="s", copy=True, model_config="m")
        assert violations(caught.value) == {"copy": "int_type"}


# --- the types an argument may have --------------------------------------------------------------


RECEIVED: list[dict[str, Any]] = []


def received() -> dict[str, Any]:
    """What the last call of ``every_type`` was given (a set cannot be a result, so it is kept)."""
    return RECEIVED[-1]


@pytest.fixture
def typed() -> seahaven.World:
    world = declare()
    RECEIVED.clear()

    @world.tool
    def every_type(
        ctx: seahaven.Ctx,
        status: Literal["backlog", "todo", "done"] = "todo",
        colour: Colour = Colour.RED,
        when: datetime | None = None,
        key: UUID | None = None,
        amount: Decimal | None = None,
        pair: tuple[int, str] | None = None,
        ids: set[int] | None = None,
        point: Point | None = None,
        address: Address | None = None,
        team: Team | None = None,
    ) -> dict[str, Any]:
        RECEIVED.append(
            {
                "status": status,
                "colour": colour,
                "when": when,
                "key": key,
                "amount": amount,
                "pair": pair,
                "ids": ids,
                "point": point,
                "address": address,
                "team": team,
            }
        )
        return {}

    return world


JSON_FORMS: dict[str, tuple[Any, Any]] = {
    "status": ("done", "done"),
    "colour": ("blue", Colour.BLUE),
    "when": ("2026-06-01T09:00:00.000Z", datetime(2026, 6, 1, 9, tzinfo=UTC)),
    "key": ("12345678-1234-5678-1234-567812345678", UUID("12345678-1234-5678-1234-567812345678")),
    "amount": ("10.25", Decimal("10.25")),
    "pair": ([1, "a"], (1, "a")),
    "ids": ([3, 1, 2], {1, 2, 3}),
    "point": ({"x": 1, "y": 2}, Point(1, 2)),
    "address": ({"city": "Oslo", "zip": "0150"}, {"city": "Oslo", "zip": "0150"}),
    "team": (
        {
            "name": "core",
            "windows": [{"start": "2026-06-01T00:00:00Z", "end": "2026-06-02T00:00:00Z"}],
        },
        Team(
            name="core",
            windows=[
                Window(start=datetime(2026, 6, 1, tzinfo=UTC), end=datetime(2026, 6, 2, tzinfo=UTC))
            ],
        ),
    ),
}


@pytest.mark.parametrize("argument", sorted(JSON_FORMS))
def test_the_json_form_arrives_as_the_python_object(typed: seahaven.World, argument: str) -> None:
    sent, expected = JSON_FORMS[argument]
    with typed.instance() as inst:
        inst.call("every_type", **{argument: sent})
    assert received()[argument] == expected
    assert type(received()[argument]) is type(expected)


JSON_MISTAKES: dict[str, tuple[Any, str]] = {
    "status": ("archived", "status"),
    "colour": ("green", "colour"),
    "when": ("not a time", "when"),
    "key": ("1234", "key"),
    "amount": ("ten", "amount"),
    "pair": ([1, 2], "pair.1"),
    "ids": ([1, "2"], "ids.1"),
    "point": ({"x": 1, "y": "2"}, "point.y"),
    "address": ({"city": "Oslo"}, "address.zip"),
    "team": ({"name": "core", "windows": [{"start": "x", "end": "y"}]}, "team.windows.0.start"),
}


@pytest.mark.parametrize("argument", sorted(JSON_MISTAKES))
def test_a_wrong_json_form_is_refused_at_the_exact_location(
    typed: seahaven.World, argument: str
) -> None:
    sent, location = JSON_MISTAKES[argument]
    with typed.instance() as inst, pytest.raises(seahaven.ArgumentError) as caught:
        inst.call("every_type", **{argument: sent})
    assert location in violations(caught.value)


def test_the_schema_publishes_the_json_forms(typed: seahaven.World) -> None:
    properties = typed.tools["every_type"].schema["properties"]
    assert properties["status"]["enum"] == ["backlog", "todo", "done"]
    assert properties["when"]["anyOf"][0] == {"format": "date-time", "type": "string"}
    assert properties["key"]["anyOf"][0] == {"format": "uuid", "type": "string"}
    assert properties["pair"]["anyOf"][0]["type"] == "array"
    assert properties["ids"]["anyOf"][0]["uniqueItems"] is True


def test_nested_strict_models_are_strict_at_every_depth(typed: seahaven.World) -> None:
    with typed.instance() as inst, pytest.raises(seahaven.ArgumentError) as caught:
        inst.call("every_type", team={"name": 1, "windows": [{"start": 5, "end": "x"}]})
    assert set(violations(caught.value)) == {
        "team.name",
        "team.windows.0.start",
        "team.windows.0.end",
    }


# --- JSON mode and Python mode -------------------------------------------------------------------


def test_python_objects_are_accepted_when_each_is_the_annotated_type(
    typed: seahaven.World,
) -> None:
    team = JSON_FORMS["team"][1]
    arguments = {
        "colour": Colour.BLUE,
        "when": datetime(2026, 1, 1, tzinfo=UTC),
        "key": UUID(int=5),
        "amount": Decimal("1.5"),
        "pair": (1, "a"),
        "ids": {1, 2},
        "point": Point(3, 4),
        "team": team,
    }
    with typed.instance() as inst:
        inst.call("every_type", **arguments)
    for name, value in arguments.items():
        # Each arrives as the annotated type, unchanged.
        assert received()[name] == value
        assert type(received()[name]) is type(value)


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("pair", [1, "a"]),  # a list where the annotation is a tuple
        ("colour", "blue"),  # the value where the annotation is the Enum
        ("when", "2026-06-01T09:00:00Z"),  # text where the annotation is a datetime
        ("point", {"x": 1, "y": 2}),  # a dict where the annotation is a dataclass
    ],
)
def test_in_python_mode_the_json_form_is_refused(
    typed: seahaven.World, argument: str, value: Any
) -> None:
    # A UUID object beside it makes the whole call Python mode.
    with typed.instance() as inst:
        with pytest.raises(seahaven.ArgumentError) as caught:
            inst.call("every_type", key=UUID(int=1), **{argument: value})
        assert set(violations(caught.value)) == {argument}
        # The same value alone is plain JSON, and passes.
        inst.call("every_type", **{argument: value})


def test_a_python_object_for_a_str_is_refused() -> None:
    world = declare()

    @world.tool
    def note(ctx: seahaven.Ctx, text: str) -> dict[str, Any]:
        return {"text": text}

    with world.instance() as inst, pytest.raises(seahaven.ArgumentError) as caught:
        inst.call("note", text=datetime(2026, 1, 1, tzinfo=UTC))
    assert violations(caught.value) == {"text": "string_type"}


def test_tool_validate_chooses_the_mode_for_the_whole_call() -> None:
    def tool(ctx: seahaven.Ctx, pair: tuple[int, int], key: UUID | None = None) -> dict[str, Any]:
        return {}

    built = seahaven.Tool.from_function(tool)
    assert built.validate({"pair": [1, 2]}) == {"pair": (1, 2), "key": None}
    assert built.validate({"pair": (1, 2), "key": UUID(int=3)}) == {
        "pair": (1, 2),
        "key": UUID(int=3),
    }
    with pytest.raises(seahaven.ArgumentError):
        built.validate({"pair": [1, 2], "key": UUID(int=3)})


def test_a_union_of_a_datetime_and_a_str_prefers_the_first_member() -> None:
    def first_datetime(ctx: seahaven.Ctx, at: datetime | str) -> dict[str, Any]:
        return {}

    def first_str(ctx: seahaven.Ctx, at: str | datetime) -> dict[str, Any]:
        return {}

    stamp = "2026-06-01T09:00:00Z"
    as_datetime = seahaven.Tool.from_function(first_datetime).validate({"at": stamp})["at"]
    as_text = seahaven.Tool.from_function(first_str).validate({"at": stamp})["at"]
    assert as_datetime == datetime(2026, 6, 1, 9, tzinfo=UTC)
    assert as_text == stamp


# --- TypedDict -----------------------------------------------------------------------------------


def test_a_typing_extensions_typed_dict_validates_strictly() -> None:
    def tool(ctx: seahaven.Ctx, address: Address) -> dict[str, Any]:
        return dict(address)

    built = seahaven.Tool.from_function(tool)
    assert built.validate({"address": {"city": "Oslo", "zip": "0150"}}) == {
        "address": {"city": "Oslo", "zip": "0150"}
    }
    with pytest.raises(seahaven.ArgumentError) as caught:
        built.validate({"address": {"city": "Oslo", "zip": 150, "street": "x"}})
    assert set(violations(caught.value)) == {"address.zip", "address.street"}


def test_a_typing_typed_dict_is_refused_clearly_where_pydantic_refuses_it() -> None:
    from typing import TypedDict as PlainTypedDict

    class PlainAddress(PlainTypedDict):
        city: str

    def tool(ctx: seahaven.Ctx, address: PlainAddress) -> dict[str, Any]:
        return {}

    if sys.version_info >= (3, 12):
        assert seahaven.Tool.from_function(tool).validate({"address": {"city": "Oslo"}})
        return
    with pytest.raises(seahaven.WorldBug) as caught:
        seahaven.Tool.from_function(tool)
    message = str(caught.value)
    assert "tool 'tool', parameter 'address'" in message
    assert "typing_extensions.TypedDict" in message


# --- the call itself -----------------------------------------------------------------------------


def test_a_tool_argument_called_name_does_not_collide_with_the_tool_name() -> None:
    world = declare()

    @world.tool
    def rename(ctx: seahaven.Ctx, name: str) -> dict[str, Any]:
        return {"name": name}

    with world.instance() as inst:
        assert inst.call("rename", name="ada") == {"name": "ada"}


def test_the_tool_receives_its_validated_arguments_on_ctx_call() -> None:
    world = declare()
    seen: list[dict[str, Any]] = []

    @world.tool
    def look(ctx: seahaven.Ctx, when: datetime) -> dict[str, Any]:
        assert ctx.call is not None
        seen.append(dict(ctx.call.arguments))
        return {}

    with world.instance() as inst:
        inst.call("look", when="2026-06-01T09:00:00Z")
    assert seen == [{"when": datetime(2026, 6, 1, 9, tzinfo=UTC)}]
