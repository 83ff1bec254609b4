"""Bank accounts and payouts: never more than the available balance, cancellable while pending."""

from __future__ import annotations

import pytest
from payments_support import NOW, code_of, customer_with_card, record_shape, row, rows

import seahaven

pytestmark = pytest.mark.seahaven(fixture="empty", clock_mode="fixed")


def _funded(instance: seahaven.Instance, amount: int = 10_000) -> int:
    """Capture ``amount`` usd and return the available balance it leaves."""
    customer, _ = customer_with_card(instance)
    instance.call("create_charge", customer_id=customer.id, amount=amount, currency="usd")
    available: int = instance.call("get_balance").available_in("usd")
    return available


def test_the_first_bank_account_in_a_currency_is_its_default(instance: seahaven.Instance) -> None:
    first = instance.call(
        "add_bank_account",
        currency="usd",
        account_holder_name="Tidewater Supply Co.",
        account_number="000123456789",
        routing_number="110000000",
    )
    second = instance.call(
        "add_bank_account", currency="usd", account_holder_name="Reserve", account_number="9876"
    )
    euro = instance.call(
        "add_bank_account",
        currency="eur",
        account_holder_name="Tidewater Supply Co.",
        account_number="DE89370400440532013000",
    )

    assert first.id.startswith("ba_")
    assert (first.last4, first.routing_number, first.default_for_currency) == (
        "6789",
        "110000000",
        True,
    )
    assert (second.default_for_currency, euro.default_for_currency) == (False, True)
    # Only the last four digits of an account number are kept.
    stored = rows(instance, "SELECT * FROM bank_accounts")
    assert all("000123456789" not in str(account.values()) for account in stored)


def test_a_new_default_bank_account_replaces_the_old_one(instance: seahaven.Instance) -> None:
    old = instance.call(
        "add_bank_account", currency="usd", account_holder_name="A", account_number="1111"
    )
    new = instance.call(
        "add_bank_account",
        currency="usd",
        account_holder_name="B",
        account_number="2222",
        set_as_default=True,
    )

    listed = {account.id: account for account in instance.call("list_bank_accounts").data}

    assert (listed[old.id].default_for_currency, listed[new.id].default_for_currency) == (
        False,
        True,
    )
    assert record_shape(instance, 1) == [("bank_accounts", "insert"), ("bank_accounts", "update")]


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"account_number": "12"}, "account_number"),
        ({"account_number": "1234-5678"}, "account_number"),
        ({"routing_number": "11000000A"}, "routing_number"),
        ({"currency": "chf"}, "currency"),
        ({"account_holder_name": ""}, "account_holder_name"),
    ],
)
def test_a_malformed_bank_account_is_invalid_input(
    instance: seahaven.Instance, arguments: dict[str, object], field: str
) -> None:
    valid = {"currency": "usd", "account_holder_name": "A", "account_number": "1234"}
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("add_bank_account", **{**valid, **arguments})
    assert raised.value.code == "INVALID_INPUT"
    assert raised.value.details is not None
    assert [item["field"] for item in raised.value.details["violations"]] == [field]


def test_a_payout_takes_from_the_available_balance(instance: seahaven.Instance) -> None:
    account = instance.call(
        "add_bank_account", currency="usd", account_holder_name="A", account_number="1234"
    )
    available = _funded(instance)

    payout = instance.call("create_payout", amount=4000, currency="usd", description="Weekly")

    assert payout.id.startswith("po_")
    assert (payout.status, payout.bank_account_id, payout.arrival_date, payout.created_at) == (
        "pending",
        account.id,
        "2026-06-03",
        NOW,
    )
    assert instance.call("get_balance").available_in("usd") == available - 4000
    assert record_shape(instance, 5) == [
        ("balance_transactions", "insert"),
        ("payouts", "insert"),
    ]
    assert instance.call("get_payout", payout_id=payout.id) == payout


def test_a_payout_may_take_exactly_the_available_balance_and_not_a_cent_more(
    instance: seahaven.Instance,
) -> None:
    instance.call(
        "add_bank_account", currency="usd", account_holder_name="A", account_number="1234"
    )
    available = _funded(instance)

    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("create_payout", amount=available + 1, currency="usd")

    assert raised.value.code == "AMOUNT_TOO_LARGE"
    assert raised.value.details == {
        "requested": available + 1,
        "maximum": available,
        "currency": "usd",
    }
    assert rows(instance, "SELECT id FROM payouts") == []
    instance.call("create_payout", amount=available, currency="usd")
    assert instance.call("get_balance").available_in("usd") == 0


