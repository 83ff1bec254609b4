"""The error handler: what the agent sees when arguments, SQL or world code go wrong."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

import pytest
import seahaven
from conftest import Refused

from chat_world.errors import NotFound

pytestmark = pytest.mark.seahaven(fixture="team_workspace")


def test_every_argument_violation_is_reported_at_once(refused: Refused) -> None:
    error = refused("INVALID_INPUT", "list_users", limit=0, include_deactivated="yes", colour=1)
    assert error.details is not None
    fields = sorted(violation["field"] for violation in error.details["violations"])
    assert fields == ["colour", "include_deactivated", "limit"]
    assert "limit" in error.message and "colour" in error.message


def test_an_argument_error_is_invalid_args_to_a_harness_whatever_its_code(
    refused: Refused, instance: seahaven.Instance
) -> None:
    error = refused("INVALID_INPUT", "list_users", limit="5")
    assert error.error_type == "invalid_args"
    nested: list[object] = []
    for _ in range(700):
        nested = [nested]
    deep = refused("INVALID_INPUT", "list_users", limit=nested)
    assert deep.error_type == "invalid_args"
    # The world's own refusal of a value that is well typed is an execution error.
    missing = refused("NOT_FOUND", "get_user", user_id="U_nobody")
    assert missing.error_type == "execution_error"
    assert instance.state()["call_count"] == 3


def test_a_missing_argument_is_invalid_input(refused: Refused) -> None:
    error = refused("INVALID_INPUT", "post_message", text="hello")
    assert error.details is not None
    assert [violation["field"] for violation in error.details["violations"]] == ["channel_id"]


def test_strict_types_are_not_coerced(refused: Refused) -> None:
    refused("INVALID_INPUT", "list_users", limit="5")
    refused("INVALID_INPUT", "list_channels", include_private=1)


def _with_tool(world: seahaven.World, tool: Callable[..., Any]) -> seahaven.World:
    # A copy, so the session's world keeps exactly the tools it ships with.
    extended = copy.copy(world)
    extended.tool(tool)
    return extended


def test_a_database_failure_reaches_the_agent_as_internal_and_the_log_in_full(
    world: seahaven.World, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_query(ctx: seahaven.Ctx) -> dict[str, object]:
        """A tool whose SQL names a table the schema does not have."""
        ctx.db.execute("INSERT INTO no_such_table VALUES (1)")
        return {}

    with (
        _with_tool(world, broken_query).instance() as inst,
        caplog.at_level(logging.ERROR, logger="chat_world"),
        pytest.raises(seahaven.ToolError) as raised,
    ):
        inst.call("broken_query")
    assert raised.value.code == "INTERNAL"
    assert isinstance(raised.value.__cause__, seahaven.DbError)
    assert "no_such_table" not in raised.value.message
    (logged,) = [r for r in caplog.records if r.name == "chat_world"]
    assert "database error under broken_query" in logged.getMessage()
    assert logged.exc_info is not None


def test_an_unexpected_exception_is_internal_and_logged(
    world: seahaven.World, caplog: pytest.LogCaptureFixture
) -> None:
    def buggy(ctx: seahaven.Ctx) -> dict[str, object]:
        """A tool with a bug in it."""
        return {"ratio": 1 / 0}

    with (
        _with_tool(world, buggy).instance() as inst,
        caplog.at_level(logging.ERROR, logger="chat_world"),
        pytest.raises(seahaven.ToolError) as raised,
    ):
        inst.call("buggy")
    assert raised.value.code == "INTERNAL"
    assert isinstance(raised.value.__cause__, ZeroDivisionError)
    assert any("unexpected error under buggy" in r.getMessage() for r in caplog.records)


def test_a_world_bug_passes_through_unchanged(world: seahaven.World) -> None:
    bug = seahaven.WorldBug("the author got something wrong")

    def misuses(ctx: seahaven.Ctx) -> dict[str, object]:
        """A tool that reports an authoring mistake."""
        raise bug

    with (
        _with_tool(world, misuses).instance() as inst,
        pytest.raises(seahaven.WorldBug) as raised,
    ):
        inst.call("misuses")
    assert raised.value is bug


def test_the_worlds_own_errors_pass_through_unchanged(world: seahaven.World) -> None:
    own = NotFound("widget", "w1")

    def looks_for_a_widget(ctx: seahaven.Ctx) -> dict[str, object]:
        """A tool that raises one of the world's own errors."""
        raise own

    with (
        _with_tool(world, looks_for_a_widget).instance() as inst,
        pytest.raises(seahaven.ToolError) as raised,
    ):
        inst.call("looks_for_a_widget")
    assert raised.value is own
    assert raised.value.to_dict() == {
        "code": "NOT_FOUND",
        "message": "widget w1 not found",
        "details": {"kind": "widget", "key": "w1"},
    }


def test_a_failed_call_writes_nothing(instance: seahaven.Instance, refused: Refused) -> None:
    refused("NAME_TAKEN", "create_channel", name="general")
    assert instance.change_log() == []
    assert instance.call_count == 1
