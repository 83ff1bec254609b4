"""The world as a host adds it: prefixed tools, a second account, and typed in-process calls.

The host here is a stand-in for a company world: it adds payments twice (its
own account, and an eu account in a scope of its own) and charges through the
tools by their functions, the way host code is meant to.
"""

from __future__ import annotations

import payments_world
import pytest
from payments_world.errors import CardDeclined
from payments_world.models import Balance, Charge, Payout, Refund
from payments_world.tools.charges import create_charge
from payments_world.tools.customers import create_customer
from payments_world.tools.payment_methods import attach_payment_method
from payments_world.tools.payouts import create_payout
from payments_world.tools.refunds import create_refund

import seahaven

shop = seahaven.World(
    name="shop",
    version="0.1.0",
    schema="CREATE TABLE orders (id TEXT PRIMARY KEY, charge_id TEXT NOT NULL) STRICT;",
    state_format="seahaven.state/1",
)
shop.add_world(payments_world.world, name="payments", tool_prefix="pay_")
shop.add_world(payments_world.world, name="payments_eu", store="eu", tool_prefix="eu_")


@shop.tool
def place_order(
    ctx: seahaven.Ctx, email: str, amount: int, region: str = "us"
) -> dict[str, object]:
    """Take an order: charge the customer's card on the region's account and file the order."""
    account = ctx.worlds.payments if region == "us" else ctx.worlds.payments_eu
    customer = account.call(create_customer, email=email)
    account.call(attach_payment_method, customer_id=customer.id, token="tok_visa")
    charge: Charge = account.call(
        create_charge,
        customer_id=customer.id,
        amount=amount,
        currency="usd" if region == "us" else "eur",
        metadata={"channel": "shop"},
    )
    order_id = f"order-{charge.id}"
    ctx.db.execute("INSERT INTO orders (id, charge_id) VALUES (?, ?)", order_id, charge.id)
    return {"order_id": order_id, "charge_id": charge.id, "captured": charge.amount_captured}


@shop.tool
def refund_and_pay_out(ctx: seahaven.Ctx, charge_id: str, refund: int) -> dict[str, object]:
    """Refund part of a charge, then pay out what the account has available."""
    account = ctx.worlds.payments
    returned: Refund = account.call(create_refund, charge_id=charge_id, amount=refund)
    balance: Balance = account.call("get_balance")
    account.call(
        "add_bank_account", currency="usd", account_holder_name="Shop", account_number="1234"
    )
    payout: Payout = account.call(create_payout, amount=balance.available_in("usd"), currency="usd")
    return {"refund": returned.id, "payout": payout.amount}


@shop.tool
def charge_a_refused_card(ctx: seahaven.Ctx) -> str:
    """Try a card that is declined, and say what the payments world answered."""
    account = ctx.worlds.payments
    customer = account.call(create_customer, email="refused@example.com")
    account.call(attach_payment_method, customer_id=customer.id, token="tok_chargeDeclined")
    try:
        account.call(create_charge, customer_id=customer.id, amount=900, currency="usd")
    except CardDeclined as error:
        return f"{error.code}:{error.charge_id}"
    raise AssertionError("the card was expected to be declined")


def test_a_host_sees_the_tools_under_its_prefixes() -> None:
    with shop.instance() as inst:
        names = [tool["name"] for tool in inst.tools()]
    own = payments_world.world.tools
    assert names == [
        "place_order",
        "refund_and_pay_out",
        "charge_a_refused_card",
        *(f"pay_{name}" for name in own),
        *(f"eu_{name}" for name in own),
    ]


def test_host_code_gets_typed_models_and_each_account_keeps_its_own_money() -> None:
    with shop.instance(now="2026-06-01T09:00:00.000Z", clock_mode="fixed") as inst:
        us = inst.call("place_order", email="a@example.com", amount=10_000)
        inst.call("place_order", email="b@example.com", amount=4_000, region="eu")
        done = inst.call("refund_and_pay_out", charge_id=us["charge_id"], refund=1_000)

        assert us["captured"] == 10_000
        us_balance = inst.call("pay_get_balance")
        eu_balance = inst.call("eu_get_balance")
        assert isinstance(us_balance, Balance)
        assert us_balance.available_in("usd") == 0
        assert done["payout"] == 10_000 - 320 - 1_000
        assert eu_balance.available_in("eur") == 4_000 - (116 + 25)
        view = inst.inspect()
        joined = view.one(
            "SELECT charges.metadata FROM orders"
            " JOIN payments.charges AS charges ON charges.id = orders.charge_id"
        )
        assert joined == {"metadata": '{"channel":"shop"}'}
        stores = {record.world for record in inst.change_log()}
        assert stores == {"main", "payments", "payments_eu"}


def test_a_card_error_reaches_host_code_as_the_worlds_own_exception() -> None:
    with shop.instance() as inst:
        answer = inst.call("charge_a_refused_card")
        code, charge_id = answer.split(":")
        assert code == "CARD_DECLINED"
        assert inst.call("pay_get_charge", charge_id=charge_id).status == "failed"


def test_an_agent_error_through_a_prefixed_name_keeps_the_worlds_code() -> None:
    with shop.instance() as inst, pytest.raises(seahaven.ToolError) as raised:
        inst.call("eu_get_charge", charge_id="ch_nothing")
    assert raised.value.code == "NOT_FOUND"
