"""Registration: the four verbs as decorators and as calls, ``Tool`` itself, and everything
registration refuses, each refused at once with a ``WorldBug`` naming the tool and the parameter."""

from __future__ import annotations

import enum
import functools
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any, Literal

import pydantic
import pytest
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

import seahaven
from seahaven.world import Handler


def declare(name: str = "registry") -> seahaven.World:
    """A world with one table and nothing registered."""
    return seahaven.World(
        name=name,
        version="1.0.0",
        schema="CREATE TABLE items (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
    )


def refused(world: seahaven.World, fn: Callable[..., Any], *fragments: str) -> str:
    """Register ``fn`` as a tool, expect a WorldBug, and check the message names every fragment."""
    with pytest.raises(seahaven.WorldBug) as caught:
        world.tool(fn)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, message
    assert fn.__name__ not in world.tools
    return message


# --- tools: the four spellings -------------------------------------------------------------------


def test_tool_as_a_bare_decorator_returns_the_function() -> None:
    world = declare()

    @world.tool
    def get_item(ctx: seahaven.Ctx, item_id: str) -> dict[str, Any]:
        """Fetch one item.

        The whole docstring is the description.
        """
        return {"id": item_id}

    assert callable(get_item) and get_item.__name__ == "get_item"
    tool = world.tools["get_item"]
    assert tool.fn is get_item
    assert tool.description == "Fetch one item.\n\nThe whole docstring is the description."
    assert tool.transaction is True


def test_tool_as_a_decorator_with_options() -> None:
    world = declare()

    @world.tool(name="items-get", description="Read one.", transaction=False)
    def get_item(ctx: seahaven.Ctx) -> dict[str, Any]:
        """Ignored: the description was given."""
        return {}

    tool = world.tools["items-get"]
    assert (tool.name, tool.description, tool.transaction, tool.fn) == (
        "items-get",
        "Read one.",
        False,
        get_item,
    )
    assert "get_item" not in world.tools


