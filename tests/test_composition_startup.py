"""Startup across the tree: order, open transactions, broadcast and bound keywords, failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from composition_worlds import CHARGES, STAFF, make_payments, make_world

import seahaven


def _recording(name: str, order: list[str], schema: str = "", **options: Any) -> seahaven.World:
    world = make_world(name, schema, **options)

    @world.instance_startup
    def record(ctx: seahaven.Ctx) -> None:
        order.append(name)

    return world


def _regional_payments() -> seahaven.World:
    payments = make_payments()

    @payments.instance_startup
    def open_account(ctx: seahaven.Ctx, *, region: str = "us", plan: str = "free") -> None:
        ctx.state["region"] = region
        ctx.state["plan"] = plan

    @payments.tool
    def account(ctx: seahaven.Ctx) -> dict[str, str]:
        """What this account was configured as."""
        return {"region": ctx.state["region"], "plan": ctx.state["plan"]}

    return payments


# --- order ----------------------------------------------------------------------------------------


def test_hooks_run_depth_first_from_the_root_in_add_world_order() -> None:
    order: list[str] = []
    root = _recording("root", order)
    first = _recording("first", order)
    first_child = _recording("first_child", order)
    second = _recording("second", order)
    first.add_world(first_child)
    root.add_world(first)
    root.add_world(second)

    with root.instance():
        pass
    assert order == ["root", "first", "first_child", "second"]


def test_a_shared_node_runs_after_every_world_that_adds_it_and_once() -> None:
    order: list[str] = []
    root = _recording("root", order)
    left = _recording("left", order)
    right = _recording("right", order)
    shared = _recording("shared", order)
    below_shared = _recording("below_shared", order)
    shared.add_world(below_shared)
    left.add_world(shared)
    right.add_world(shared)
    root.add_world(left)
    root.add_world(right)

    with root.instance():
        pass
    assert order == ["root", "left", "right", "shared", "below_shared"]


def test_a_worlds_hooks_run_in_registration_order_with_no_call() -> None:
    calls: list[tuple[str, object]] = []
    world = make_world("alone")

    @world.instance_startup
    def first(ctx: seahaven.Ctx) -> None:
        calls.append(("first", ctx.call))

    @world.instance_startup
    def second(ctx: seahaven.Ctx) -> None:
        calls.append(("second", ctx.call))

    with world.instance():
        pass
    assert calls == [("first", None), ("second", None)]


def test_each_hook_runs_with_its_own_nodes_context() -> None:
    payments = make_payments()

    @payments.instance_startup
    def seed_account(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO charges (id, amount) VALUES ('opening', 100)")
        ctx.state["owner"] = "payments hook"

    host = make_world("company", STAFF)

    @host.instance_startup
    def seed_staff(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO staff (id) VALUES ('ada')")
        ctx.state["owner"] = "company hook"

    host.add_world(payments)

    @host.tool
    def owners(ctx: seahaven.Ctx) -> dict[str, str]:
        """Whose state is whose."""
        return {"host": ctx.state["owner"], "child": ctx.worlds.payments.state["owner"]}

    with host.instance() as inst:
        assert inst.call("owners") == {"host": "company hook", "child": "payments hook"}
        view = inst.inspect()
        assert view.rows("SELECT id FROM staff") == [{"id": "ada"}]
        assert view.rows("SELECT id FROM payments.charges") == [{"id": "opening"}]
        # Rows written while the hooks run are the starting state, not changes.
        assert inst.change_log() == []


def test_every_nodes_transaction_is_open_before_the_first_hook() -> None:
    payments = make_payments()
    seen: dict[str, Any] = {}

    @payments.instance_startup
    def see_what_the_host_prepared(ctx: seahaven.Ctx) -> None:
        row = ctx.db.one("SELECT count(*) AS n FROM charges")
        seen["rows"] = None if row is None else row["n"]
        seen["forwarded"] = ctx.state.get("forwarded")
        seen["in transaction"] = ctx.db.in_transaction

    host = make_world("company")

    @host.instance_startup
    def prepare_child(ctx: seahaven.Ctx) -> None:
        child = ctx.worlds.payments
        seen["child in transaction"] = child.db.in_transaction
        child.db.execute("INSERT INTO charges (id, amount) VALUES ('from_host', 1)")
        child.state["forwarded"] = "value from the host"

    host.add_world(payments)

    with host.instance() as inst:
        assert inst.inspect().rows("SELECT id FROM payments.charges") == [{"id": "from_host"}]
    assert seen == {
        "child in transaction": True,
        "rows": 1,
        "forwarded": "value from the host",
        "in transaction": True,
    }


def test_a_handle_made_in_a_hook_dies_when_startup_ends() -> None:
    kept: list[seahaven.WorldHandle] = []
    host = make_world("company")

    @host.instance_startup
    def keep(ctx: seahaven.Ctx) -> None:
        kept.append(ctx.worlds.payments)

    host.add_world(make_payments())

    with host.instance():
        with pytest.raises(seahaven.WorldBug) as raised:
            kept[0].state  # noqa: B018
        assert str(raised.value) == "a world handle was used after the call it belongs to returned"


# --- broadcast and bound keywords -----------------------------------------------------------------


def test_caller_keywords_are_broadcast_and_bound_ones_win_on_their_node_only() -> None:
    payments = _regional_payments()
    host = make_world("company")
    host.add_world(payments, name="payments", tool_prefix="pay_")
    host.add_world(
        payments, name="payments_eu", store="eu", tool_prefix="eu_", startup={"region": "eu"}
    )

    with host.instance(startup={"region": "uk", "plan": "enterprise"}) as inst:
        assert inst.call("pay_account") == {"region": "uk", "plan": "enterprise"}
        assert inst.call("eu_account") == {"region": "eu", "plan": "enterprise"}
        assert inst.state()["startup"] == {"region": "uk", "plan": "enterprise"}

    with host.instance() as inst:
        assert inst.call("pay_account") == {"region": "us", "plan": "free"}
        assert inst.call("eu_account") == {"region": "eu", "plan": "free"}


def test_a_hook_receives_only_the_keywords_it_names() -> None:
    received: dict[str, dict[str, Any]] = {}
    payments = make_payments()

    @payments.instance_startup
    def configure(ctx: seahaven.Ctx, *, region: str = "us") -> None:
        received["payments"] = {"region": region}

    host = make_world("company")

    @host.instance_startup
    def sign_in(ctx: seahaven.Ctx, *, user: str = "nobody") -> None:
        received["company"] = {"user": user}

    host.add_world(payments)

    with host.instance(startup={"user": "ada", "region": "uk"}):
        pass
    assert received == {"company": {"user": "ada"}, "payments": {"region": "uk"}}


def test_a_required_keyword_may_be_satisfied_by_a_binding() -> None:
    payments = make_payments()

    @payments.instance_startup
    def configure(ctx: seahaven.Ctx, *, region: str) -> None:
        ctx.state["region"] = region

    bound = make_world("bound")
    bound.add_world(payments, startup={"region": "eu"})
    unbound = make_world("unbound")
    unbound.add_world(payments)

    with bound.instance():
        pass
    with pytest.raises(seahaven.WorldBug, match="needs startup keyword 'region'"):
        unbound.instance()


def test_an_unknown_keyword_is_checked_against_the_whole_tree_before_any_file(
    tmp_path: Path,
) -> None:
    grandchild = _regional_payments()
    child = make_world("shop")
    child.add_world(grandchild)
    host = make_world("company", work_dir=tmp_path)
    host.add_world(child)

    # Known to a grandchild's hook only, and so known to the tree.
    with host.instance(startup={"plan": "pro"}) as inst:
        assert inst.call("account") == {"region": "us", "plan": "pro"}

    with pytest.raises(seahaven.WorldBug) as raised:
        host.instance(startup={"plna": "pro"})
    assert "unknown startup keyword 'plna'" in str(raised.value)
    assert "plan, region" in str(raised.value)
    assert list(tmp_path.iterdir()) == []


def test_a_raising_hook_rolls_back_every_node_and_leaves_no_instance(tmp_path: Path) -> None:
    ledger = make_world("ledger", CHARGES)
    attempts: list[str] = []

    @ledger.instance_startup
    def refuse(ctx: seahaven.Ctx, *, user: str = "") -> None:
        attempts.append(user)
        if user == "ghost":
            raise seahaven.WorldBug("user 'ghost' names nobody")

    host = make_world("company", STAFF, work_dir=tmp_path)

    @host.instance_startup
    def write_everywhere(ctx: seahaven.Ctx) -> None:
        ctx.db.execute("INSERT INTO staff (id) VALUES ('ada')")
        ctx.worlds.ledger.db.execute("INSERT INTO charges (id, amount) VALUES ('c', 1)")

    host.add_world(ledger)

    with pytest.raises(seahaven.WorldBug, match="names nobody"):
        host.instance(startup={"user": "ghost"})
    assert attempts == ["ghost"]
    assert list(tmp_path.iterdir()) == []

    with host.instance(startup={"user": "ada"}) as inst:
        view = inst.inspect()
        assert view.rows("SELECT id FROM staff") == [{"id": "ada"}]
        assert view.rows("SELECT id FROM ledger.charges") == [{"id": "c"}]
