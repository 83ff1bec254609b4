"""Reaching an added world: ``ctx.worlds``, ``WorldHandle``, and the six rules about handles."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import apsw
import pytest
from composition_worlds import CHARGES, STAFF, add_echo_tools, make_payments, make_world

import seahaven
from seahaven.calls.concurrency import concurrency, set_concurrency

STALE = "a world handle was used after the call it belongs to returned"


def _company(**options: Any) -> seahaven.World:
    """A company that adds a payments world under ``payments``."""
    host = make_world("company", STAFF)
    host.add_world(make_payments(), **options)
    return host


# --- the handle and its members -------------------------------------------------------------------


def test_a_child_is_reached_by_attribute_and_by_item() -> None:
    host = _company(tool_prefix="pay_")
    seen: dict[str, Any] = {}

    @host.tool
    def both(ctx: seahaven.Ctx) -> dict[str, int]:
        """Write through one spelling and read through the other."""
        by_attribute = ctx.worlds.payments
        name = "payments"
        by_item = ctx.worlds[name]
        seen["types"] = (type(by_attribute), type(by_item))
        by_attribute.db.execute("INSERT INTO charges (id, amount) VALUES ('c1', 5)")
        row = by_item.db.one("SELECT amount FROM charges WHERE id = 'c1'")
        assert row is not None
        return {"amount": int(row["amount"])}

    with host.instance() as inst:
        assert inst.call("both") == {"amount": 5}
    assert seen["types"] == (seahaven.WorldHandle, seahaven.WorldHandle)


def test_each_childs_name_is_an_attribute_of_the_containers_class() -> None:
    # ctx.worlds.<name> is found on the class (a Seahaven Worlds naming the children,
    # made once per set of names), so it costs no AttributeError; a name Worlds itself
    # answers to on its class ("mro") and a name no world was added under still go
    # through __getattr__, which reaches the child or says what the world adds.
    host = _company()
    host.add_world(make_payments("mro"), tool_allow_list=[])
    seen: dict[str, Any] = {}

    @host.tool
    def look(ctx: seahaven.Ctx) -> dict[str, str]:
        """Reach each child both ways, and an unknown name."""
        seen.setdefault("classes", []).append(type(ctx.worlds))
        seen["attributes"] = (repr(ctx.worlds.payments), repr(ctx.worlds.mro))
        seen["items"] = (repr(ctx.worlds["payments"]), repr(ctx.worlds["mro"]))
        try:
            ctx.worlds.shop  # noqa: B018 (the lookup is what is tested)
        except seahaven.WorldBug as error:
            seen["unknown"] = str(error)
        return {}

    for _ in range(2):
        with host.instance() as inst:
            inst.call("look")
    first, second = seen["classes"]
    assert first is second and issubclass(first, seahaven.Worlds)
    assert isinstance(vars(first)["payments"], property)
    assert "mro" not in vars(first) and "shop" not in vars(first)
    assert seen["attributes"] == seen["items"] == ("WorldHandle('payments')", "WorldHandle('mro')")
    assert seen["unknown"] == "world 'company' adds no world named 'shop'; it adds mro, payments"


def test_a_world_that_adds_none_has_the_plain_container() -> None:
    host = make_world("company", STAFF)
    seen: list[type] = []

    @host.tool
    def look(ctx: seahaven.Ctx) -> dict[str, str]:
        """What ctx.worlds is here."""
        seen.append(type(ctx.worlds))
        return {}

    with host.instance() as inst:
        inst.call("look")
    assert seen == [seahaven.Worlds]


def test_handle_call_runs_a_tool_of_the_node_by_its_own_name() -> None:
    host = _company(tool_prefix="pay_")

    @host.tool
    def charge_twice(ctx: seahaven.Ctx, amount: int) -> dict[str, int]:
        """Charge twice through the handle."""
        ctx.worlds.payments.call("create_charge", amount=amount)
        ctx.worlds.payments.call("create_charge", amount=amount)
        counted: dict[str, int] = ctx.worlds.payments.call("count_charges")
        return counted

    with host.instance() as inst:
        assert inst.call("charge_twice", amount=3) == {"count": 2}
        view = inst.inspect()
        assert view.rows("SELECT amount FROM payments.charges") == [{"amount": 3}, {"amount": 3}]


def test_handle_call_validates_the_arguments() -> None:
    host = _company()

    @host.tool
    def bad_nested_call(ctx: seahaven.Ctx) -> dict[str, str]:
        """Pass the child a string where it wants an integer."""
        ctx.worlds.payments.call("create_charge", amount="lots")
        return {}

    with host.instance() as inst, pytest.raises(seahaven.ArgumentError) as raised:
        inst.call("bad_nested_call")
    assert raised.value.violations[0]["loc"] == ["amount"]


def test_handle_call_refuses_a_name_the_added_world_does_not_have() -> None:
    host = _company(tool_prefix="pay_")

    @host.tool
    def prefixed(ctx: seahaven.Ctx) -> dict[str, str]:
        """Use the surface name where the handle wants the world's own."""
        ctx.worlds.payments.call("pay_count_charges")
        return {}

    with host.instance() as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.call("prefixed")
    assert "no tool named 'pay_count_charges'" in str(raised.value)
    assert "own, unprefixed names" in str(raised.value)


