"""The tool surface: one flat, ordered list, filtered then prefixed, with nothing else changed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from composition_worlds import add_echo_tools, make_payments, make_world, surface

import seahaven


def _listing_by_name(listings: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {listed["name"]: listed for listed in listings}


# --- flat and insertion-ordered -------------------------------------------------------------------


def test_the_surface_is_own_tools_then_each_contribution_in_add_world_order() -> None:
    zeta = make_world("zeta")
    add_echo_tools(zeta, "zeta_two", "zeta_one")
    alpha = make_world("alpha")
    add_echo_tools(alpha, "alpha_two", "alpha_one")
    host = make_world("company")
    add_echo_tools(host, "hire")
    host.add_world(zeta)
    host.add_world(alpha)
    # Registered after the add_world calls, and still listed first.
    add_echo_tools(host, "fire")

    expected = ["hire", "fire", "zeta_two", "zeta_one", "alpha_two", "alpha_one"]
    assert surface(host) == expected
    with host.instance() as inst:
        assert surface(inst) == expected


def test_a_contribution_lists_its_own_tools_then_its_own_added_worlds() -> None:
    deep = make_world("deep")
    add_echo_tools(deep, "deep_tool")
    middle = make_world("middle")
    middle.add_world(deep)
    add_echo_tools(middle, "middle_tool")
    host = make_world("company")
    host.add_world(middle)

    assert surface(host) == ["middle_tool", "deep_tool"]


def test_the_instance_and_the_seal_serve_one_list() -> None:
    host = make_world("company")
    add_echo_tools(host, "hire")
    host.add_world(make_payments(), tool_prefix="pay_")

    with host.instance() as inst:
        assert inst.tools() == host.composition().tools


# --- filter, then prefix, over a whole subtree ----------------------------------------------------


def test_an_allow_list_names_tools_before_this_prefix() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_prefix="pay_", tool_allow_list=["count_charges"])

    assert surface(host) == ["pay_count_charges"]


def test_a_block_list_names_tools_before_this_prefix() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_prefix="pay_", tool_block_list=["count_charges"])

    assert surface(host) == ["pay_create_charge"]


def test_an_empty_allow_list_hides_everything_and_an_empty_block_list_nothing() -> None:
    host = make_world("company")
    host.add_world(make_payments(), name="hidden", tool_allow_list=[])
    host.add_world(make_payments(), name="shown", tool_block_list=[], tool_prefix="p_")

    assert surface(host) == ["p_create_charge", "p_count_charges"]


def test_an_allow_list_keeps_the_added_worlds_order_not_its_own() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_allow_list=["count_charges", "create_charge"])

    assert surface(host) == ["create_charge", "count_charges"]


def test_lists_and_prefixes_apply_to_a_whole_subtree() -> None:
    deep = make_world("deep")
    add_echo_tools(deep, "deep", "deeper")
    middle = make_world("middle")
    add_echo_tools(middle, "own")
    middle.add_world(deep, tool_prefix="b_")
    allowing = make_world("allowing")
    allowing.add_world(middle, tool_prefix="a_", tool_allow_list=["b_deep"])
    blocking = make_world("blocking")
    blocking.add_world(middle, tool_prefix="a_", tool_block_list=["own", "b_deeper"])
    plain = make_world("plain")
    plain.add_world(middle, tool_prefix="a_")

    assert surface(middle) == ["own", "b_deep", "b_deeper"]
    assert surface(allowing) == ["a_b_deep"]
    assert surface(blocking) == ["a_b_deep"]
    assert surface(plain) == ["a_own", "a_b_deep", "a_b_deeper"]


def test_a_prefixed_deep_tool_is_reached_by_its_full_surface_name() -> None:
    deep = make_world("deep")
    add_echo_tools(deep, "deep")
    middle = make_world("middle")
    middle.add_world(deep, tool_prefix="b_")
    host = make_world("company")
    host.add_world(middle, tool_prefix="a_")

    with host.instance() as inst:
        assert inst.call("a_b_deep") == {"world": "deep", "tool": "deep"}
        for hidden_name in ("deep", "b_deep"):
            with pytest.raises(seahaven.UnknownTool):
                inst.call(hidden_name)
        assert [record.tool for record in inst.call_log()] == ["a_b_deep"]


def test_a_tool_kept_off_the_surface_is_unknown_to_the_agent() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_allow_list=["count_charges"])

    with host.instance() as inst:
        with pytest.raises(seahaven.UnknownTool) as raised:
            inst.call("create_charge", amount=5)
        assert raised.value.to_dict()["details"] == {"name": "create_charge"}
        assert inst.call_count == 0


# --- only the name changes ------------------------------------------------------------------------


def test_descriptions_and_schemas_are_byte_identical_to_the_added_worlds() -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")

    listed = _listing_by_name(host.composition().tools)
    for name, tool in payments.tools.items():
        own = tool.listing()
        contributed = listed["pay_" + name]
        assert set(contributed) == {"name", "description", "input_schema"}
        assert contributed["description"] == own["description"]
        assert json.dumps(contributed["input_schema"]) == json.dumps(own["input_schema"])


def test_a_prefix_does_not_rewrite_description_text() -> None:
    customers = make_world("customers")

    @customers.tool
    def find_customer(ctx: seahaven.Ctx, email: str) -> dict[str, str]:
        """Look a customer up. Call create_customer first if there is none."""
        return {"email": email}

    host = make_world("company")
    host.add_world(customers, tool_prefix="crm_")

    (listed,) = host.composition().tools
    assert listed["name"] == "crm_find_customer"
    assert (
        listed["description"] == "Look a customer up. Call create_customer first if there is none."
    )


def test_nothing_in_a_contributed_tool_says_where_it_came_from() -> None:
    payments = make_payments()
    host = make_world("company")
    host.add_world(payments, name="secret_account")

    for listed in host.composition().tools:
        text = json.dumps(listed)
        assert "secret_account" not in text
        assert "payments" not in text


# --- control tools --------------------------------------------------------------------------------


def test_control_tools_are_never_contributed() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_prefix="pay_")

    with host.instance(control_tools=True) as inst:
        names = surface(inst)
        assert all("controller" not in name for name in names)
        for name in ("pay_controller_run_sql", "controller_run_sqlpay_"):
            with pytest.raises(seahaven.UnknownTool):
                inst.call(name, query="SELECT 1")


def test_the_roots_control_tool_covers_every_node() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_prefix="pay_")

    with host.instance(control_tools=True) as inst:
        inst.call("pay_create_charge", amount=42)
        with pytest.warns(DeprecationWarning):
            answered = inst.call("controller_run_sql", query="SELECT amount FROM payments.charges")
        assert answered["rows"] == [[42]]


def test_the_control_tool_is_unknown_without_control_tools() -> None:
    host = make_world("company")
    host.add_world(make_payments())

    with host.instance() as inst, pytest.raises(seahaven.UnknownTool):
        inst.call("controller_run_sql", query="SELECT 1")
