"""Nodes, scopes and sharing: which worlds land on one store, and what each store is called."""

from __future__ import annotations

from typing import Any

import pytest
from composition_worlds import ORDERS, add_echo_tools, make_payments, make_world

import seahaven


def _paths(world: seahaven.World) -> list[str]:
    return [node.path for node in world.composition().nodes]


def _aliases(world: seahaven.World) -> dict[str, list[str]]:
    return {node.path: list(node.aliases) for node in world.composition().nodes}


def _shop(payments: seahaven.World, store: str | None = None) -> seahaven.World:
    shop = make_world("shop", ORDERS)

    @shop.tool
    def checkout(ctx: seahaven.Ctx, total: int) -> dict[str, Any]:
        """Take ``total`` through the shop's payments account, then book the order."""
        paid = ctx.worlds.payments.call("create_charge", amount=total)
        ctx.db.execute("INSERT INTO orders (id, total) VALUES (?, ?)", ctx.ids.uuid(), total)
        return {"charge_id": paid["id"]}

    shop.add_world(payments, tool_allow_list=[], store=store)
    return shop


# --- a node is (World object, scope) --------------------------------------------------------------


def test_the_same_world_added_twice_in_one_scope_is_one_node() -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(_shop(payments), tool_prefix="shop_")

    assert _paths(host) == ["main", "payments", "shop"]
    with host.instance() as inst:
        inst.call("shop_checkout", total=500)
        # The shop's charge landed on the company's own account.
        assert inst.call("pay_count_charges") == {"count": 1}


def test_the_same_world_in_another_scope_is_another_node() -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments, name="payments", tool_prefix="pay_")
    host.add_world(payments, name="payments_eu", store="eu", tool_prefix="eu_")

    assert _paths(host) == ["main", "payments", "payments_eu"]
    with host.instance() as inst:
        inst.call("eu_create_charge", amount=7)
        assert inst.call("pay_count_charges") == {"count": 0}
        assert inst.call("eu_count_charges") == {"count": 1}


def test_two_worlds_with_one_name_are_two_nodes() -> None:
    first = make_payments()
    second = make_payments()
    host = make_world("company")
    host.add_world(first, name="first", tool_prefix="a_")
    host.add_world(second, name="second", tool_prefix="b_")

    assert _paths(host) == ["main", "first", "second"]


# --- paths and aliases ----------------------------------------------------------------------------


def test_paths_are_main_then_name_then_parent_path_slash_name() -> None:
    tax = make_world("tax")
    payments = make_payments()
    payments.add_world(tax)
    host = make_world("company")
    host.add_world(payments, name="billing")

    assert _paths(host) == ["main", "billing", "billing/tax"]


def test_the_canonical_path_is_the_shallowest_route() -> None:
    payments = make_payments()
    shop = _shop(payments)
    host = make_world("company")
    # The deep route is registered first, and still loses to the shallow one.
    host.add_world(shop, tool_prefix="shop_")
    host.add_world(payments, tool_prefix="pay_")

    assert _paths(host) == ["main", "shop", "payments"]
    assert _aliases(host)["payments"] == ["shop/payments"]


def test_a_tie_between_routes_goes_to_registration_order() -> None:
    shared = make_world("shared")
    left = make_world("left")
    left.add_world(shared)
    right = make_world("right")
    right.add_world(shared)

    left_first = make_world("company")
    left_first.add_world(left)
    left_first.add_world(right)
    right_first = make_world("company")
    right_first.add_world(right)
    right_first.add_world(left)

    assert _aliases(left_first)["left/shared"] == ["right/shared"]
    assert _aliases(right_first)["right/shared"] == ["left/shared"]