def test_handle_db_is_the_nodes_own_db_with_its_connection() -> None:
    host = _company()
    seen: dict[str, Any] = {}

    @host.tool
    def tables(ctx: seahaven.Ctx) -> dict[str, list[str]]:
        """Name the tables each store holds."""
        handle_db = ctx.worlds.payments.db
        seen["db"] = handle_db
        query = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
        return {
            "host": [row["name"] for row in ctx.db.rows(query)],
            "child": [row["name"] for row in handle_db.rows(query)],
        }

    with host.instance() as inst:
        assert inst.call("tables") == {"host": ["staff"], "child": ["charges"]}
    assert isinstance(seen["db"], seahaven.Db)
    assert isinstance(seen["db"].conn, apsw.Connection)


def test_handle_state_is_the_nodes_own_ctx_state() -> None:
    payments = make_payments()

    @payments.tool
    def whose_account(ctx: seahaven.Ctx) -> dict[str, str]:
        """Say who this account belongs to."""
        return {"owner": ctx.state.get("owner", "nobody")}

    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")

    @host.tool
    def claim(ctx: seahaven.Ctx) -> dict[str, str]:
        """Claim the account."""
        ctx.worlds.payments.state["owner"] = "company"
        return {"host_owner": ctx.state.get("owner", "nobody")}

    with host.instance() as inst:
        assert inst.call("pay_whose_account") == {"owner": "nobody"}
        assert inst.call("claim") == {"host_owner": "nobody"}
        assert inst.call("pay_whose_account") == {"owner": "company"}


def test_handle_worlds_reaches_a_grandchild() -> None:
    ledger = make_world("ledger", CHARGES)
    shop = make_world("shop")
    shop.add_world(ledger)
    host = make_world("company")
    host.add_world(shop)

    @host.tool
    def write_deep(ctx: seahaven.Ctx) -> dict[str, str]:
        """Write into the shop's ledger."""
        ledger_handle = ctx.worlds.shop.worlds.ledger
        ledger_handle.db.execute("INSERT INTO charges (id, amount) VALUES ('deep', 1)")
        return {"handle": repr(ledger_handle)}

    with host.instance() as inst:
        assert inst.call("write_deep") == {"handle": "WorldHandle('shop/ledger')"}
        assert inst.inspect().rows("SELECT id FROM shop__ledger.charges") == [{"id": "deep"}]


# --- names ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["attribute", "item"])
def test_an_unregistered_child_name_is_a_world_bug(spelling: str) -> None:
    host = _company()
    host.add_world(make_world("chat"))

    @host.tool
    def typo(ctx: seahaven.Ctx) -> dict[str, str]:
        """Reach a child nobody added."""
        if spelling == "attribute":
            ctx.worlds.paymnets  # noqa: B018
        else:
            ctx.worlds["paymnets"]
        return {}

    with host.instance() as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.call("typo")
    assert "adds no world named 'paymnets'" in str(raised.value)
    assert "chat, payments" in str(raised.value)


