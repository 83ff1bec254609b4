"""Declaring: ``add_world``, its parameters, and what it checks at the line it is called on."""

from __future__ import annotations

from typing import Any

import pytest
from composition_worlds import (
    add_echo_tools,
    assert_raised_on_line_with,
    make_payments,
    make_world,
    surface,
)

import seahaven

# --- the verb and its parameters ------------------------------------------------------------------


def test_add_world_is_a_call_that_records_every_parameter_in_order() -> None:
    host = make_world("company")
    payments = make_payments()
    chat = make_world("chat")

    @payments.instance_startup
    def configure(ctx: seahaven.Ctx, *, region: str = "us") -> None:
        ctx.state["region"] = region

    returned = host.add_world(
        payments,
        name="billing",
        store="eu",
        tool_prefix="pay_",
        tool_allow_list=["create_charge"],
        startup={"region": "eu"},
    )
    host.add_world(chat, tool_block_list=[])

    assert returned is None
    first, second = host.added_worlds
    assert first.world is payments
    assert (first.name, first.store, first.tool_prefix) == ("billing", "eu", "pay_")
    assert first.tool_allow_list == ("create_charge",)
    assert first.tool_block_list is None
    assert dict(first.startup) == {"region": "eu"}
    assert second.world is chat
    assert (second.name, second.store, second.tool_prefix) == ("chat", None, None)
    assert second.tool_allow_list is None
    assert second.tool_block_list == ()


def test_the_name_defaults_to_the_added_worlds_own_name() -> None:
    host = make_world("company")
    host.add_world(make_payments())

    assert [node.path for node in host.composition().nodes] == ["main", "payments"]


def test_the_name_is_never_agent_visible() -> None:
    host = make_world("company")
    host.add_world(make_payments(), name="internal_billing_account")

    assert surface(host) == ["create_charge", "count_charges"]
    for listed in host.composition().tools:
        assert "internal_billing_account" not in str(listed)


def test_added_worlds_is_read_only() -> None:
    host = make_world("company")
    host.add_world(make_payments())

    with pytest.raises(AttributeError):
        host.added_worlds.append(None)  # type: ignore[attr-defined]
    assert len(host.added_worlds) == 1


def test_only_a_world_can_be_added() -> None:
    host = make_world("company")

    with pytest.raises(seahaven.WorldBug, match=r"takes a seahaven\.World"):
        host.add_world("payments")  # type: ignore[arg-type]
    assert host.added_worlds == ()


# --- checked at the call: the name ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "clause"),
    [
        ("Payments", r"\^\[a-z\]\[a-z0-9_\]\*\$"),
        ("1payments", r"\^\[a-z\]\[a-z0-9_\]\*\$"),
        ("_payments", r"\^\[a-z\]\[a-z0-9_\]\*\$"),
        ("pay-ments", r"\^\[a-z\]\[a-z0-9_\]\*\$"),
        ("pay.ments", r"\^\[a-z\]\[a-z0-9_\]\*\$"),
        ("", r"\^\[a-z\]\[a-z0-9_\]\*\$"),
        ("pay__ments", "'__'"),
        ("main", "'main'"),
        ("temp", "'temp'"),
    ],
)
def test_a_badly_spelled_name_is_refused_at_the_call(name: str, clause: str) -> None:
    host = make_world("company")

    with pytest.raises(seahaven.WorldBug, match=clause) as raised:
        host.add_world(make_payments(), name=name)

    assert "not a valid name" in str(raised.value)
    assert_raised_on_line_with(raised, "add_world(")
    assert host.added_worlds == ()


@pytest.mark.parametrize("name", ["p", "payments", "payments_eu", "pay_2", "a_b_c"])
def test_a_well_spelled_name_is_accepted(name: str) -> None:
    host = make_world("company")
    host.add_world(make_payments(), name=name)

    assert host.added_worlds[0].name == name


