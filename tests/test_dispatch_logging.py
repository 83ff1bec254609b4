"""Logging: one line per call on ``seahaven.dispatch`` with the tool, the node, the outcome and
the duration; a traceback at ERROR only for an exception other than a ``ToolError``."""

import logging
import re
from typing import Any

import pytest

import seahaven
from seahaven.world import Handler

LOGGER = "seahaven.dispatch"
LINE = re.compile(
    r"call tool=(?P<tool>\S+) node=(?P<node>\S+) outcome=(?P<outcome>\S+) "
    r"duration_ms=(?P<duration>[0-9.]+)"
)


class Refused(seahaven.ToolError):
    def __init__(self) -> None:
        super().__init__("REFUSED", "no")


def declare() -> seahaven.World:
    """A world with a tool for every outcome."""
    world = seahaven.World(
        name="logging",
        version="1.0.0",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )

    @world.tool
    def ok(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    @world.tool
    def refuse(ctx: seahaven.Ctx) -> None:
        raise Refused()

    @world.tool
    def crash(ctx: seahaven.Ctx) -> None:
        raise ZeroDivisionError("a bug in world code")

    @world.tool
    def typed(ctx: seahaven.Ctx, n: int) -> int:
        return n

    return world


def call_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, str]]:
    """The per-call lines logged so far, parsed."""
    lines = []
    for record in caplog.records:
        if record.name == LOGGER and record.levelno == logging.INFO:
            match = LINE.search(record.getMessage())
            if match:
                lines.append(match.groupdict())
    return lines


def errors(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The records logged at ERROR or above on the dispatch logger."""
    return [r for r in caplog.records if r.name == LOGGER and r.levelno >= logging.ERROR]


def test_one_line_per_call_with_tool_node_outcome_and_duration(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    with declare().instance() as inst:
        inst.call("ok")
        inst.call("ok")
        with pytest.raises(Refused):
            inst.call("refuse")
        with pytest.raises(seahaven.ArgumentError):
            inst.call("typed", n="1")
    lines = call_lines(caplog)
    assert [(line["tool"], line["node"], line["outcome"]) for line in lines] == [
        ("ok", "main", "ok"),
        ("ok", "main", "ok"),
        ("refuse", "main", "tool_error:REFUSED"),
        ("typed", "main", "tool_error:invalid_arguments"),
    ]
    assert all(float(line["duration"]) >= 0 for line in lines)
    assert errors(caplog) == []


def test_the_line_names_the_instance(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    with declare().instance() as inst:
        inst.call("ok")
        instance_id = inst.id
    (record,) = [r for r in caplog.records if r.name == LOGGER]
    assert instance_id in record.getMessage()


def test_an_unexpected_exception_is_logged_at_error_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    with declare().instance() as inst, pytest.raises(ZeroDivisionError):
        inst.call("crash")
    (record,) = errors(caplog)
    assert record.exc_info is not None
    assert record.exc_info[0] is ZeroDivisionError
    assert "crash" in record.getMessage()
    assert "ZeroDivisionError" in caplog.text
    assert "a bug in world code" in caplog.text
    assert [line["outcome"] for line in call_lines(caplog)] == ["error:ZeroDivisionError"]


def test_a_world_bug_escaping_the_chain_is_logged_at_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    world = declare()

    @world.tool
    def returns_bytes(ctx: seahaven.Ctx) -> Any:
        return b"raw"

    caplog.set_level(logging.INFO, logger=LOGGER)
    with world.instance() as inst, pytest.raises(seahaven.WorldBug):
        inst.call("returns_bytes")
    (record,) = errors(caplog)
    assert record.exc_info is not None and record.exc_info[0] is seahaven.WorldBug


@pytest.mark.parametrize("tool", ["refuse", "typed"])
def test_a_tool_error_is_not_logged_at_error(caplog: pytest.LogCaptureFixture, tool: str) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    with declare().instance() as inst, pytest.raises(seahaven.ToolError):
        inst.call(tool, **({"n": "x"} if tool == "typed" else {}))
    assert errors(caplog) == []


def test_a_middleware_that_maps_a_bug_to_a_tool_error_stops_the_error_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    world = declare()

    @world.middleware
    def error_handler(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        try:
            return next_(ctx, call)
        except ZeroDivisionError as error:
            raise Refused() from error

    caplog.set_level(logging.DEBUG, logger=LOGGER)
    with world.instance() as inst, pytest.raises(Refused):
        inst.call("crash")
    assert errors(caplog) == []
    # A ToolError raised from another exception keeps its traceback, at DEBUG.
    debug = [r for r in caplog.records if r.name == LOGGER and r.levelno == logging.DEBUG]
    assert len(debug) == 1 and debug[0].exc_info is not None
    assert [line["outcome"] for line in call_lines(caplog)] == ["tool_error:REFUSED"]


def test_an_unknown_tool_is_not_logged_as_an_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    with declare().instance() as inst, pytest.raises(seahaven.UnknownTool):
        inst.call("missing")
    assert errors(caplog) == []


def test_nothing_is_formatted_when_info_is_off(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    with declare().instance() as inst:
        inst.call("ok")
    assert [r for r in caplog.records if r.name == LOGGER] == []