def test_tool_as_a_call_with_and_without_options() -> None:
    world = declare()

    def ping(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {"pong": True}

    assert world.tool(ping) is ping
    world.tool(ping, name="ping_again")
    assert list(world.tools) == ["ping", "ping_again"]
    assert world.tools["ping"].description == ""


def test_tool_accepts_a_built_tool() -> None:
    world = declare()

    def ping(ctx: seahaven.Ctx) -> dict[str, Any]:
        """Answer."""
        return {}

    built = seahaven.Tool.from_function(ping, name="ping_built", transaction=False)
    world.tool(built)
    assert world.tools["ping_built"] is built


@pytest.mark.parametrize(
    ("keyword", "value"), [("name", "other"), ("description", "d"), ("transaction", False)]
)
def test_a_built_tool_with_a_keyword_is_refused(keyword: str, value: Any) -> None:
    world = declare()

    def ping(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    built = seahaven.Tool.from_function(ping)
    with pytest.raises(seahaven.WorldBug, match=f"'ping'.*{keyword}.*factory"):
        world.tool(built, **{keyword: value})
    assert world.tools == {}


def test_the_ctx_annotation_may_be_bare_parameterised_or_absent() -> None:
    world = declare()

    @world.tool
    def bare(ctx, n: int) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        return {}

    @world.tool
    def typed(ctx: seahaven.Ctx[seahaven.Worlds], n: int) -> dict[str, Any]:
        return {}

    @world.tool
    def positional_only(ctx: seahaven.Ctx, /, n: int) -> dict[str, Any]:
        return {}

    assert list(world.tools) == ["bare", "typed", "positional_only"]


# --- tools: what registration refuses ------------------------------------------------------------


def test_a_duplicate_name_is_refused_and_the_first_kept() -> None:
    world = declare()

    @world.tool
    def ping(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    def other(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    with pytest.raises(seahaven.WorldBug, match="already has a tool named 'ping'"):
        world.tool(other, name="ping")
    assert world.tools["ping"].fn is ping


@pytest.mark.parametrize("reserved", ["reset", "step", "state", "close", "controller_run_sql"])
def test_reserved_names_are_refused(reserved: str) -> None:
    world = declare()

    def tool(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    with pytest.raises(seahaven.WorldBug, match=f"'{reserved}' is a reserved tool name"):
        world.tool(tool, name=reserved)
    assert world.tools == {}


@pytest.mark.parametrize("bad", ["", "has space", "dot.ted", "x" * 129, "émoji"])
def test_a_name_outside_the_tool_name_rule_is_refused(bad: str) -> None:
    world = declare()

    def tool(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    with pytest.raises(seahaven.WorldBug, match="not a valid tool name"):
        world.tool(tool, name=bad)


def test_an_async_def_is_refused() -> None:
    async def fetch(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    refused(declare(), fetch, "'fetch'", "async def")


def test_a_generator_is_refused() -> None:
    def items(ctx: seahaven.Ctx) -> Iterator[int]:
        yield 1

    refused(declare(), items, "'items'", "generator")


def test_an_async_generator_is_refused() -> None:
    async def items(ctx: seahaven.Ctx) -> AsyncIterator[int]:
        yield 1

    refused(declare(), items, "'items'", "async generator")


def test_a_function_without_parameters_is_refused() -> None:
    def nothing() -> dict[str, Any]:
        return {}

    refused(declare(), nothing, "'nothing'", "first parameter must be the context")


def test_a_keyword_only_context_is_refused() -> None:
    def tool(*, ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "'ctx'", "positional")


def test_star_args_in_place_of_the_context_is_refused() -> None:
    def tool(*args: Any) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "'args'", "positional")


def test_a_context_annotated_with_another_type_is_refused() -> None:
    def tool(ctx: dict[str, Any], n: int) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "'ctx'", "seahaven.Ctx")


def test_an_argument_without_an_annotation_is_refused() -> None:
    def tool(ctx: seahaven.Ctx, count) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        return {}

    refused(declare(), tool, "'tool'", "parameter 'count'", "no type annotation")


def test_a_positional_only_argument_is_refused() -> None:
    def tool(ctx: seahaven.Ctx, count: int, /) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "parameter 'count'", "positional-only")


def test_star_args_is_refused() -> None:
    def tool(ctx: seahaven.Ctx, *rest: int) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "parameter 'rest'", "*args")


def test_star_star_kwargs_is_refused() -> None:
    def tool(ctx: seahaven.Ctx, **options: int) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "parameter 'options'", "**kwargs")


@pytest.mark.parametrize("default", [[], {}, set()], ids=["list", "dict", "set"])
def test_a_mutable_default_is_refused(default: Any) -> None:
    def tool(ctx: seahaven.Ctx, tags: Any = default) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "parameter 'tags'", "mutable default")


def test_an_immutable_default_is_accepted() -> None:
    world = declare()

    @world.tool
    def tool(ctx: seahaven.Ctx, tags: tuple[str, ...] = (), limit: int | None = None) -> Any:
        return {}

    assert "tool" in world.tools


class LooseModel(BaseModel):
    """No config of its own: inherits pydantic's lax default."""

    count: int


class ExplicitlyLax(BaseModel):
    """Lax on purpose, which is allowed."""

    model_config = ConfigDict(strict=False)

    count: int


class StrictHoldingLoose(BaseModel):
    """Strict itself, but holding a loose model one level down."""

    model_config = ConfigDict(strict=True)

    children: list[LooseModel]


@pydantic.dataclasses.dataclass
class LooseDataclass:
    count: int


@pydantic.with_config(ConfigDict(str_strip_whitespace=True))
class ConfiguredTypedDict(TypedDict):
    count: int


@pytest.mark.parametrize(
    ("annotation", "culprit"),
    [
        (LooseModel, "LooseModel"),
        (list[dict[str, LooseModel]], "LooseModel"),
        (LooseModel | None, "LooseModel"),
        (Annotated[LooseModel, Field(description="x")], "LooseModel"),
        (StrictHoldingLoose, "LooseModel"),
        (LooseDataclass, "LooseDataclass"),
        (ConfiguredTypedDict, "ConfiguredTypedDict"),
    ],
)
def test_a_nested_type_with_a_config_that_does_not_set_strict_is_refused(
    annotation: Any, culprit: str
) -> None:
    def tool(ctx: seahaven.Ctx, payload: Any) -> dict[str, Any]:
        return {}

    tool.__annotations__["payload"] = annotation
    refused(declare(), tool, "'tool'", "parameter 'payload'", culprit, "strict")


def test_a_nested_type_that_sets_strict_either_way_is_accepted() -> None:
    world = declare()

    @world.tool
    def tool(ctx: seahaven.Ctx, lax: ExplicitlyLax) -> dict[str, Any]:
        return {"count": lax.count}

    with world.instance() as inst:
        # strict=False in the model's own config is the author's choice.
        assert inst.call("tool", lax={"count": "5"}) == {"count": 5}


class Colour(enum.Enum):
    RED = "red"


def test_a_literal_of_a_value_json_cannot_send_is_refused() -> None:
    def tool(ctx: seahaven.Ctx, colour: Literal[Colour.RED]) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "parameter 'colour'", "Literal", "Colour.RED")