def test_a_default_name_is_held_to_the_same_rule() -> None:
    host = make_world("company")
    spaced = make_world("Pay Ments")

    with pytest.raises(seahaven.WorldBug, match="not a valid name") as raised:
        host.add_world(spaced)

    assert_raised_on_line_with(raised, "add_world(")
    host.add_world(spaced, name="payments")
    assert host.added_worlds[0].name == "payments"


def test_a_name_is_unique_on_its_host() -> None:
    host = make_world("company")
    host.add_world(make_payments(), name="payments")

    with pytest.raises(seahaven.WorldBug, match="already adds a world named 'payments'") as raised:
        host.add_world(make_world("chat"), name="payments")

    assert_raised_on_line_with(raised, "add_world(")
    assert [added.name for added in host.added_worlds] == ["payments"]


def test_the_same_name_on_two_hosts_is_fine() -> None:
    payments = make_payments()
    shop = make_world("shop")
    company = make_world("company")
    shop.add_world(payments, name="payments")
    company.add_world(payments, name="payments")

    assert shop.added_worlds[0].name == company.added_worlds[0].name == "payments"


# --- checked at the call: the store ---------------------------------------------------------------


@pytest.mark.parametrize("store", ["", "   ", " eu", 5])
def test_a_store_that_is_not_a_scope_name_is_refused(store: Any) -> None:
    host = make_world("company")

    with pytest.raises(seahaven.WorldBug, match="is not a scope name") as raised:
        host.add_world(make_payments(), store=store)

    assert_raised_on_line_with(raised, "add_world(")
    assert host.added_worlds == ()


def test_store_none_keeps_the_adders_scope_and_a_string_opens_one() -> None:
    host = make_world("company")
    payments = make_payments()
    host.add_world(payments, name="shared")
    host.add_world(payments, name="named", store="eu", tool_prefix="eu_")

    scopes = {node.path: node.scope for node in host.composition().nodes}
    assert scopes == {"main": None, "shared": None, "named": "eu"}


# --- checked at the call: the lists ---------------------------------------------------------------


def test_both_lists_at_once_are_refused() -> None:
    host = make_world("company")

    with pytest.raises(
        seahaven.WorldBug, match="both tool_allow_list and tool_block_list"
    ) as raised:
        host.add_world(make_payments(), tool_allow_list=["create_charge"], tool_block_list=[])

    assert_raised_on_line_with(raised, "add_world(")
    assert host.added_worlds == ()


@pytest.mark.parametrize("keyword", ["tool_allow_list", "tool_block_list"])
def test_a_list_given_as_a_bare_string_is_refused(keyword: str) -> None:
    host = make_world("company")
    arguments: dict[str, Any] = {keyword: "create_charge"}

    with pytest.raises(seahaven.WorldBug, match="bare string") as raised:
        host.add_world(make_payments(), **arguments)

    assert keyword in str(raised.value)
    assert "['create_charge']" in str(raised.value)
    assert_raised_on_line_with(raised, "add_world(")
    assert host.added_worlds == ()


def test_a_list_of_things_that_are_not_names_is_refused() -> None:
    host = make_world("company")

    with pytest.raises(seahaven.WorldBug, match="must hold tool names"):
        host.add_world(make_payments(), tool_block_list=[1, 2])  # type: ignore[list-item]


def test_a_tool_prefix_that_is_not_a_string_is_refused() -> None:
    host = make_world("company")

    with pytest.raises(seahaven.WorldBug, match="tool_prefix must be a string"):
        host.add_world(make_payments(), tool_prefix=7)  # type: ignore[arg-type]


# --- checked at the call: startup keywords --------------------------------------------------------


