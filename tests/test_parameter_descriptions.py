"""Every parameter's description sits at the top of its schema, where a harness reads it.

Inspect AI (``inspect_ai/tool/_tool_def.py``, ``validate_tool_parameters``)
refuses a tool unless each property of its input schema has a non-empty
``description`` of its own: one only inside ``anyOf`` does not count.
``inspect_ai`` itself is too large a dependency for a test extra (a 35 MB wheel
pulling in boto3, s3fs, textual, tiktoken...), so ``harness_refusal`` below
applies its rule to the schema a tool lists.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

import seahaven
from seahaven.declaration.tool_descriptions import docstring_arguments
from seahaven.registry import registry

Code = Annotated[str, Field(pattern=r"^[A-Z]{3}$", description="A three-letter code, like OSL.")]


def harness_refusal(listing: dict[str, Any]) -> str | None:
    """What Inspect AI would say refusing this tool listing, or ``None`` if it takes it."""
    properties = listing["input_schema"].get("properties", {})
    for name, spec in properties.items():
        description = spec.get("description")
        if not isinstance(description, str) or not description:
            function = listing["name"]
            return f"Description not provided for parameter '{name}' of function '{function}'."
    return None


def declare() -> seahaven.World:
    return seahaven.World(
        name="described",
        version="1.0.0",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )


def test_a_description_inside_any_of_is_lifted_to_the_top() -> None:
    world = declare()

    @world.tool
    def find(ctx: seahaven.Ctx, code: Code | None = None) -> int:
        """Find flights from an airport."""
        return 0

    spec = world.tools["find"].schema["properties"]["code"]
    assert spec["description"] == "A three-letter code, like OSL."
    # Said once: the branch keeps its constraints and loses the copy.
    assert spec["anyOf"][0] == {"pattern": "^[A-Z]{3}$", "type": "string"}
    assert harness_refusal(world.tools["find"].listing()) is None


def test_the_docstring_args_section_describes_each_parameter() -> None:
    world = declare()

    @world.tool
    def book(
        ctx: seahaven.Ctx,
        origin: Code,
        seats: int = 1,
        window: bool = False,
        note: str | None = None,
    ) -> int:
        """Book seats on the next flight.

        Args:
            origin: Where the flight leaves from.
            seats (int): How many seats, 1 to 9;
                the party sits together.
            window: Ask for window seats.

        Returns the booking's number.
        """
        return 0

    properties = world.tools["book"].schema["properties"]
    # The docstring's line is written for this parameter, so it wins over the type's.
    assert properties["origin"]["description"] == "Where the flight leaves from."
    assert properties["seats"]["description"] == "How many seats, 1 to 9; the party sits together."
    assert properties["window"]["description"] == "Ask for window seats."
    assert "description" not in properties["note"]
    assert harness_refusal(world.tools["book"].listing()) == (
        "Description not provided for parameter 'note' of function 'book'."
    )


def test_an_aliased_parameter_is_described_under_its_wire_name() -> None:
    world = declare()

    @world.tool
    def send(ctx: seahaven.Ctx, from_: Annotated[str, Field(alias="from")]) -> str:
        """Send it.

        Args:
            from_: Who it is from.
        """
        return from_

    assert world.tools["send"].schema["properties"]["from"]["description"] == "Who it is from."


class Seat(BaseModel):
    """Where one passenger sits."""

    model_config = ConfigDict(strict=True)
    row: int


class Cabin(enum.Enum):
    """The cabin the seats are in."""

    ECONOMY = "economy"
    BUSINESS = "business"


def test_a_model_or_enum_parameter_takes_its_type_description() -> None:
    world = declare()

    @world.tool
    def seat(ctx: seahaven.Ctx, seat: Seat, cabin: Cabin | None = None) -> int:
        """Choose a seat."""
        return 0

    properties = world.tools["seat"].schema["properties"]
    assert properties["seat"]["description"] == "Where one passenger sits."
    assert properties["cabin"]["description"] == "The cabin the seats are in."


def test_a_parameter_nothing_describes_has_no_made_up_description() -> None:
    world = declare()

    @world.tool
    def count(ctx: seahaven.Ctx, kind: Literal["a", "b"], limit: int = 5) -> int:
        """Count them.

        Arguments: kind and limit, in prose, is not an Args: section.
        """
        return 0

    properties = world.tools["count"].schema["properties"]
    assert "description" not in properties["kind"] and "description" not in properties["limit"]


@pytest.mark.parametrize(
    ("docstring", "expected"),
    [
        ("No section.", {}),
        (
            "Do it.\n\nArgs:\n    a: First.\n    b: Second,\n        continued.\n",
            {"a": "First.", "b": "Second, continued."},
        ),
        (
            "Do it.\n\nArguments:\n  a (str): First.\n\nReturns:\n  x: not an argument.",
            {"a": "First."},
        ),
        ("Do it.\n\nArgs:\n    a:\n    b: Only b.", {"b": "Only b."}),
        ("Do it.\nArgs:\n    a: First.\nAfter the section.\n    b: not in it.", {"a": "First."}),
    ],
)
def test_docstring_arguments_reads_google_style_sections(
    docstring: str, expected: dict[str, str]
) -> None:
    assert docstring_arguments(docstring) == expected


SHIPPED = ("payments", "chat", "company")


@pytest.mark.parametrize("name", SHIPPED)
def test_every_parameter_of_every_shipped_world_has_a_top_level_description(name: str) -> None:
    world = registry().load(name)
    with world.instance() as inst:
        listings = inst.tools()
    assert listings
    refusals = [refusal for listing in listings if (refusal := harness_refusal(listing))]
    assert refusals == []