@pytest.mark.usefixtures("on_disk")
def test_every_other_route_is_an_alias_and_no_store() -> None:
    payments = make_payments()
    first_shop = make_world("first_shop")
    first_shop.add_world(payments, tool_allow_list=[])
    second_shop = make_world("second_shop")
    second_shop.add_world(payments, tool_allow_list=[])
    host = make_world("company")
    host.add_world(payments)
    host.add_world(first_shop)
    host.add_world(second_shop)

    with host.instance() as inst:
        reports = {report.path: report for report in inst.composition()}
        assert list(reports) == ["main", "payments", "first_shop", "second_shop"]
        assert reports["payments"].aliases == ("first_shop/payments", "second_shop/payments")
        stores = sorted(path.name for path in inst.directory.glob("*.sqlite"))
        assert stores == [
            "state.first_shop.sqlite",
            "state.payments.sqlite",
            "state.second_shop.sqlite",
            "state.sqlite",
        ]


# --- scopes ---------------------------------------------------------------------------------------


def test_sharing_is_the_default() -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(_shop(payments), tool_prefix="shop_")

    node = host.composition().by_path["payments"]
    assert node.scope is None
    assert node.aliases == ["shop/payments"]


def test_scope_names_are_one_flat_namespace() -> None:
    payments = make_payments()
    one = _shop(payments, store="eu")
    other = make_world("other_shop")
    other.add_world(payments, tool_allow_list=[], store="eu")
    host = make_world("company")
    host.add_world(one, tool_prefix="a_")
    host.add_world(other)

    assert _paths(host) == ["main", "shop", "other_shop", "shop/payments"]
    node = host.composition().by_path["shop/payments"]
    assert node.scope == "eu"
    assert node.aliases == ["other_shop/payments"]


def test_a_dependencys_internal_scope_shares_with_the_hosts_own() -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments, name="payments_eu", store="eu", tool_prefix="eu_")
    host.add_world(_shop(payments, store="eu"), tool_prefix="shop_")

    assert _paths(host) == ["main", "payments_eu", "shop"]
    with host.instance() as inst:
        inst.call("shop_checkout", total=3)
        assert inst.call("eu_count_charges") == {"count": 1}


def test_a_store_scopes_the_whole_subtree() -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(_shop(payments), name="merchant", store="merchant", tool_prefix="m_")

    nodes = {node.path: node.scope for node in host.composition().nodes}
    assert nodes == {
        "main": None,
        "payments": None,
        "merchant": "merchant",
        "merchant/payments": "merchant",
    }
    with host.instance() as inst:
        inst.call("m_checkout", total=9)
        assert inst.call("pay_count_charges") == {"count": 0}
        view = inst.inspect()
        assert view.rows("SELECT amount FROM merchant__payments.charges") == [{"amount": 9}]


def test_an_explicit_store_inside_a_scoped_subtree_names_its_own_scope() -> None:
    payments = make_payments()
    shop = _shop(payments, store="us")
    host = make_world("company")
    host.add_world(shop, store="eu", tool_prefix="shop_")

    scopes = {node.path: node.scope for node in host.composition().nodes}
    assert scopes == {"main": None, "shop": "eu", "shop/payments": "us"}


@pytest.mark.usefixtures("on_disk")
def test_node_counts_multiply_with_scopes() -> None:
    leaves = [make_world(f"leaf_{number}") for number in range(3)]
    product = make_world("product")
    for leaf in leaves:
        product.add_world(leaf)
    host = make_world("company")
    for scope in ("eu", "us", "apac"):
        host.add_world(product, name=f"product_{scope}", store=scope)

    nodes = host.composition().nodes
    assert len(nodes) == 1 + 3 * 4
    assert len({(id(node.world), node.scope) for node in nodes}) == len(nodes)
    with host.instance() as inst:
        assert len(list(inst.directory.glob("*.sqlite"))) == len(nodes)


@pytest.mark.usefixtures("on_disk")
def test_a_world_that_adds_none_is_one_node_at_main() -> None:
    alone = make_world("alone")
    add_echo_tools(alone, "ping")

    with alone.instance() as inst:
        (report,) = inst.composition()
        assert (report.path, report.scope, report.aliases) == ("main", None, ())
        assert [path.name for path in inst.directory.glob("*.sqlite")] == ["state.sqlite"]