def test_a_startup_keyword_the_added_worlds_hooks_do_not_accept_is_refused() -> None:
    payments = make_payments()

    @payments.instance_startup
    def configure(ctx: seahaven.Ctx, *, region: str = "us") -> None:
        ctx.state["region"] = region

    host = make_world("company")

    with pytest.raises(seahaven.WorldBug, match="'regoin'") as raised:
        host.add_world(payments, startup={"regoin": "eu"})

    assert "accept: region" in str(raised.value)
    assert_raised_on_line_with(raised, "add_world(")
    assert host.added_worlds == ()
    host.add_world(payments, startup={"region": "eu"})
    assert dict(host.added_worlds[0].startup) == {"region": "eu"}


def test_a_world_without_hooks_accepts_no_bound_keyword() -> None:
    host = make_world("company")

    with pytest.raises(seahaven.WorldBug, match="accept: none"):
        host.add_world(make_payments(), startup={"region": "eu"})


def test_only_the_added_worlds_own_hooks_count_for_a_bound_keyword() -> None:
    host = make_world("company")

    @host.instance_startup
    def configure(ctx: seahaven.Ctx, *, region: str = "us") -> None:
        ctx.state["region"] = region

    with pytest.raises(seahaven.WorldBug, match="'region'"):
        host.add_world(make_payments(), startup={"region": "eu"})


def test_a_hook_taking_any_keyword_accepts_every_binding() -> None:
    payments = make_payments()

    @payments.instance_startup
    def configure(ctx: seahaven.Ctx, **options: Any) -> None:
        ctx.state.update(options)

    host = make_world("company")
    host.add_world(payments, startup={"anything": 1})

    assert dict(host.added_worlds[0].startup) == {"anything": 1}


@pytest.mark.parametrize("startup", ["region", [("region", "eu")], 3])
def test_startup_that_is_not_a_mapping_is_refused(startup: Any) -> None:
    host = make_world("company")

    with pytest.raises(seahaven.WorldBug, match="startup must be a mapping"):
        host.add_world(make_payments(), startup=startup)


def test_the_bound_startup_mapping_is_copied_at_the_call() -> None:
    payments = make_payments()

    @payments.instance_startup
    def configure(ctx: seahaven.Ctx, *, region: str = "us") -> None:
        ctx.state["region"] = region

    host = make_world("company")
    bound = {"region": "eu"}
    host.add_world(payments, startup=bound)
    bound["region"] = "changed later"

    assert dict(host.added_worlds[0].startup) == {"region": "eu"}


# --- checked at the call: cycles ------------------------------------------------------------------


def test_a_world_cannot_add_itself() -> None:
    host = make_world("company")

    with pytest.raises(seahaven.WorldBug, match="cycle") as raised:
        host.add_world(host, name="again")

    assert_raised_on_line_with(raised, "add_world(")
    assert host.added_worlds == ()


def test_a_world_cannot_add_a_world_whose_tree_contains_it() -> None:
    top = make_world("top")
    middle = make_world("middle")
    bottom = make_world("bottom")
    top.add_world(middle)
    middle.add_world(bottom)

    with pytest.raises(seahaven.WorldBug, match="cycle") as raised:
        bottom.add_world(top)

    assert "'top' already contains 'bottom'" in str(raised.value)
    assert_raised_on_line_with(raised, "add_world(")
    assert bottom.added_worlds == ()


def test_adding_one_world_twice_is_not_a_cycle() -> None:
    host = make_world("company")
    payments = make_payments()
    host.add_world(payments, name="payments")
    host.add_world(payments, name="payments_eu", store="eu", tool_prefix="eu_")

    assert len(host.composition().nodes) == 3


# --- what waits for the seal ----------------------------------------------------------------------


def test_tree_properties_wait_for_the_first_use() -> None:
    host = make_world("company")
    add_echo_tools(host, "create_charge")

    # Neither a list naming a missing tool nor a name collision is knowable yet.
    host.add_world(make_payments(), tool_allow_list=["no_such_tool"])
    host.add_world(make_payments(), name="other")

    assert len(host.added_worlds) == 2
    with pytest.raises(seahaven.WorldBug):
        host.composition()
