"""Typed access: calling a tool by its function, at the instance and through a handle."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typed_world
from composition_worlds import make_payments, make_world
from pydantic import BaseModel

import seahaven

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


class Receipt(BaseModel):
    """A typed result, to show the tool's own object comes back."""

    id: str
    amount: int


def _receipts() -> tuple[seahaven.World, Any]:
    """A payments world whose ``charge`` returns a ``Receipt``, and that function."""
    payments = make_world(
        "payments", "CREATE TABLE charges (id TEXT PRIMARY KEY, amount INTEGER) STRICT;"
    )

    @payments.tool
    def charge(ctx: seahaven.Ctx, amount: int) -> Receipt:
        """Book ``amount`` and hand back the typed receipt for it."""
        receipt = Receipt(amount=amount, id=ctx.ids.uuid())
        ctx.db.execute("INSERT INTO charges (amount, id) VALUES (?, ?)", amount, receipt.id)
        return receipt

    return payments, charge


# --- inst.call(fn) over the composite surface -----------------------------------------------------


def test_inst_call_by_function_returns_the_tools_own_object() -> None:
    payments, charge = _receipts()
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")

    with host.instance() as inst:
        by_function = inst.call(charge, amount=500)
        by_name = inst.call("pay_charge", amount=7)
        positional = inst.call(charge, 9)
        assert isinstance(by_function, Receipt) and by_function.amount == 500
        assert isinstance(by_name, Receipt) and by_name.amount == 7
        assert positional.amount == 9
        # Resolution picks the surface entry; everything after it is an ordinary call.
        assert [record.tool for record in inst.call_log()] == ["pay_charge"] * 3
        assert [record.arguments for record in inst.call_log()] == [
            {"amount": 500},
            {"amount": 7},
            {"amount": 9},
        ]


