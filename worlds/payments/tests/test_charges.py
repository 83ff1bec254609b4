"""Charges: authorising, capturing now or later, partial capture, release, refusals by the card."""

from __future__ import annotations

import pytest
from payments_support import NOW, code_of, customer_with_card, record_shape, row, rows

import seahaven

pytestmark = pytest.mark.seahaven(fixture="empty", clock_mode="fixed")


def test_a_captured_charge_adds_the_amount_less_the_fee_to_the_balance(
    instance: seahaven.Instance,
) -> None:
    customer, card = customer_with_card(instance)

    charge = instance.call(
        "create_charge",
        customer_id=customer.id,
        amount=2000,
        currency="usd",
        description="Order #1",
        metadata={"order_id": "1"},
    )

    assert charge.id.startswith("ch_")
    assert (charge.status, charge.amount_captured, charge.amount_refundable) == (
        "succeeded",
        2000,
        2000,
    )
    assert (charge.payment_method_id, charge.captured_at) == (card.id, NOW)
    assert charge.metadata == {"order_id": "1"}
    # 2.9% of 2000 is 58, plus the fixed 30 cents.
    entry = row(
        instance,
        "SELECT type, source_id, amount, fee, net, available_on FROM balance_transactions"
        " WHERE id = ?",
        charge.balance_transaction_id,
    )
    assert entry == {
        "type": "charge",
        "source_id": charge.id,
        "amount": 2000,
        "fee": 88,
        "net": 1912,
        "available_on": NOW,
    }
    assert instance.call("get_balance").available_in("usd") == 1912


def test_a_captured_charge_is_one_charge_and_one_ledger_row(instance: seahaven.Instance) -> None:
    customer, _ = customer_with_card(instance)
    instance.call("create_charge", customer_id=customer.id, amount=2000, currency="usd")
    assert record_shape(instance, 2) == [("balance_transactions", "insert"), ("charges", "insert")]


@pytest.mark.parametrize(
    ("amount", "currency", "fee"),
    [(1000, "eur", 29 + 25), (2500, "gbp", 73 + 20), (50_000, "jpy", 1450), (50, "usd", 1 + 30)],
)
def test_the_fee_is_two_point_nine_percent_rounded_half_up_plus_the_fixed_fee(
    instance: seahaven.Instance, amount: int, currency: str, fee: int
) -> None:
    customer, _ = customer_with_card(instance)
    charge = instance.call(
        "create_charge", customer_id=customer.id, amount=amount, currency=currency
    )
    entry = row(
        instance, "SELECT fee FROM balance_transactions WHERE id = ?", charge.balance_transaction_id
    )
    assert entry["fee"] == fee


def test_an_authorisation_holds_the_money_until_it_is_captured(
    instance: seahaven.Instance,
) -> None:
    customer, _ = customer_with_card(instance)

    held = instance.call(
        "create_charge", customer_id=customer.id, amount=5000, currency="usd", capture=False
    )

    assert (held.status, held.amount_captured, held.balance_transaction_id) == (
        "requires_capture",
        0,
        None,
    )
    assert instance.call("get_balance").available == []
    assert record_shape(instance, 2) == [("charges", "insert")]

    captured = instance.call("capture_charge", charge_id=held.id)

    assert (captured.status, captured.amount_captured) == ("succeeded", 5000)
    assert record_shape(instance, 4) == [("balance_transactions", "insert"), ("charges", "update")]
    assert instance.call("get_balance").available_in("usd") == 5000 - (145 + 30)


def test_a_partial_capture_takes_part_and_releases_the_rest(instance: seahaven.Instance) -> None:
    customer, _ = customer_with_card(instance)
    held = instance.call(
        "create_charge", customer_id=customer.id, amount=5000, currency="usd", capture=False
    )

    captured = instance.call("capture_charge", charge_id=held.id, amount=3000)

    assert (captured.amount, captured.amount_captured, captured.amount_refundable) == (
        5000,
        3000,
        3000,
    )
    assert code_of(instance, "capture_charge", charge_id=held.id) == "INVALID_STATE"


