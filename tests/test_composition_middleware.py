"""Middleware across routes: which chains a call descends, with whose context, and what it logs."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from composition_worlds import STAFF, add_echo_tools, make_payments, make_world

import seahaven

Trace = list[tuple[str, str, str]]


def _tracing(world: seahaven.World, trace: Trace) -> None:
    """Add a middleware to ``world`` that records (layer world, call name, call.node)."""

    @world.middleware
    def trace_layer(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        trace.append((world.name, call.name, call.node))
        return next_(ctx, call)


def _diamond(trace: Trace) -> seahaven.World:
    """company -> payments (pay_), and company -> shop (shop_) -> payments (s_): one shared node."""
    payments = make_payments()
    shop = make_world("shop")
    shop.add_world(payments, tool_prefix="s_", tool_allow_list=["count_charges"])
    host = make_world("company", STAFF)
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(shop, tool_prefix="shop_")
    for world in (host, shop, payments):
        _tracing(world, trace)
    return host


# --- the route's chain, root first ----------------------------------------------------------------


def test_a_call_descends_every_world_on_its_route_root_first() -> None:
    trace: Trace = []
    host = _diamond(trace)

    with host.instance() as inst:
        inst.call("shop_s_count_charges")

    assert trace == [
        ("company", "shop_s_count_charges", "payments"),
        ("shop", "shop_s_count_charges", "payments"),
        ("payments", "shop_s_count_charges", "payments"),
    ]


def test_two_routes_to_one_shared_node_each_run_their_own_middleware() -> None:
    trace: Trace = []
    host = _diamond(trace)

    with host.instance() as inst:
        inst.call("pay_count_charges")

    assert [layer for layer, _, _ in trace] == ["company", "payments"]


def test_a_hosts_own_tool_runs_only_the_hosts_chain() -> None:
    trace: Trace = []
    host = _diamond(trace)
    add_echo_tools(host, "hire")

    with host.instance() as inst:
        inst.call("hire")

    assert trace == [("company", "hire", "main")]


def test_middleware_order_within_one_world_is_registration_order() -> None:
    order: list[str] = []
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments)
    for world, label in ((host, "host-outer"), (host, "host-inner"), (payments, "child")):

        def layer(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any, label: str = label) -> Any:
            order.append(label)
            return next_(ctx, call)

        world.middleware(layer)

    with host.instance() as inst:
        inst.call("count_charges")
    assert order == ["host-outer", "host-inner", "child"]


def test_a_host_middleware_can_refuse_a_contributed_tool() -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")

    @host.middleware
    def gate(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        if call.node == "payments" and call.name == "pay_create_charge":
            raise seahaven.ToolError("forbidden", "this principal cannot charge")
        return next_(ctx, call)

    with host.instance() as inst:
        with pytest.raises(seahaven.ToolError, match="cannot charge"):
            inst.call("pay_create_charge", amount=1)
        assert inst.call("pay_count_charges") == {"count": 0}
        assert inst.inspect().rows("SELECT * FROM payments.charges") == []


# --- each layer with its own world's context ------------------------------------------------------


def test_each_layer_runs_with_its_own_worlds_context() -> None:
    payments = make_payments()
    host = make_world("company", STAFF)
    host.add_world(payments, tool_prefix="pay_")
    seen: dict[str, Any] = {}

    @host.instance_startup
    def sign_in(ctx: seahaven.Ctx) -> None:
        ctx.state["principal"] = "ada"

    @host.middleware
    def host_gate(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        seen["host principal"] = ctx.state.get("principal")
        seen["host tables"] = [row["name"] for row in ctx.db.rows("SELECT name FROM sqlite_master")]
        seen["host reaches child"] = ctx.worlds.payments.db.one("SELECT count(*) AS n FROM charges")
        return next_(ctx, call)

    @payments.middleware
    def child_layer(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        seen["child principal"] = ctx.state.get("principal")
        seen["child tables"] = [
            row["name"] for row in ctx.db.rows("SELECT name FROM sqlite_master")
        ]
        return next_(ctx, call)

    with host.instance() as inst:
        inst.call("pay_count_charges")

    assert seen["host principal"] == "ada"
    assert seen["child principal"] is None
    assert "staff" in seen["host tables"] and "charges" not in seen["host tables"]
    assert "charges" in seen["child tables"] and "staff" not in seen["child tables"]
    assert seen["host reaches child"] == {"n": 0}


def test_call_is_the_same_object_in_every_layer_and_names_the_owning_node() -> None:
    calls: list[seahaven.Call] = []
    payments = make_payments()
    shop = make_world("shop")
    shop.add_world(payments, name="billing", tool_prefix="s_")
    host = make_world("company")
    host.add_world(shop, tool_prefix="shop_")
    for world in (host, shop, payments):

        @world.middleware
        def keep_call(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
            calls.append(call)
            return next_(ctx, call)

    @payments.tool
    def whose_call(ctx: seahaven.Ctx) -> dict[str, str]:
        """Report the call the tool sees."""
        assert ctx.call is not None
        return {"name": ctx.call.name, "node": ctx.call.node}

    with host.instance() as inst:
        assert inst.call("shop_s_whose_call") == {
            "name": "shop_s_whose_call",
            "node": "shop/billing",
        }

    assert len(calls) == 3
    assert calls[0] is calls[1] is calls[2]
    assert calls[0].node == "shop/billing"
    assert calls[0].tool is payments.tools["whose_call"]


def test_call_node_is_main_for_a_world_that_adds_none() -> None:
    nodes: list[str] = []
    alone = make_world("alone")
    add_echo_tools(alone, "ping")

    @alone.middleware
    def keep_node(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        nodes.append(call.node)
        return next_(ctx, call)

    with alone.instance() as inst:
        inst.call("ping")
    assert nodes == ["main"]


# --- a handle call runs only the owner's chain ----------------------------------------------------


def test_a_handle_call_runs_only_the_owning_worlds_chain() -> None:
    trace: Trace = []
    host = _diamond(trace)

    @host.tool
    def count_directly(ctx: seahaven.Ctx) -> dict[str, int]:
        """Count charges through the payments handle."""
        counted: dict[str, int] = ctx.worlds.payments.call("count_charges")
        return counted

    with host.instance() as inst:
        inst.call("count_directly")

    assert trace == [
        ("company", "count_directly", "main"),
        ("payments", "count_charges", "payments"),
    ]


def test_a_nested_call_through_a_grandchilds_function_runs_only_its_owners_chain() -> None:
    trace: Trace = []
    host = _diamond(trace)
    count_charges = host.composition().by_path["payments"].world.tools["count_charges"].fn

    @host.tool
    def count_via_shop(ctx: seahaven.Ctx) -> dict[str, int]:
        """Reach the shop's payments by function, through the shop's handle."""
        counted: dict[str, int] = ctx.worlds.shop.call(count_charges)
        return counted

    with host.instance() as inst:
        assert inst.call("count_via_shop") == {"count": 0}

    assert trace == [
        ("company", "count_via_shop", "main"),
        ("payments", "count_charges", "payments"),
    ]


# --- the per-call log line ------------------------------------------------------------------------


def test_the_log_line_carries_the_node_and_marks_nested_calls_internal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments, name="billing", tool_prefix="pay_")

    @host.tool
    def invoice(ctx: seahaven.Ctx, amount: int) -> dict[str, object]:
        """Charge through the child."""
        charged: dict[str, object] = ctx.worlds.billing.call("create_charge", amount=amount)
        return charged

    with caplog.at_level(logging.INFO, logger="seahaven.dispatch"), host.instance() as inst:
        inst.call("invoice", amount=5)
        inst.call("pay_count_charges")

    lines = [record.getMessage() for record in caplog.records if record.name == "seahaven.dispatch"]
    assert len(lines) == 3
    nested, outer, direct = lines
    assert "tool=create_charge node=billing outcome=ok" in nested
    assert "internal=true" in nested
    assert "tool=invoice node=main outcome=ok" in outer
    assert "internal=false" in outer
    assert "tool=pay_count_charges node=billing outcome=ok" in direct
    assert "internal=false" in direct
    assert all(f"instance={inst.id}" in line for line in lines)


def test_a_failed_nested_call_logs_its_outcome(caplog: pytest.LogCaptureFixture) -> None:
    host = make_world("company")
    host.add_world(make_payments())

    @host.tool
    def bad(ctx: seahaven.Ctx) -> dict[str, str]:
        """Call the child with a bad argument and swallow the error."""
        try:
            ctx.worlds.payments.call("create_charge", amount="x")
        except seahaven.ArgumentError:
            return {"swallowed": "yes"}
        return {}

    with caplog.at_level(logging.INFO, logger="seahaven.dispatch"), host.instance() as inst:
        inst.call("bad")

    lines = [record.getMessage() for record in caplog.records if record.name == "seahaven.dispatch"]
    assert "outcome=tool_error:invalid_arguments" in lines[0]
    assert "internal=true" in lines[0]
    assert "outcome=ok" in lines[1] and "internal=false" in lines[1]
