"""The pieces ``seahaven mcp`` is made of, in process: option checks and result shapes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import typer
from mcp import types
from seahaven_mcp import call_result, check_reset_options, serve
from seahaven_mcp.plugin import reset_options_from

import seahaven


def test_reset_options_take_the_instance_keywords_and_nothing_else() -> None:
    options = {"fixture": "small_shop", "seed": 3, "setup_sql": "SELECT 1", "startup": {"a": 1}}
    assert check_reset_options(options) == options
    assert check_reset_options(None) == {}
    with pytest.raises(seahaven.WorldBug, match="control tool"):
        check_reset_options({"control_tools": False})
    with pytest.raises(seahaven.WorldBug, match="'fixtur'"):
        check_reset_options({"fixtur": "x"})
    with pytest.raises(seahaven.WorldBug, match="object"):
        check_reset_options(["fixture"])  # type: ignore[arg-type]


def test_serve_refuses_what_is_not_a_world() -> None:
    with pytest.raises(seahaven.WorldBug, match=r"seahaven\.World"):
        serve("payments")  # type: ignore[arg-type]


def test_the_command_line_spells_the_same_options() -> None:
    flags: dict[str, Any] = {"fixture": None, "seed": 5, "now": None, "clock_mode": "tick"}
    assert reset_options_from(None, flags) == {"seed": 5, "clock_mode": "tick"}
    assert reset_options_from('{"seed": 5}', dict.fromkeys(flags)) == {"seed": 5}
    with pytest.raises(typer.BadParameter, match="--seed, --clock-mode"):
        reset_options_from('{"seed": 5}', flags)


@dataclasses.dataclass
class Point:
    x: int
    y: int


@pytest.mark.parametrize(
    ("value", "structured"),
    [
        ({"a": 1}, {"a": 1}),
        (Point(1, 2), {"x": 1, "y": 2}),
        ([1, 2], None),
        ("text", None),
        (None, None),
    ],
)
def test_a_result_is_json_text_and_an_object_is_structured_too(value: Any, structured: Any) -> None:
    result = call_result(value)
    assert result.isError is False
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    rendered = json.loads(block.text)
    assert result.structuredContent == structured
    if structured is not None:
        assert rendered == structured