def test_a_world_that_adds_none_answers_no_name() -> None:
    alone = make_world("alone")

    @alone.tool
    def reach(ctx: seahaven.Ctx, name: str) -> dict[str, str]:
        """Reach any child at all."""
        ctx.worlds[name]
        return {}

    with alone.instance() as inst:
        for name in ("payments", "main", "alone"):
            with pytest.raises(seahaven.WorldBug, match="adds no other worlds"):
                inst.call("reach", name=name)


# --- rule 1: handles are call-scoped --------------------------------------------------------------


def _keeper(host: seahaven.World) -> list[Any]:
    """Register ``keep`` on ``host``: it stores its handle and its ``ctx.worlds`` in the list."""
    kept: list[Any] = []

    @host.tool
    def keep(ctx: seahaven.Ctx) -> dict[str, str]:
        """Hold on to a handle past the call, which is the mistake under test."""
        kept.append(ctx.worlds.payments)
        kept.append(ctx.worlds)
        return {}

    return kept


USES: dict[str, Callable[[Any], object]] = {
    "db": lambda handle: handle.db,
    "state": lambda handle: handle.state,
    "worlds": lambda handle: handle.worlds,
    "call by name": lambda handle: handle.call("count_charges"),
}


@pytest.mark.parametrize("use", sorted(USES))
def test_a_handle_used_after_its_call_returned_raises_the_exact_message(use: str) -> None:
    host = _company()
    kept = _keeper(host)

    with host.instance() as inst:
        inst.call("keep")
        handle = kept[0]
        with pytest.raises(seahaven.WorldBug) as raised:
            USES[use](handle)
        assert str(raised.value) == STALE


def test_a_kept_worlds_container_is_stale_too() -> None:
    host = _company()
    kept = _keeper(host)

    with host.instance() as inst:
        inst.call("keep")
        with pytest.raises(seahaven.WorldBug) as raised:
            kept[1]["payments"]
        assert str(raised.value) == STALE
        with pytest.raises(seahaven.WorldBug) as raised:
            kept[1].payments  # noqa: B018 (the lookup is what is tested)
        assert str(raised.value) == STALE


def test_a_handle_does_not_come_back_to_life_in_a_later_call() -> None:
    host = _company()
    kept = _keeper(host)
    outcome: dict[str, str] = {}

    @host.tool
    def use_old_handle(ctx: seahaven.Ctx) -> dict[str, str]:
        """Use the handle the previous call kept."""
        try:
            kept[0].db.rows("SELECT 1")
        except seahaven.WorldBug as error:
            outcome["error"] = str(error)
        return {}

    with host.instance() as inst:
        inst.call("keep")
        inst.call("use_old_handle")
    assert outcome == {"error": STALE}


def test_a_handle_never_addresses_another_instance() -> None:
    host = _company()
    kept = _keeper(host)
    outcome: dict[str, str] = {}

    @host.tool
    def use_foreign_handle(ctx: seahaven.Ctx) -> dict[str, str]:
        """Use a handle the first instance's call kept."""
        try:
            kept[0].db.execute("INSERT INTO charges (id, amount) VALUES ('x', 1)")
        except seahaven.WorldBug as error:
            outcome["error"] = str(error)
        return {}

    with host.instance() as first:
        first.call("keep")
        with host.instance() as second:
            second.call("use_foreign_handle")
            assert second.inspect().rows("SELECT id FROM payments.charges") == []
        assert first.inspect().rows("SELECT id FROM payments.charges") == []
    assert outcome == {"error": STALE}


def test_a_handle_carried_to_another_thread_is_stale() -> None:
    host = _company()
    outcome: dict[str, str] = {}

    @host.tool
    def hand_over(ctx: seahaven.Ctx) -> dict[str, str]:
        """Give the handle to a worker thread while this call is still running."""
        handle = ctx.worlds.payments

        def worker() -> None:
            try:
                handle.db.rows("SELECT 1")
            except seahaven.WorldBug as error:
                outcome["worker"] = str(error)

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        # The same handle on the call's own thread is still live.
        handle.db.rows("SELECT 1")
        return {}

    with host.instance() as inst:
        inst.call("hand_over")
    assert outcome == {"worker": STALE}


