"""Sealing: the tree is checked at first use, cached, and sealed again after any registration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
import pytest
from composition_worlds import (
    add_echo_tools,
    assert_raised_on_line_with,
    make_payments,
    make_world,
    surface,
)

import seahaven
from seahaven.declaration.composition import attach_limit

HERE = Path(__file__).name


def _collide_later(host: seahaven.World) -> None:
    """Break ``host``'s seal after it was used: its own tool now shares a child's name."""
    add_echo_tools(host, "create_charge")


def _host_with_payments() -> seahaven.World:
    host = make_world("company")
    host.add_world(make_payments())
    return host


# --- lazy, at the first use -----------------------------------------------------------------------


def test_the_seal_waits_for_the_first_use() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_allow_list=["missing"])

    with pytest.raises(seahaven.WorldBug, match="'missing'") as raised:
        host.composition()
    assert_raised_on_line_with(raised, "host.composition()")


def test_making_an_instance_seals_first(tmp_path: Path) -> None:
    host = make_world("company", work_dir=tmp_path)
    host.add_world(make_payments(), tool_allow_list=["missing"])

    with pytest.raises(seahaven.WorldBug, match="'missing'") as raised:
        host.instance()

    assert_raised_on_line_with(raised, "host.instance()")
    assert list(tmp_path.iterdir()) == []


def test_listing_the_tools_of_an_instance_seals_again() -> None:
    host = _host_with_payments()
    with host.instance() as inst:
        assert surface(inst) == ["create_charge", "count_charges"]
        _collide_later(host)

        with pytest.raises(seahaven.WorldBug, match="two routes produce") as raised:
            inst.tools()
        assert_raised_on_line_with(raised, "inst.tools()")


def test_a_call_seals_again() -> None:
    host = _host_with_payments()
    with host.instance() as inst:
        inst.call("count_charges")
        _collide_later(host)

        with pytest.raises(seahaven.WorldBug, match="two routes produce") as raised:
            inst.call("count_charges")
        assert_raised_on_line_with(raised, "inst.call(")
        assert inst.call_count == 1


def test_a_freeze_seals_again(tmp_path: Path) -> None:
    host = make_world("company", fixtures_dir=tmp_path / "fixtures")
    host.add_world(make_payments())
    with host.instance() as inst:
        _collide_later(host)

        with pytest.raises(seahaven.WorldBug, match="two routes produce") as raised:
            inst.freeze("after", "frozen after the tree broke")
        assert_raised_on_line_with(raised, "inst.freeze(")
    assert not (tmp_path / "fixtures" / "after").exists()


# --- cached, and invalidated by any registration --------------------------------------------------


def test_the_seal_is_cached_while_nothing_registers() -> None:
    host = _host_with_payments()
    sealed = host.composition()

    with host.instance() as inst:
        inst.call("count_charges")
        inst.tools()

    assert host.composition() is sealed


def test_any_registration_anywhere_seals_again() -> None:
    host = _host_with_payments()
    sealed = host.composition()
    unrelated = make_world("unrelated")
    add_echo_tools(unrelated, "ping")

    resealed = host.composition()
    assert resealed is not sealed
    assert [entry.name for entry in resealed.surface] == [entry.name for entry in sealed.surface]
    assert host.composition() is resealed


def test_a_tool_registered_on_a_grandchild_after_the_first_seal_appears() -> None:
    grandchild = make_world("ledger")
    child = make_world("shop")
    child.add_world(grandchild)
    host = make_world("company")
    host.add_world(child)
    with host.instance() as inst:
        assert surface(host) == surface(inst) == []

        add_echo_tools(grandchild, "post_entry")

        assert surface(host) == surface(inst) == ["post_entry"]
        assert inst.call("post_entry") == {"world": "ledger", "tool": "post_entry"}
        assert inst.call_log()[0].tool == "post_entry"


def test_middleware_registered_after_the_first_seal_runs() -> None:
    child = make_payments()
    host = make_world("company")
    host.add_world(child)
    seen: list[str] = []
    with host.instance() as inst:
        inst.call("count_charges")

        @child.middleware
        def trace(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
            seen.append(call.name)
            return next_(ctx, call)

        inst.call("count_charges")
    assert seen == ["count_charges"]


def test_an_instance_refuses_a_tree_that_now_resolves_to_other_stores() -> None:
    host = make_world("company")
    with host.instance() as inst:
        host.add_world(make_payments())

        with pytest.raises(seahaven.WorldBug, match="now resolves to other stores"):
            inst.tools()
        # Every use of the tree checks it first: a snapshot, a freeze, a call.
        with pytest.raises(seahaven.WorldBug, match="now resolves to other stores"):
            inst.snapshot()
        with pytest.raises(seahaven.WorldBug, match="now resolves to other stores"):
            inst.freeze("later", "a fixture of a tree that changed")
        with pytest.raises(seahaven.WorldBug, match="now resolves to other stores"):
            inst.call(42)


# --- the checks the seal makes --------------------------------------------------------------------


@pytest.mark.parametrize("keyword", ["tool_allow_list", "tool_block_list"])
def test_a_list_naming_a_tool_the_added_world_does_not_contribute(keyword: str) -> None:
    host = make_world("company")
    arguments: dict[str, Any] = {keyword: ["create_charge", "refund"]}
    host.add_world(make_payments(), name="billing", **arguments)

    with pytest.raises(seahaven.WorldBug) as raised:
        host.composition()

    message = str(raised.value)
    assert f"{keyword} names 'refund'" in message
    assert "add_world(name='billing')" in message
    assert f"{HERE}:" in message  # the add_world behind it, by file and line
    assert "it contributes: create_charge, count_charges" in message


def test_a_list_names_what_the_added_world_contributes_not_the_deep_name() -> None:
    deep = make_world("deep")
    add_echo_tools(deep, "deep")
    middle = make_world("middle")
    middle.add_world(deep, tool_prefix="b_")
    wrong = make_world("wrong")
    wrong.add_world(middle, tool_allow_list=["deep"])

    with pytest.raises(seahaven.WorldBug, match=r"names 'deep'.*it contributes: b_deep"):
        wrong.composition()


def test_two_routes_producing_one_name() -> None:
    host = make_world("company")
    host.add_world(make_payments(), name="payments")
    host.add_world(make_payments(), name="payments_copy")

    with pytest.raises(seahaven.WorldBug) as raised:
        host.composition()

    message = str(raised.value)
    assert "two routes produce the tool name 'create_charge'" in message
    assert "add_world(name='payments')" in message
    assert "add_world(name='payments_copy')" in message
    assert "tool_prefix" in message


def test_a_host_tool_and_a_contributed_tool_of_one_name_collide() -> None:
    host = make_world("company")
    add_echo_tools(host, "count_charges")
    host.add_world(make_payments())

    with pytest.raises(seahaven.WorldBug) as raised:
        host.composition()
    message = str(raised.value)
    assert "the tool 'count_charges' registered on world 'company'" in message
    assert "'count_charges' of world 'payments' via add_world(name='payments')" in message


@pytest.mark.parametrize(
    ("prefix", "tool"),
    [("st", "ate"), ("re", "set"), ("clo", "se"), ("s", "tep"), ("controller_run_", "sql")],
)
def test_a_contributed_name_that_is_reserved(prefix: str, tool: str) -> None:
    child = make_world("child")
    add_echo_tools(child, tool)
    host = make_world("company")
    host.add_world(child, tool_prefix=prefix)

    with pytest.raises(seahaven.WorldBug, match="reserved") as raised:
        host.composition()
    assert repr(prefix + tool) in str(raised.value)
    assert "add_world(name='child')" in str(raised.value)


def test_a_prefix_that_makes_an_invalid_tool_name() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_prefix="payments.")

    with pytest.raises(seahaven.WorldBug) as raised:
        host.composition()

    message = str(raised.value)
    assert "tool_prefix='payments.'" in message
    assert "'payments.create_charge'" in message
    assert "not a valid contributed tool name" in message


def test_a_prefix_that_makes_a_name_too_long() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_prefix="p" * 120)

    with pytest.raises(seahaven.WorldBug, match="1 to 128"):
        host.composition()


def _payments_with_region() -> seahaven.World:
    payments = make_payments()

    @payments.instance_startup
    def configure(ctx: seahaven.Ctx, *, region: str = "us") -> None:
        ctx.state["region"] = region

    return payments


def test_one_startup_key_bound_to_two_values_on_one_node() -> None:
    payments = _payments_with_region()
    shop = make_world("shop")
    shop.add_world(payments, tool_allow_list=[], startup={"region": "us"})
    host = make_world("company")
    host.add_world(payments, startup={"region": "eu"})
    host.add_world(shop)

    with pytest.raises(seahaven.WorldBug) as raised:
        host.composition()

    message = str(raised.value)
    assert "startup keyword 'region' is bound to two values on node 'payments'" in message
    assert "'eu'" in message and "'us'" in message
    assert message.count("add_world(name='payments')") == 2


def test_one_startup_key_bound_to_one_value_twice_is_fine() -> None:
    payments = _payments_with_region()
    shop = make_world("shop")
    shop.add_world(payments, tool_allow_list=[], startup={"region": "eu"})
    host = make_world("company")
    host.add_world(payments, startup={"region": "eu"})
    host.add_world(shop)

    node = host.composition().by_path["payments"]
    assert node.aliases == ["shop/payments"]
    assert node.bound_startup == {"region": "eu"}


def test_the_attach_limit_is_sqlites_real_one() -> None:
    limit = attach_limit()
    conn = apsw.Connection(":memory:")
    try:
        for number in range(limit):
            conn.execute(f"ATTACH DATABASE ':memory:' AS s{number}")
        with pytest.raises(apsw.Error, match="too many attached databases"):
            conn.execute(f"ATTACH DATABASE ':memory:' AS s{limit}")
    finally:
        conn.close()


def _host_with_added_stores(count: int) -> seahaven.World:
    leaf = make_world("leaf", "CREATE TABLE rows (id INTEGER PRIMARY KEY) STRICT;")
    host = make_world("company")
    for number in range(count):
        host.add_world(leaf, name=f"leaf_{number}", store=f"scope_{number}")
    return host


def test_more_added_stores_than_sqlite_can_attach() -> None:
    limit = attach_limit()
    host = _host_with_added_stores(limit + 1)

    with pytest.raises(seahaven.WorldBug) as raised:
        host.composition()

    message = str(raised.value)
    assert f"has {limit + 1} added stores" in message
    assert f"at most {limit}" in message


def test_exactly_as_many_added_stores_as_sqlite_can_attach() -> None:
    limit = attach_limit()
    host = _host_with_added_stores(limit)

    assert len(host.composition().nodes) == limit + 1


# --- what the seal answers ------------------------------------------------------------------------


def test_the_composition_answers_nodes_paths_and_the_flat_surface() -> None:
    payments = make_payments()
    shop = make_world("shop")
    add_echo_tools(shop, "place_order")
    shop.add_world(payments, tool_allow_list=[])
    host = make_world("company")
    add_echo_tools(host, "hire")
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(shop, tool_prefix="shop_")

    sealed = host.composition()

    assert sealed.root is host
    assert [(node.path, node.world, node.scope) for node in sealed.nodes] == [
        ("main", host, None),
        ("payments", payments, None),
        ("shop", shop, None),
    ]
    assert [listed["name"] for listed in sealed.tools] == [
        "hire",
        "pay_create_charge",
        "pay_count_charges",
        "shop_place_order",
    ]
    assert set(sealed.by_name) == {listed["name"] for listed in sealed.tools}
    assert sealed.by_path["payments"].aliases == ["shop/payments"]


def test_a_world_that_adds_none_is_one_node() -> None:
    alone = make_payments()

    sealed = alone.composition()

    assert [node.path for node in sealed.nodes] == ["main"]
    assert [listed["name"] for listed in sealed.tools] == ["create_charge", "count_charges"]