def test_inst_call_by_function_validates_and_runs_the_chain() -> None:
    payments, charge = _receipts()
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")
    layers: list[str] = []

    @host.middleware
    def host_layer(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        layers.append(f"host {call.name}")
        return next_(ctx, call)

    @payments.middleware
    def child_layer(ctx: seahaven.Ctx, call: seahaven.Call, next_: Any) -> Any:
        layers.append(f"child {call.name}")
        return next_(ctx, call)

    with host.instance() as inst:
        with pytest.raises(seahaven.ArgumentError):
            inst.call(charge, amount="lots")
        inst.call(charge, amount=1)
        assert inst.inspect().rows("SELECT amount FROM payments.charges") == [{"amount": 1}]
    assert layers == ["host pay_charge", "child pay_charge"] * 2


def test_inst_call_by_function_runs_in_the_owners_transaction() -> None:
    payments = make_payments()

    @payments.tool
    def charge_then_fail(ctx: seahaven.Ctx, amount: int) -> dict[str, str]:
        """Write a charge, then refuse."""
        ctx.db.execute("INSERT INTO charges (id, amount) VALUES ('doomed', ?)", amount)
        raise seahaven.ToolError("declined", "declined after writing")

    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")

    with host.instance() as inst:
        with pytest.raises(seahaven.ToolError, match="declined after writing"):
            inst.call(charge_then_fail, amount=1)
        assert inst.inspect().rows("SELECT id FROM payments.charges") == []
        assert inst.call_log()[0].tool == "pay_charge_then_fail"
        assert inst.change_log() == []


def test_inst_call_refuses_a_function_whose_world_is_two_nodes() -> None:
    payments, charge = _receipts()
    host = make_world("company")
    host.add_world(payments, name="payments", tool_prefix="pay_")
    host.add_world(payments, name="payments_eu", store="eu", tool_prefix="eu_")

    with host.instance() as inst:
        with pytest.raises(seahaven.WorldBug) as raised:
            inst.call(charge, amount=1)
        assert inst.call_count == 0

    message = str(raised.value)
    assert "pay_charge at payments" in message
    assert "eu_charge at payments_eu" in message
    assert "ctx.worlds.<name>.call" in message


def test_inst_call_resolves_a_shared_node_reached_under_two_names() -> None:
    payments, charge = _receipts()
    shop = make_world("shop")
    shop.add_world(payments, tool_prefix="s_")
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(shop, tool_prefix="shop_")

    with host.instance() as inst:
        assert inst.call(charge, amount=3).amount == 3
        assert inst.inspect().rows("SELECT amount FROM payments.charges") == [{"amount": 3}]


def test_inst_call_refuses_a_function_kept_off_the_surface() -> None:
    payments, charge = _receipts()
    host = make_world("company")
    host.add_world(payments, tool_allow_list=[])

    with host.instance() as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.call(charge, amount=1)
    assert "kept off the surface by a list" in str(raised.value)
    assert "ctx.worlds.<name>.call" in str(raised.value)


def test_inst_call_refuses_a_function_that_is_no_tool() -> None:
    def not_a_tool(ctx: seahaven.Ctx, amount: int) -> dict[str, int]:
        return {"amount": amount}

    host = make_world("company")
    host.add_world(make_payments())

    with host.instance() as inst, pytest.raises(seahaven.WorldBug, match="not_a_tool"):
        inst.call(not_a_tool, amount=1)


def test_inst_call_refuses_positional_arguments_by_name() -> None:
    host = make_world("company")
    host.add_world(make_payments())

    with host.instance() as inst, pytest.raises(seahaven.WorldBug, match="by name"):
        inst.call("create_charge", 5)  # type: ignore[call-overload]


# --- handle.call(fn) over the handle's subtree ----------------------------------------------------


def test_handle_call_by_function_reaches_a_grandchild_unfiltered() -> None:
    payments, charge = _receipts()
    shop = make_world("shop")
    shop.add_world(payments, tool_allow_list=[])
    host = make_world("company")
    host.add_world(shop, tool_allow_list=[])

    @host.tool
    def charge_via_shop(ctx: seahaven.Ctx, amount: int) -> Receipt:
        """Charge the shop's own payments account."""
        receipt: Receipt = ctx.worlds.shop.call(charge, amount=amount)
        return receipt

    with host.instance() as inst:
        assert [listed["name"] for listed in inst.tools()] == ["charge_via_shop"]
        receipt = inst.call("charge_via_shop", amount=4)
        assert isinstance(receipt, Receipt) and receipt.amount == 4
        assert inst.inspect().rows("SELECT amount FROM shop__payments.charges") == [{"amount": 4}]


def test_handle_call_by_function_refuses_one_outside_its_subtree() -> None:
    payments, charge = _receipts()
    host = make_world("company")
    host.add_world(payments, tool_prefix="pay_")
    host.add_world(make_world("chat"))

    @host.tool
    def wrong_handle(ctx: seahaven.Ctx) -> dict[str, str]:
        """Ask the chat world for a payments tool."""
        ctx.worlds.chat.call(charge, amount=1)
        return {}

    with host.instance() as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.call("wrong_handle")
    assert "no world at or below 'chat'" in str(raised.value)


def test_handle_call_by_function_refuses_two_stores_below_the_handle() -> None:
    payments, charge = _receipts()
    shop = make_world("shop")
    shop.add_world(payments, name="home", tool_prefix="h_")
    shop.add_world(payments, name="abroad", store="abroad", tool_prefix="a_")
    host = make_world("company")
    host.add_world(shop, tool_allow_list=[])

    @host.tool
    def ambiguous(ctx: seahaven.Ctx) -> dict[str, str]:
        """Name a function two of the shop's stores have."""
        ctx.worlds.shop.call(charge, amount=1)
        return {}

    with host.instance() as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.call("ambiguous")
    assert "charge at shop/home" in str(raised.value)
    assert "charge at shop/abroad" in str(raised.value)


# --- handle.call("name") on the added world's own registry ----------------------------------------


def test_handle_call_by_name_uses_the_own_unprefixed_unfiltered_registry() -> None:
    host = make_world("company")
    host.add_world(make_payments(), tool_prefix="pay_", tool_allow_list=[])

    @host.tool
    def charge_hidden(ctx: seahaven.Ctx) -> dict[str, object]:
        """Reach the hidden tool by its own name."""
        created: dict[str, object] = ctx.worlds.payments.call("create_charge", amount=8)
        return created

    with host.instance() as inst:
        assert [listed["name"] for listed in inst.tools()] == ["charge_hidden"]
        assert inst.call("charge_hidden")["amount"] == 8


def test_handle_call_by_name_does_not_reach_a_grandchild() -> None:
    shop = make_world("shop")
    shop.add_world(make_payments())
    host = make_world("company")
    host.add_world(shop, tool_allow_list=[])

    @host.tool
    def too_deep(ctx: seahaven.Ctx) -> dict[str, str]:
        """Name a grandchild's tool on the child's handle."""
        ctx.worlds.shop.call("count_charges")
        return {}

    with host.instance() as inst, pytest.raises(seahaven.WorldBug, match="no tool named"):
        inst.call("too_deep")


# --- Worlds subclasses and Ctx[...] ---------------------------------------------------------------


def test_a_worlds_subclass_in_ctx_is_accepted_and_never_instantiated() -> None:
    tab, slip = typed_world.settle_then_ring_up(250)

    assert isinstance(tab, typed_world.Tab)
    assert tab.slip.cents == 250
    assert isinstance(slip, typed_world.Slip)
    assert slip.cents == 250
    assert [listed["name"] for listed in typed_world.cafe.composition().tools] == [
        "settle",
        "till_ring_up",
    ]


class ShopWorlds(seahaven.Worlds):
    """Names a type checker would know."""

    payments: seahaven.WorldHandle


def test_string_annotated_ctx_with_a_worlds_subclass_registers() -> None:
    seen: list[type] = []
    host = make_world("company")
    host.add_world(make_payments(), tool_allow_list=[])

    @host.tool
    def which_container(ctx: seahaven.Ctx[ShopWorlds]) -> dict[str, str]:
        """Report what ctx.worlds really is."""
        seen.append(type(ctx.worlds))
        return {"child": repr(ctx.worlds.payments)}

    assert which_container.__annotations__["ctx"] == "seahaven.Ctx[ShopWorlds]"
    with host.instance() as inst:
        assert inst.call("which_container") == {"child": "WorldHandle('payments')"}
    # Seahaven's own container (a class of it naming the children), never the annotation's.
    (container,) = seen
    assert issubclass(container, seahaven.Worlds) and not issubclass(container, ShopWorlds)
    assert container.__module__ == seahaven.Worlds.__module__


# --- the type checker -----------------------------------------------------------------------------

WRONG_CALL = """\
import typed_world

with typed_world.cafe.instance() as inst:
    slip = inst.call(typed_world.ring_up, cents=500)
    reveal_type(slip)
    tab = inst.call(typed_world.settle, cents=5)
    reveal_type(tab.slip)
    inst.call(typed_world.ring_up, cents="x")
"""


def test_mypy_reports_a_wrongly_typed_call_by_function(tmp_path: Path) -> None:
    """Runs mypy (about a second cold); the one test here that starts a type checker."""
    pytest.importorskip("mypy")
    checked = tmp_path / "wrong_call.py"
    checked.write_text(WRONG_CALL, encoding="utf-8")
    environment = {**os.environ, "MYPYPATH": os.pathsep.join([str(TESTS), str(REPO)])}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            checked.name,
        ],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = result.stdout.splitlines()
    errors = [line for line in lines if ": error:" in line]

    assert 'wrong_call.py:5: note: Revealed type is "typed_world.Slip"' in lines, result.stdout
    assert 'wrong_call.py:7: note: Revealed type is "typed_world.Slip"' in lines, result.stdout
    assert len(errors) == 1, result.stdout
    assert errors[0].startswith("wrong_call.py:8: error:")
    assert '"call" of "Instance"' in errors[0]
    assert result.returncode == 1