def test_a_capture_over_the_authorised_amount_is_too_large(instance: seahaven.Instance) -> None:
    customer, _ = customer_with_card(instance)
    held = instance.call(
        "create_charge", customer_id=customer.id, amount=5000, currency="usd", capture=False
    )

    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("capture_charge", charge_id=held.id, amount=5001)

    assert raised.value.code == "AMOUNT_TOO_LARGE"
    assert raised.value.details == {"requested": 5001, "maximum": 5000, "currency": "usd"}
    assert instance.call("get_charge", charge_id=held.id).status == "requires_capture"


def test_a_capture_below_the_minimum_is_invalid_input(instance: seahaven.Instance) -> None:
    customer, _ = customer_with_card(instance)
    held = instance.call(
        "create_charge", customer_id=customer.id, amount=5000, currency="usd", capture=False
    )
    assert code_of(instance, "capture_charge", charge_id=held.id, amount=49) == "INVALID_INPUT"


def test_a_released_authorisation_is_canceled_and_never_reaches_the_balance(
    instance: seahaven.Instance,
) -> None:
    customer, _ = customer_with_card(instance)
    held = instance.call(
        "create_charge", customer_id=customer.id, amount=5000, currency="usd", capture=False
    )

    canceled = instance.call("cancel_charge", charge_id=held.id)

    assert (canceled.status, canceled.canceled_at) == ("canceled", NOW)
    assert rows(instance, "SELECT id FROM balance_transactions") == []
    assert code_of(instance, "capture_charge", charge_id=held.id) == "INVALID_STATE"
    assert code_of(instance, "cancel_charge", charge_id=held.id) == "INVALID_STATE"


def test_a_captured_charge_cannot_be_released(instance: seahaven.Instance) -> None:
    customer, _ = customer_with_card(instance)
    charge = instance.call("create_charge", customer_id=customer.id, amount=900, currency="usd")
    assert code_of(instance, "cancel_charge", charge_id=charge.id) == "INVALID_STATE"
    assert code_of(instance, "capture_charge", charge_id=charge.id) == "INVALID_STATE"


@pytest.mark.parametrize(
    ("token", "code", "decline_code"),
    [
        ("tok_chargeDeclined", "CARD_DECLINED", "card_declined"),
        ("tok_chargeDeclinedInsufficientFunds", "INSUFFICIENT_FUNDS", "insufficient_funds"),
        ("tok_chargeDeclinedExpiredCard", "EXPIRED_CARD", "expired_card"),
        ("tok_processingError", "PROCESSING_ERROR", "processing_error"),
    ],
)
def test_a_refused_card_raises_its_code_and_records_a_failed_charge(
    instance: seahaven.Instance, token: str, code: str, decline_code: str
) -> None:
    customer, _ = customer_with_card(instance, token=token)

    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("create_charge", customer_id=customer.id, amount=2500, currency="usd")

    assert raised.value.code == code
    assert raised.value.details is not None
    assert raised.value.details["decline_code"] == decline_code
    failed = instance.call("get_charge", charge_id=raised.value.details["charge_id"])
    assert (failed.status, failed.failure_code, failed.amount_captured) == (
        "failed",
        decline_code,
        0,
    )
    assert failed.failure_message
    # The failed attempt is a row an eval can grade; no money moved.
    assert record_shape(instance, 2) == [("charges", "insert")]
    assert rows(instance, "SELECT id FROM balance_transactions") == []
    assert code_of(instance, "capture_charge", charge_id=failed.id) == "INVALID_STATE"


def test_an_authorisation_on_a_refused_card_fails_too(instance: seahaven.Instance) -> None:
    customer, _ = customer_with_card(instance, token="tok_chargeDeclined")
    assert (
        code_of(
            instance,
            "create_charge",
            customer_id=customer.id,
            amount=2500,
            currency="usd",
            capture=False,
        )
        == "CARD_DECLINED"
    )
    assert row(instance, "SELECT status FROM charges") == {"status": "failed"}


def test_a_charge_may_name_a_card_other_than_the_default(instance: seahaven.Instance) -> None:
    customer, _ = customer_with_card(instance, token="tok_chargeDeclined")
    good = instance.call("attach_payment_method", customer_id=customer.id, token="tok_amex")

    charge = instance.call(
        "create_charge",
        customer_id=customer.id,
        amount=2500,
        currency="usd",
        payment_method_id=good.id,
    )

    assert (charge.status, charge.payment_method_id) == ("succeeded", good.id)


