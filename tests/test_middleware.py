"""Middleware: ``(ctx, call, next_)``, outermost first, a frozen ``Call``, ``ctx.call`` always
the layer's own call, validation after the chain, and ``UnknownTool`` before it."""

from typing import Any

import pytest

import seahaven
from seahaven.world import Handler


class Forbidden(seahaven.ToolError):
    def __init__(self) -> None:
        super().__init__("FORBIDDEN", "not allowed")


def declare() -> seahaven.World:
    """A world with one tool that reports what it received."""
    world = seahaven.World(
        name="middleware",
        version="1.0.0",
        schema="CREATE TABLE t (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )

    @world.tool
    def add(ctx: seahaven.Ctx, a: int, b: int = 0) -> dict[str, Any]:
        """Add two numbers."""
        return {"sum": a + b}

    return world


def test_middleware_runs_in_registration_order_outermost_first() -> None:
    world = declare()
    trace: list[str] = []

    def layer(label: str) -> Any:
        def middleware(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
            trace.append(f"{label} in")
            result = next_(ctx, call)
            trace.append(f"{label} out")
            return result

        return middleware

    world.middleware(layer("first"))
    world.middleware(layer("second"))
    world.middleware(layer("third"))
    with world.instance() as inst:
        assert inst.call("add", a=1, b=2) == {"sum": 3}
    assert trace == ["first in", "second in", "third in", "third out", "second out", "first out"]


def test_a_middleware_sees_the_call_and_may_shape_the_result() -> None:
    world = declare()
    seen: list[tuple[str, dict[str, Any], str, str]] = []

    @world.middleware
    def wrap(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        seen.append((call.name, dict(call.arguments), call.tool.name, call.node))
        return {"wrapped": next_(ctx, call)}

    with world.instance() as inst:
        assert inst.call("add", a=2) == {"wrapped": {"sum": 2}}
    assert seen == [("add", {"a": 2}, "add", "main")]


def test_a_middleware_may_refuse_without_calling_the_tool() -> None:
    world = declare()
    ran: list[str] = []

    @world.middleware
    def gate(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        if call.arguments.get("a") == 13:
            raise Forbidden()
        return next_(ctx, call)

    @world.tool
    def record(ctx: seahaven.Ctx, a: int) -> None:
        ran.append("ran")

    with world.instance() as inst:
        with pytest.raises(Forbidden):
            inst.call("record", a=13)
        assert ran == []
        inst.call("record", a=1)
        assert ran == ["ran"]


def test_a_call_is_frozen_and_with_arguments_merges_into_a_copy() -> None:
    world = declare()
    checks: list[Any] = []

    @world.middleware
    def inspect_call(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        with pytest.raises(AttributeError, match="frozen"):
            call.arguments = {}  # type: ignore[misc]
        with pytest.raises(AttributeError):
            call.name = "other"  # type: ignore[misc]
        changed = call.with_arguments(b=10, c=1)
        checks.append(
            (
                changed is not call,
                changed.arguments,
                call.arguments,
                changed.name,
                changed.tool is call.tool,
                changed.node,
            )
        )
        return next_(ctx, call)

    with world.instance() as inst:
        inst.call("add", a=1, b=2)
    assert checks == [(True, {"a": 1, "b": 10, "c": 1}, {"a": 1, "b": 2}, "add", True, "main")]


def test_ctx_call_is_always_the_call_that_layer_holds() -> None:
    world = declare()
    seen: list[tuple[str, Any]] = []

    @world.middleware
    def outer(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        seen.append(("outer", ctx.call is call))
        return next_(ctx, call.with_arguments(b=5))

    @world.middleware
    def inner(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        assert ctx.call is not None
        seen.append(("inner", (ctx.call is call, dict(ctx.call.arguments))))
        return next_(ctx, call)

    @world.tool
    def show(ctx: seahaven.Ctx, a: int, b: int = 0) -> dict[str, Any]:
        assert ctx.call is not None
        return dict(ctx.call.arguments)

    with world.instance() as inst:
        assert inst.call("show", a=1) == {"a": 1, "b": 5}
    assert seen == [("outer", True), ("inner", (True, {"a": 1, "b": 5}))]


def test_validation_runs_after_the_middleware_so_it_can_fix_bad_arguments() -> None:
    world = declare()
    seen_raw: list[Any] = []

    @world.middleware
    def coerce(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        seen_raw.append(call.arguments["a"])
        if isinstance(call.arguments["a"], str):
            call = call.with_arguments(a=int(call.arguments["a"]))
        return next_(ctx, call)

    with world.instance() as inst:
        assert inst.call("add", a="5", b=1) == {"sum": 6}
    assert seen_raw == ["5"]


def test_an_argument_error_passes_through_the_chain() -> None:
    world = declare()
    caught: list[seahaven.ArgumentError] = []

    @world.middleware
    def observe(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        try:
            return next_(ctx, call)
        except seahaven.ArgumentError as error:
            caught.append(error)
            raise

    with world.instance() as inst, pytest.raises(seahaven.ArgumentError):
        inst.call("add", a="5", b="6")
    assert [v["loc"] for v in caught[0].violations] == [["a"], ["b"]]


def test_a_middleware_may_validate_for_typed_arguments() -> None:
    world = declare()
    typed: list[dict[str, Any]] = []

    @world.middleware
    def read_typed(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        typed.append(call.tool.validate(call.arguments))
        return next_(ctx, call)

    with world.instance() as inst:
        inst.call("add", a=1)
    assert typed == [{"a": 1, "b": 0}]


def test_unknown_tool_is_raised_before_any_middleware() -> None:
    world = declare()
    calls: list[str] = []

    @world.middleware
    def record(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        calls.append(call.name)
        return next_(ctx, call)

    with world.instance() as inst:
        with pytest.raises(seahaven.UnknownTool) as caught:
            inst.call("subtract", a=1)
        assert caught.value.to_dict() == {
            "code": "unknown_tool",
            "message": "unknown tool: subtract",
            "details": {"name": "subtract"},
        }
        assert calls == []
        assert inst.call_count == 0
        inst.call("add", a=1)
        assert calls == ["add"]


def test_middleware_does_not_run_for_startup_hooks_or_listings() -> None:
    world = declare()
    calls: list[str] = []

    @world.middleware
    def record(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        calls.append(call.name)
        return next_(ctx, call)

    @world.instance_startup
    def hook(ctx: seahaven.Ctx) -> None:
        ctx.state["started"] = True

    with world.instance() as inst:
        inst.tools()
    assert calls == []


def test_a_middleware_that_maps_errors_sees_what_the_tool_raised() -> None:
    world = declare()

    @world.middleware
    def error_handler(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        try:
            return next_(ctx, call)
        except seahaven.DbError as error:
            raise Forbidden() from error

    @world.tool
    def broken_sql(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("SELECT * FROM nowhere")

    with world.instance() as inst:
        with pytest.raises(Forbidden) as caught:
            inst.call("broken_sql")
        assert isinstance(caught.value.__cause__, seahaven.DbError)


def test_passing_something_other_than_a_call_to_next_is_a_world_bug() -> None:
    world = declare()

    @world.middleware
    def confused(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        return next_(ctx, dict(call.arguments))  # type: ignore[arg-type]

    with world.instance() as inst, pytest.raises(seahaven.WorldBug, match="pass \\(ctx, call\\)"):
        inst.call("add", a=1)


def test_middleware_sees_the_same_ctx_members_as_the_tool() -> None:
    world = declare()
    seen: list[Any] = []

    @world.middleware
    def observe(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        seen.append((ctx.clock, ctx.state, ctx.instance.id))
        return next_(ctx, call)

    @world.tool
    def look(ctx: seahaven.Ctx) -> None:
        seen.append((ctx.clock, ctx.state, ctx.instance.id))

    with world.instance() as inst:
        inst.call("look")
    (m_clock, m_state, m_id), (t_clock, t_state, t_id) = seen
    assert m_clock is t_clock and m_state is t_state and m_id == t_id
