"""The pieces ``seahaven mcp`` is made of, in process: option checks and result shapes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import typer
from mcp import types
from seahaven_mcp import call_result, check_reset_options, serve

import seahaven
from seahaven.cli.support import instance_options


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
    check = check_reset_options
    assert instance_options(None, flags, check=check) == {"seed": 5, "clock_mode": "tick"}
    assert instance_options('{"seed": 5}', dict.fromkeys(flags), check=check) == {"seed": 5}
    with pytest.raises(typer.BadParameter, match="--seed, --clock-mode"):
        instance_options('{"seed": 5}', flags, check=check)
    with pytest.raises(typer.BadParameter, match="control tool"):
        instance_options('{"control_tools": false}', dict.fromkeys(flags), check=check)


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


class Trickle:
    """A byte source that hands out a few bytes per read, so lines cross reads."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.step = data, step

    def read(self, size: int) -> bytes:
        taken, self.data = self.data[: min(size, self.step)], self.data[min(size, self.step) :]
        return taken


@pytest.mark.parametrize("step", [1, 2, 3, 7, 1 << 16])
def test_lines_are_split_across_reads_and_a_long_one_is_reported_once(step: int) -> None:
    import anyio
    from seahaven_mcp.stdio import read_lines

    data = b"one\n\ntwo\r\n" + b"x" * 25 + b"\nexactly10!\n" + b"y" * 11 + b"\nlast"

    async def collect() -> list[bytes | None]:
        return [line async for line in read_lines(Trickle(data, step), limit=10)]  # type: ignore[arg-type]

    assert anyio.run(collect) == [b"one", b"", b"two\r", None, b"exactly10!", None, b"last"]


def test_the_door_knows_the_sdk_s_methods() -> None:
    from seahaven_mcp.jsonrpc import NOTIFICATION_METHODS, REQUEST_METHODS

    assert {"initialize", "ping", "tools/list", "tools/call"} <= REQUEST_METHODS
    assert {"notifications/initialized", "notifications/cancelled"} <= NOTIFICATION_METHODS