def test_a_payout_in_a_currency_with_no_funds_is_too_large(instance: seahaven.Instance) -> None:
    instance.call(
        "add_bank_account", currency="eur", account_holder_name="A", account_number="1234"
    )
    _funded(instance)
    assert code_of(instance, "create_payout", amount=100, currency="eur") == "AMOUNT_TOO_LARGE"


def test_a_payout_needs_a_bank_account_in_its_currency(instance: seahaven.Instance) -> None:
    _funded(instance)
    assert code_of(instance, "create_payout", amount=100, currency="usd") == "INVALID_STATE"
    euro = instance.call(
        "add_bank_account", currency="eur", account_holder_name="A", account_number="1234"
    )
    assert (
        code_of(instance, "create_payout", amount=100, currency="usd", bank_account_id=euro.id)
        == "INVALID_INPUT"
    )
    assert (
        code_of(instance, "create_payout", amount=100, currency="usd", bank_account_id="ba_none")
        == "NOT_FOUND"
    )
    assert rows(instance, "SELECT id FROM payouts") == []


def test_a_payout_may_name_a_bank_account_other_than_the_default(
    instance: seahaven.Instance,
) -> None:
    instance.call(
        "add_bank_account", currency="usd", account_holder_name="A", account_number="1111"
    )
    reserve = instance.call(
        "add_bank_account", currency="usd", account_holder_name="B", account_number="2222"
    )
    _funded(instance)

    payout = instance.call("create_payout", amount=100, currency="usd", bank_account_id=reserve.id)

    assert payout.bank_account_id == reserve.id


def test_cancelling_a_pending_payout_returns_its_amount(instance: seahaven.Instance) -> None:
    instance.call(
        "add_bank_account", currency="usd", account_holder_name="A", account_number="1234"
    )
    available = _funded(instance)
    payout = instance.call("create_payout", amount=3000, currency="usd")

    canceled = instance.call("cancel_payout", payout_id=payout.id)

    assert (canceled.status, canceled.canceled_at) == ("canceled", NOW)
    assert instance.call("get_balance").available_in("usd") == available
    assert record_shape(instance, 6) == [
        ("balance_transactions", "insert"),
        ("payouts", "update"),
    ]
    assert code_of(instance, "cancel_payout", payout_id=payout.id) == "INVALID_STATE"
    assert code_of(instance, "cancel_payout", payout_id="po_nothing") == "NOT_FOUND"
    assert code_of(instance, "get_payout", payout_id="po_nothing") == "NOT_FOUND"


@pytest.mark.seahaven(fixture="small_shop")
def test_payouts_are_listed_by_status(instance: seahaven.Instance) -> None:
    pending = instance.call("list_payouts", status="pending")
    canceled = instance.call("list_payouts", status="canceled")

    assert sorted(payout.currency for payout in pending.data) == ["eur", "usd"]
    assert [payout.amount for payout in canceled.data] == [5000]
    assert instance.call("list_payouts", status="paid").data == []
    assert code_of(instance, "list_payouts", status="in_transit") == "INVALID_INPUT"


def test_a_payout_whose_arrival_date_has_come_is_paid_when_an_instance_starts(
    world: seahaven.World,
) -> None:
    # A fixed clock, so the start instant is exactly the one given.
    with world.instance("small_shop", now="2026-06-02T23:59:59.999Z", clock_mode="fixed") as before:
        assert len(before.call("list_payouts", status="pending").data) == 2

    with world.instance(
        "small_shop", now="2026-06-03T00:00:00.000Z", clock_mode="fixed"
    ) as arrived:
        paid = arrived.call("list_payouts", status="paid")
        assert sorted(payout.currency for payout in paid.data) == ["eur", "usd"]
        assert arrived.call("list_payouts", status="pending").data == []
        # Settling is starting state, not the agent's work, so the log is empty.
        assert arrived.change_log() == []
        assert row(arrived, "SELECT count(*) AS n FROM payouts WHERE status = 'paid'") == {"n": 2}
        for payout in paid.data:
            assert code_of(arrived, "cancel_payout", payout_id=payout.id) == "INVALID_STATE"