def test_a_handle_stays_valid_across_a_nested_handle_call() -> None:
    host = _company()

    @host.tool
    def charge_then_read(ctx: seahaven.Ctx) -> dict[str, int]:
        """Keep using one handle after a nested call through it."""
        handle = ctx.worlds.payments
        handle.call("create_charge", amount=11)
        row = handle.db.one("SELECT amount FROM charges")
        assert row is not None
        handle.state["after_nested_call"] = True
        return {"amount": int(row["amount"])}

    with host.instance() as inst:
        assert inst.call("charge_then_read") == {"amount": 11}


def test_a_bulk_handle_stays_valid_across_inst_call_and_dies_with_the_block() -> None:
    host = _company(tool_prefix="pay_")

    with host.instance() as inst:
        with inst.bulk() as ctx:
            handle = ctx.worlds.payments
            handle.db.execute("INSERT INTO charges (id, amount) VALUES ('loaded', 1)")
            inst.call("pay_create_charge", amount=2)
            amounts = handle.db.rows("SELECT amount FROM charges ORDER BY amount")
            assert amounts == [{"amount": 1}, {"amount": 2}]
        with pytest.raises(seahaven.WorldBug) as raised:
            handle.db  # noqa: B018
        assert str(raised.value) == STALE


# --- rule 2: the lists shape the agent's surface only ---------------------------------------------


def test_host_code_calls_a_tool_the_agent_cannot_see() -> None:
    host = _company(tool_allow_list=[])

    @host.tool
    def charge(ctx: seahaven.Ctx, amount: int) -> dict[str, object]:
        """Charge through the hidden payments world."""
        created: dict[str, object] = ctx.worlds.payments.call("create_charge", amount=amount)
        return created

    with host.instance() as inst:
        assert [listed["name"] for listed in inst.tools()] == ["charge"]
        assert inst.call("charge", amount=4)["amount"] == 4


# --- rule 3: errors raise, unwrapped --------------------------------------------------------------


class PaymentDeclined(seahaven.ToolError):
    """The payments product's own error."""


