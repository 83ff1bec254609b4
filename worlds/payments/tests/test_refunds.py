"""Refunds: partial and full, never more than was captured, and what a refund writes."""

from __future__ import annotations

import pytest
from payments_support import NOW, code_of, customer_with_card, row, rows
from payments_world.models import Charge

import seahaven

pytestmark = pytest.mark.seahaven(fixture="empty", clock_mode="fixed")


def _captured(instance: seahaven.Instance, amount: int = 4000) -> Charge:
    customer, _ = customer_with_card(instance)
    charge: Charge = instance.call(
        "create_charge", customer_id=customer.id, amount=amount, currency="eur"
    )
    return charge


def test_a_partial_refund_leaves_the_rest_refundable(instance: seahaven.Instance) -> None:
    charge = _captured(instance)

    refund = instance.call(
        "create_refund", charge_id=charge.id, amount=1500, reason="requested_by_customer"
    )

    assert refund.id.startswith("re_")
    assert (refund.amount, refund.currency, refund.reason, refund.status) == (
        1500,
        "eur",
        "requested_by_customer",
        "succeeded",
    )
    after = instance.call("get_charge", charge_id=charge.id)
    assert (after.status, after.amount_refunded, after.amount_refundable) == (
        "partially_refunded",
        1500,
        2500,
    )
    assert instance.call("get_refund", refund_id=refund.id) == refund


def test_a_refund_is_one_refund_one_charge_update_and_one_ledger_row(
    instance: seahaven.Instance,
) -> None:
    charge = _captured(instance)

    refund = instance.call("create_refund", charge_id=charge.id, amount=1500)

    records = [record for record in instance.change_log() if record.i == 3]
    assert sorted((record.table, record.op) for record in records) == [
        ("balance_transactions", "insert"),
        ("charges", "update"),
        ("refunds", "insert"),
    ]
    by_table = {record.table: record for record in records}
    assert by_table["refunds"].key == {"id": refund.id}
    assert by_table["charges"].key == {"id": charge.id}
    assert by_table["charges"].before is not None and by_table["charges"].after is not None
    assert (by_table["charges"].before["amount_refunded"], by_table["charges"].after) == (
        0,
        {**by_table["charges"].before, "amount_refunded": 1500, "status": "partially_refunded"},
    )
    entry = by_table["balance_transactions"].after
    assert entry is not None
    assert (entry["type"], entry["source_id"], entry["net"], entry["available_on"]) == (
        "refund",
        refund.id,
        -1500,
        NOW,
    )


def test_refunds_add_up_to_a_full_refund(instance: seahaven.Instance) -> None:
    charge = _captured(instance)
    instance.call("create_refund", charge_id=charge.id, amount=1000)

    rest = instance.call("create_refund", charge_id=charge.id, reason="duplicate")

    assert rest.amount == 3000
    after = instance.call("get_charge", charge_id=charge.id)
    assert (after.status, after.amount_refunded, after.amount_refundable) == ("refunded", 4000, 0)
    # The fee is kept: the balance is what the capture netted, less everything returned.
    fee = (4000 * 290 + 5000) // 10000 + 25
    assert instance.call("get_balance").available_in("eur") == -fee
    assert code_of(instance, "create_refund", charge_id=charge.id, amount=1) == "INVALID_STATE"


def test_a_refund_over_what_is_left_is_too_large_and_writes_nothing(
    instance: seahaven.Instance,
) -> None:
    charge = _captured(instance)
    instance.call("create_refund", charge_id=charge.id, amount=3000)

    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("create_refund", charge_id=charge.id, amount=1001)

    assert raised.value.code == "AMOUNT_TOO_LARGE"
    assert raised.value.details == {"requested": 1001, "maximum": 1000, "currency": "eur"}
    assert row(instance, "SELECT count(*) AS n FROM refunds") == {"n": 1}
    assert row(instance, "SELECT count(*) AS n FROM balance_transactions") == {"n": 2}


def test_only_the_captured_part_of_a_partial_capture_is_refundable(
    instance: seahaven.Instance,
) -> None:
    customer, _ = customer_with_card(instance)
    held = instance.call(
        "create_charge", customer_id=customer.id, amount=5000, currency="usd", capture=False
    )
    instance.call("capture_charge", charge_id=held.id, amount=2000)

    assert code_of(instance, "create_refund", charge_id=held.id, amount=2001) == (
        "AMOUNT_TOO_LARGE"
    )
    assert instance.call("create_refund", charge_id=held.id).amount == 2000


def test_a_charge_that_took_no_money_cannot_be_refunded(instance: seahaven.Instance) -> None:
    customer, _ = customer_with_card(instance)
    held = instance.call(
        "create_charge", customer_id=customer.id, amount=5000, currency="usd", capture=False
    )
    released = instance.call(
        "create_charge", customer_id=customer.id, amount=5000, currency="usd", capture=False
    )
    instance.call("cancel_charge", charge_id=released.id)
    refused = instance.call(
        "attach_payment_method", customer_id=customer.id, token="tok_chargeDeclined"
    )
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call(
            "create_charge",
            customer_id=customer.id,
            amount=5000,
            currency="usd",
            payment_method_id=refused.id,
        )
    assert raised.value.details is not None
    failed = raised.value.details["charge_id"]

    for charge_id in (held.id, released.id, failed):
        assert code_of(instance, "create_refund", charge_id=charge_id) == "INVALID_STATE"
    assert rows(instance, "SELECT id FROM refunds") == []


def test_a_refund_refuses_bad_arguments_and_unknown_charges(instance: seahaven.Instance) -> None:
    charge = _captured(instance)
    assert code_of(instance, "create_refund", charge_id="ch_nothing") == "NOT_FOUND"
    assert code_of(instance, "create_refund", charge_id=charge.id, amount=0) == "INVALID_INPUT"
    assert (
        code_of(instance, "create_refund", charge_id=charge.id, reason="changed_my_mind")
        == "INVALID_INPUT"
    )
    assert code_of(instance, "get_refund", refund_id="re_nothing") == "NOT_FOUND"


def test_refunds_are_listed_per_charge(instance: seahaven.Instance) -> None:
    first = _captured(instance)
    second = _captured(instance)
    a = instance.call("create_refund", charge_id=first.id, amount=100)
    b = instance.call("create_refund", charge_id=first.id, amount=200)
    instance.call("create_refund", charge_id=second.id, amount=300)

    listed = instance.call("list_refunds", charge_id=first.id)

    assert sorted(refund.id for refund in listed.data) == sorted([a.id, b.id])
    assert len(instance.call("list_refunds").data) == 3
    assert code_of(instance, "list_refunds", charge_id="ch_nothing") == "NOT_FOUND"