def test_an_argument_pydantic_cannot_give_a_schema_is_refused_by_name() -> None:
    def tool(ctx: seahaven.Ctx, fine: int, hook: Callable[[], int]) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "parameter 'hook'", "JSON schema")


class Opaque:
    """A class pydantic knows nothing about."""


def test_an_argument_pydantic_cannot_build_is_refused_by_name() -> None:
    def tool(ctx: seahaven.Ctx, fine: int, thing: Opaque) -> dict[str, Any]:
        return {}

    refused(declare(), tool, "'tool'", "parameter 'thing'", "Opaque")


def test_a_tool_that_is_not_callable_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="must be a function"):
        declare().tool(42)  # type: ignore[call-overload]


@pytest.mark.parametrize("returns", [bytes, set[str], frozenset[int]])
def test_a_declared_bytes_or_set_result_is_refused_at_registration(returns: Any) -> None:
    def tool(ctx: seahaven.Ctx) -> Any:
        return None

    tool.__annotations__["return"] = returns
    refused(declare(), tool, "'tool'", "bytes and sets are not results")


def test_a_failed_registration_leaves_the_registry_unchanged() -> None:
    world = declare()

    @world.tool
    def kept(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    def broken(ctx: seahaven.Ctx, x) -> dict[str, Any]:  # type: ignore[no-untyped-def]
        return {}

    with pytest.raises(seahaven.WorldBug):
        world.tool(broken)
    assert list(world.tools) == ["kept"]


# --- Tool ----------------------------------------------------------------------------------------


def test_tool_from_function_builds_the_model_and_schema() -> None:
    def add(ctx: seahaven.Ctx, body: str, pinned: bool = False) -> dict[str, Any]:
        """Write a note down."""
        return {}

    tool = seahaven.Tool.from_function(add)
    assert (tool.name, tool.description, tool.fn, tool.transaction) == (
        "add",
        "Write a note down.",
        add,
        True,
    )
    assert issubclass(tool.params, BaseModel)
    assert tool.schema["type"] == "object"
    assert tool.schema["required"] == ["body"]
    assert tool.schema["properties"]["pinned"]["default"] is False
    assert tool.schema["additionalProperties"] is False


def test_tool_from_function_applies_every_registration_check() -> None:
    def broken(ctx: seahaven.Ctx, *rest: int) -> dict[str, Any]:
        return {}

    with pytest.raises(seahaven.WorldBug, match=r"'broken'.*'rest'"):
        seahaven.Tool.from_function(broken)


def test_tool_from_function_cannot_make_a_control_tool() -> None:
    def tool(ctx: seahaven.Ctx) -> dict[str, Any]:
        return {}

    with pytest.raises(TypeError):
        seahaven.Tool.from_function(tool, control=True)  # type: ignore[call-arg]


def test_a_tool_is_not_built_by_hand() -> None:
    with pytest.raises(TypeError, match="from_function"):
        seahaven.Tool()


def test_tool_validate_returns_python_objects_by_parameter_name() -> None:
    def transfer(
        ctx: seahaven.Ctx, from_: Annotated[str, Field(alias="from")], amount: int
    ) -> dict[str, Any]:
        return {}

    tool = seahaven.Tool.from_function(transfer)
    assert tool.validate({"from": "a", "amount": 5}) == {"from_": "a", "amount": 5}
    with pytest.raises(seahaven.ArgumentError) as caught:
        tool.validate({"from": "a", "amount": "5"})
    assert [violation["loc"] for violation in caught.value.violations] == [["amount"]]


def test_tool_listing_is_a_fresh_copy_each_time() -> None:
    def echo(ctx: seahaven.Ctx, text: str) -> dict[str, Any]:
        """Say it back."""
        return {}

    tool = seahaven.Tool.from_function(echo)
    listing = tool.listing()
    assert listing == {"name": "echo", "description": "Say it back.", "input_schema": tool.schema}
    listing["input_schema"]["properties"].clear()
    listing["name"] = "changed"
    assert tool.listing()["name"] == "echo"
    assert "text" in tool.listing()["input_schema"]["properties"]


# --- middleware ----------------------------------------------------------------------------------


def test_middleware_as_a_decorator_and_as_a_call() -> None:
    world = declare()

    @world.middleware
    def first(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        return next_(ctx, call)

    @world.middleware()
    def second(ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
        return next_(ctx, call)

    class Timing:
        def __call__(self, ctx: seahaven.Ctx, call: seahaven.Call, next_: Handler) -> Any:
            return next_(ctx, call)

    timing = Timing()
    assert world.middleware(timing) is timing
    partial = functools.partial(lambda tag, ctx, call, next_: next_(ctx, call), "tag")
    world.middleware(partial)
    assert world.middlewares == (first, second, timing, partial)


@pytest.mark.parametrize(
    "bad",
    [
        lambda ctx, call: None,
        lambda ctx, call, next_, extra: None,
        lambda: None,
        lambda ctx, *, call, next_: None,
    ],
    ids=["two", "four", "none", "keyword-only"],
)
def test_a_middleware_that_cannot_take_three_positional_arguments_is_refused(bad: Any) -> None:
    world = declare()
    with pytest.raises(seahaven.WorldBug, match="three positional arguments"):
        world.middleware(bad)
    assert world.middlewares == ()


def test_a_middleware_that_is_not_callable_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="not callable"):
        declare().middleware("log everything")


# --- startup hooks -------------------------------------------------------------------------------


def test_instance_startup_as_a_decorator_and_as_a_call() -> None:
    world = declare()

    @world.instance_startup
    def remember(ctx: seahaven.Ctx, *, user_id: str = "u1") -> None:
        ctx.state["user_id"] = user_id

    def plain(ctx: seahaven.Ctx) -> None:
        ctx.state["plain"] = True

    assert world.instance_startup(plain) is plain

    @world.instance_startup()
    def positional_only(ctx: seahaven.Ctx, /, *, team: str = "core") -> None:
        ctx.state["team"] = team

    assert world.startup_hooks == (remember, plain, positional_only)
    assert world.accepted_startup_kwargs == {"user_id", "team"}


@pytest.mark.parametrize(
    "bad",
    [
        lambda: None,
        lambda *, user_id: None,
        lambda ctx, user_id: None,
        lambda ctx, user_id="u": None,
        lambda *args: None,
        lambda ctx, *args: None,
    ],
    ids=["none", "keyword-only ctx", "two", "two with default", "star-args", "ctx and star-args"],
)
def test_a_hook_whose_context_is_not_its_only_positional_parameter_is_refused(bad: Any) -> None:
    world = declare()
    with pytest.raises(seahaven.WorldBug, match="one and only positional parameter"):
        world.instance_startup(bad)
    assert world.startup_hooks == ()


def test_a_hook_may_take_any_keyword_including_the_instance_parameters() -> None:
    world = declare()

    @world.instance_startup
    def hook(
        ctx: seahaven.Ctx,
        *,
        fixture: str = "",
        seed: int = 0,
        now: str = "",
        clock_mode: str = "",
        state_format: str = "",
        control_tools: bool = False,
    ) -> None:
        ctx.state["got"] = (fixture, seed, now, clock_mode, state_format, control_tools)

    assert world.accepted_startup_kwargs == {
        "fixture",
        "seed",
        "now",
        "clock_mode",
        "state_format",
        "control_tools",
    }


def test_a_hook_that_is_not_callable_is_refused() -> None:
    with pytest.raises(seahaven.WorldBug, match="not callable"):
        declare().instance_startup(3)


# --- state formats -------------------------------------------------------------------------------


def test_state_format_as_a_decorator_and_as_a_call() -> None:
    world = declare()

    @world.state_format("registry.summary/1")
    def summary(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"kind": "summary"}

    def counts(world: seahaven.World, instance: seahaven.Instance | None) -> dict[str, Any]:
        return {"kind": "counts"}

    assert world.state_format("registry.counts/2")(counts) is counts
    assert world.state_formats == ("registry.summary/1", "registry.counts/2")
    assert world.resolve_state_format("registry.counts/2") is counts
    assert world.resolve_state_format("seahaven.state/1") is not None


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("summary", "<family>/<major>"),
        ("registry.summary/0", "<family>/<major>"),
        ("registry.summary/v1", "<family>/<major>"),
        ("seahaven.summary/1", "reserved"),
        ("seahaven.state/1", "reserved"),
    ],
)
def test_a_bad_state_format_name_is_refused(name: str, fragment: str) -> None:
    world = declare()
    with pytest.raises(seahaven.WorldBug, match=fragment):
        world.state_format(name)
    assert world.state_formats == ()