def _payments_with_own_errors() -> seahaven.World:
    payments = make_payments()

    @payments.middleware
    def error_handler(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        try:
            return next_(ctx, call)
        except seahaven.DbError as error:
            raise PaymentDeclined("card_declined", "the card was declined") from error

    @payments.tool
    def charge_duplicate(ctx: seahaven.Ctx) -> dict[str, str]:
        """Write one charge id twice."""
        ctx.db.execute("INSERT INTO charges (id, amount) VALUES ('same', 1)")
        ctx.db.execute("INSERT INTO charges (id, amount) VALUES ('same', 1)")
        return {}

    return payments


def test_the_added_worlds_own_error_reaches_the_host_tool_unwrapped() -> None:
    host = make_world("company")
    host.add_world(_payments_with_own_errors(), tool_allow_list=[])
    caught: list[BaseException] = []

    @host.tool
    def try_charge(ctx: seahaven.Ctx) -> dict[str, str]:
        """Decide what the agent sees when the charge fails."""
        try:
            ctx.worlds.payments.call("charge_duplicate")
        except seahaven.ToolError as error:
            caught.append(error)
            return {"status": "declined", "code": error.code}
        return {"status": "charged"}

    with host.instance() as inst:
        assert inst.call("try_charge") == {"status": "declined", "code": "card_declined"}
    assert type(caught[0]) is PaymentDeclined


def test_an_uncaught_child_error_reaches_the_agent_as_it_was_raised() -> None:
    host = make_world("company")
    host.add_world(_payments_with_own_errors(), tool_allow_list=[])

    @host.tool
    def charge_blindly(ctx: seahaven.Ctx) -> dict[str, str]:
        """Let the child's error through."""
        ctx.worlds.payments.call("charge_duplicate")
        return {}

    with host.instance() as inst, pytest.raises(PaymentDeclined) as raised:
        inst.call("charge_blindly")
    assert raised.value.to_dict()["code"] == "card_declined"


# --- rule 4: a nested call is part of the same in-flight call -------------------------------------


def test_a_nested_call_takes_no_call_slot() -> None:
    host = _company()

    @host.tool
    def charge(ctx: seahaven.Ctx) -> dict[str, object]:
        """Make a nested call while this call holds the only slot."""
        created: dict[str, object] = ctx.worlds.payments.call("create_charge", amount=1)
        return created

    previous = concurrency()
    results: list[Any] = []
    set_concurrency(1)
    try:
        with host.instance() as inst:
            worker = threading.Thread(target=lambda: results.append(inst.call("charge")))
            worker.start()
            worker.join(timeout=10)
            deadlocked = worker.is_alive()
            if deadlocked:
                set_concurrency(0)  # releases the waiter so the thread can finish
                worker.join(timeout=10)
    finally:
        set_concurrency(previous)
    assert not deadlocked, "a nested call waited for the call slot its own outer call holds"
    assert results[0]["amount"] == 1


def test_a_nested_call_is_not_a_separate_dispatched_call() -> None:
    host = _company()

    @host.tool
    def charge(ctx: seahaven.Ctx) -> dict[str, object]:
        """Charge through the child."""
        created: dict[str, object] = ctx.worlds.payments.call("create_charge", amount=1)
        return created

    with host.instance() as inst:
        inst.call("charge")
        assert [record.tool for record in inst.call_log()] == ["charge"]
        assert [(record.i, record.world) for record in inst.change_log()] == [(0, "payments")]


# --- rule 5: there is no cross-world atomicity ----------------------------------------------------


def test_a_host_that_fails_after_a_nested_call_keeps_the_childs_row() -> None:
    host = _company()

    @host.tool
    def invoice_then_fail(ctx: seahaven.Ctx) -> dict[str, str]:
        """Write here, charge there, then fail."""
        ctx.db.execute("INSERT INTO staff (id) VALUES ('clerk')")
        ctx.worlds.payments.call("create_charge", amount=500)
        raise seahaven.ToolError("invoice_failed", "the invoice could not be filed")

    with host.instance() as inst:
        with pytest.raises(seahaven.ToolError, match="could not be filed"):
            inst.call("invoice_then_fail")
        view = inst.inspect()
        assert view.rows("SELECT id FROM staff") == []
        assert view.rows("SELECT amount FROM payments.charges") == [{"amount": 500}]
        assert [(record.world, record.table) for record in inst.change_log()] == [
            ("payments", "charges")
        ]


def test_a_direct_write_through_a_handle_autocommits_outside_a_transaction_block() -> None:
    host = _company()

    @host.tool
    def write_then_fail(ctx: seahaven.Ctx, atomic: bool) -> dict[str, str]:
        """Write straight into the child's store, then fail."""
        payments_db = ctx.worlds.payments.db
        if atomic:
            with payments_db.transaction():
                payments_db.execute("INSERT INTO charges (id, amount) VALUES ('a', 1)")
                raise seahaven.ToolError("failed", "failed inside the block")
        payments_db.execute("INSERT INTO charges (id, amount) VALUES ('b', 2)")
        raise seahaven.ToolError("failed", "failed after the write")

    with host.instance() as inst:
        for atomic in (True, False):
            with pytest.raises(seahaven.ToolError):
                inst.call("write_then_fail", atomic=atomic)
        assert inst.inspect().rows("SELECT id FROM payments.charges") == [{"id": "b"}]
        assert [(record.i, record.world, record.key) for record in inst.change_log()] == [
            (1, "payments", {"id": "b"})
        ]


# --- rule 6: never make an instance from inside a call --------------------------------------------


def test_making_an_instance_inside_a_tool_is_a_world_bug() -> None:
    host = _company()
    other = make_world("other")

    @host.tool
    def nest_an_instance(ctx: seahaven.Ctx) -> dict[str, str]:
        """The mistake: an instance made inside a call."""
        other.instance()
        return {}

    with host.instance() as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.call("nest_an_instance")
    assert "ctx.worlds.<name>" in str(raised.value)


def test_making_an_instance_inside_a_middleware_or_a_hook_is_a_world_bug() -> None:
    other = make_world("other")
    via_middleware = _company()
    add_echo_tools(via_middleware, "ping")

    @via_middleware.middleware
    def instance_maker(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        other.instance()
        return next_(ctx, call)

    via_hook = make_world("hooked")

    @via_hook.instance_startup
    def make_one(ctx: seahaven.Ctx) -> None:
        other.instance()

    with via_middleware.instance() as inst, pytest.raises(seahaven.WorldBug, match="inside a call"):
        inst.call("ping")
    with pytest.raises(seahaven.WorldBug, match="inside a call"):
        via_hook.instance()