def test_a_charge_refuses_someone_elses_or_a_detached_or_unknown_card(
    instance: seahaven.Instance,
) -> None:
    ada, ada_card = customer_with_card(instance)
    bob, bob_card = customer_with_card(instance, email="bob@example.com")
    instance.call("detach_payment_method", payment_method_id=bob_card.id)
    base = {"amount": 2500, "currency": "usd"}

    assert (
        code_of(
            instance, "create_charge", customer_id=bob.id, payment_method_id=ada_card.id, **base
        )
        == "INVALID_STATE"
    )
    assert (
        code_of(
            instance, "create_charge", customer_id=bob.id, payment_method_id=bob_card.id, **base
        )
        == "INVALID_STATE"
    )
    assert (
        code_of(instance, "create_charge", customer_id=ada.id, payment_method_id="pm_none", **base)
        == "NOT_FOUND"
    )
    assert code_of(instance, "create_charge", customer_id="cus_none", **base) == "NOT_FOUND"
    assert rows(instance, "SELECT id FROM charges") == []


@pytest.mark.parametrize(
    ("arguments", "fields"),
    [
        ({"amount": 0}, ["amount"]),
        ({"amount": -100}, ["amount"]),
        ({"amount": 100_000_000}, ["amount"]),
        ({"amount": "2500"}, ["amount"]),
        ({"amount": 25.0}, ["amount"]),
        ({"currency": "USD"}, ["currency"]),
        ({"currency": "btc"}, ["currency"]),
        ({"capture": "yes"}, ["capture"]),
        ({"amount": 0, "currency": "xxx", "capture": 1}, ["amount", "capture", "currency"]),
    ],
)
def test_malformed_charge_arguments_are_invalid_input_listing_each_field(
    instance: seahaven.Instance, arguments: dict[str, object], fields: list[str]
) -> None:
    customer, _ = customer_with_card(instance)
    valid = {"customer_id": customer.id, "amount": 2500, "currency": "usd"}

    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("create_charge", **{**valid, **arguments})

    assert raised.value.code == "INVALID_INPUT"
    assert raised.value.details is not None
    assert sorted(item["field"] for item in raised.value.details["violations"]) == fields
    assert rows(instance, "SELECT id FROM charges") == []


@pytest.mark.parametrize(("currency", "minimum"), [("usd", 50), ("gbp", 30), ("jpy", 50)])
def test_a_charge_below_the_currency_minimum_is_invalid_input(
    instance: seahaven.Instance, currency: str, minimum: int
) -> None:
    customer, _ = customer_with_card(instance)
    assert (
        code_of(
            instance,
            "create_charge",
            customer_id=customer.id,
            amount=minimum - 1,
            currency=currency,
        )
        == "INVALID_INPUT"
    )
    charge = instance.call(
        "create_charge", customer_id=customer.id, amount=minimum, currency=currency
    )
    assert charge.amount == minimum


def test_an_unknown_charge_is_not_found(instance: seahaven.Instance) -> None:
    for tool in ("get_charge", "capture_charge", "cancel_charge"):
        assert code_of(instance, tool, charge_id="ch_nothing") == "NOT_FOUND"


@pytest.mark.seahaven(fixture="small_shop")
def test_charges_are_filtered_by_customer_and_status(instance: seahaven.Instance) -> None:
    customer = row(
        instance,
        "SELECT customer_id FROM charges GROUP BY customer_id HAVING count(*) = 3"
        " ORDER BY customer_id LIMIT 1",
    )["customer_id"]

    theirs = instance.call("list_charges", customer_id=customer, limit=100)
    failed = instance.call("list_charges", status="failed", limit=100)

    assert {charge.customer_id for charge in theirs.data} == {customer}
    assert len(theirs.data) == 3
    expected_failed = rows(instance, "SELECT id FROM charges WHERE status = 'failed'")
    assert sorted(charge.id for charge in failed.data) == sorted(
        item["id"] for item in expected_failed
    )
    assert code_of(instance, "list_charges", customer_id="cus_nobody") == "NOT_FOUND"
    assert code_of(instance, "list_charges", status="pending") == "INVALID_INPUT"