def test_a_duplicate_state_format_is_refused() -> None:
    world = declare()
    world.state_format("registry.summary/1")(lambda world, instance: {})
    with pytest.raises(seahaven.WorldBug, match="already registers"):
        world.state_format("registry.summary/1")


def test_a_formatter_that_cannot_be_called_as_world_instance_is_refused() -> None:
    world = declare()
    with pytest.raises(seahaven.WorldBug, match=r"\(world, instance\)"):
        world.state_format("registry.summary/1")(lambda world: {})
    assert world.state_formats == ()


def test_resolving_an_unknown_state_format_names_the_known_ones() -> None:
    world = declare()
    with pytest.raises(seahaven.WorldBug, match=r"seahaven.state/1"):
        world.resolve_state_format("registry.nothing/1")


# --- what the refusals have in common ------------------------------------------------------------


def test_every_refusal_is_a_world_bug_and_a_seahaven_error() -> None:
    world = declare()

    def tool(ctx: seahaven.Ctx, x) -> Any:  # type: ignore[no-untyped-def]
        return {}

    registrations: list[Callable[[], Any]] = [
        lambda: world.tool(tool),
        lambda: world.middleware(lambda: None),
        lambda: world.instance_startup(lambda: None),
        lambda: world.state_format("bad"),
    ]
    for register in registrations:
        with pytest.raises(seahaven.WorldBug) as caught:
            register()
        assert isinstance(caught.value, seahaven.SeahavenError)
        assert not isinstance(caught.value, seahaven.ToolError)
