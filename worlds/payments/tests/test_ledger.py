"""The balance ledger: it sums to the balance after any sequence of calls, and settles with time.

The expected balance is computed here from the charges, refunds and payouts
tables and the documented fee, never from the ledger itself, so a money
movement that forgot its balance transaction (or wrote two) is caught.
"""

from __future__ import annotations

import copy
import random
from collections import defaultdict
from pathlib import Path

import pytest
from payments_support import NOW, code_of, customer_with_card, row, rows

import seahaven

FIXED_FEES = {"usd": 30, "eur": 25, "gbp": 20, "cad": 30, "aud": 30, "jpy": 0}


def documented_fee(amount: int, currency: str) -> int:
    """2.9% rounded half up, plus the currency's fixed fee, as docs/worlds/payments.md says."""
    return (amount * 29 + 500) // 1000 + FIXED_FEES[currency]


def expected_balances(instance: seahaven.Instance) -> dict[str, int]:
    """What the merchant holds per currency, from the business tables alone."""
    totals: dict[str, int] = defaultdict(int)
    for charge in rows(
        instance, "SELECT amount_captured, currency FROM charges WHERE amount_captured > 0"
    ):
        captured = charge["amount_captured"]
        totals[charge["currency"]] += captured - documented_fee(captured, charge["currency"])
    for refund in rows(instance, "SELECT amount, currency FROM refunds"):
        totals[refund["currency"]] -= refund["amount"]
    for payout in rows(instance, "SELECT amount, currency FROM payouts WHERE status != 'canceled'"):
        totals[payout["currency"]] -= payout["amount"]
    return dict(totals)


def assert_ledger_sums(instance: seahaven.Instance) -> None:
    """The ledger, the balance the tool reports, and the business tables all agree."""
    balance = instance.call("get_balance")
    reported = {
        item.currency: item.amount + balance.pending_in(item.currency) for item in balance.available
    }
    ledger = {
        entry["currency"]: entry["total"]
        for entry in rows(
            instance,
            "SELECT currency, SUM(net) AS total FROM balance_transactions GROUP BY currency",
        )
    }
    assert reported == ledger
    expected = expected_balances(instance)
    assert {currency: ledger.get(currency, 0) for currency in expected} == expected
    assert set(ledger) <= set(expected)
    # Every money movement has exactly one entry, and every entry has a source.
    orphans = rows(
        instance,
        "SELECT id FROM balance_transactions AS t WHERE NOT EXISTS ("
        " SELECT 1 FROM charges WHERE charges.id = t.source_id AND t.type = 'charge'"
        " UNION ALL SELECT 1 FROM refunds WHERE refunds.id = t.source_id AND t.type = 'refund'"
        " UNION ALL SELECT 1 FROM payouts WHERE payouts.id = t.source_id"
        "  AND t.type IN ('payout', 'payout_cancel'))",
    )
    assert orphans == []
    entries_per_source = rows(
        instance,
        "SELECT source_id, type, count(*) AS n FROM balance_transactions"
        " GROUP BY source_id, type HAVING n != 1",
    )
    assert entries_per_source == []


class Shopper:
    """Drives a random sequence of calls, predicting the outcome of each one before making it."""

    def __init__(self, instance: seahaven.Instance, seed: int) -> None:
        self.instance = instance
        self.rng = random.Random(seed)
        self.customers: list[str] = []
        self.refusing: set[str] = set()
        self.held: list[tuple[str, int]] = []
        self.refundable: dict[str, int] = {}
        self.currency_of: dict[str, str] = {}
        self.pending_payouts: list[str] = []

    def setup(self) -> None:
        for currency in ("usd", "eur"):
            self.instance.call(
                "add_bank_account",
                currency=currency,
                account_holder_name="Ledger Test Ltd",
                account_number="000123456789",
            )
        tokens = ["tok_visa", "tok_amex", "tok_mastercard", "tok_chargeDeclined"]
        for number, token in enumerate(tokens * 2):
            customer, _ = customer_with_card(self.instance, token, f"c{number}@example.com")
            self.customers.append(customer.id)
            if token == "tok_chargeDeclined":
                self.refusing.add(customer.id)

    def step(self) -> None:
        # Charges and refunds are drawn twice as often: they are most of a shop's traffic.
        action = self.rng.choice(
            [
                "charge",
                "charge",
                "authorise",
                "capture",
                "release",
                "refund",
                "refund",
                "payout",
                "cancel_payout",
            ]
        )
        getattr(self, action)()

    def _currency(self) -> str:
        return self.rng.choice(["usd", "eur"])

    def charge(self, capture: bool = True) -> None:
        customer = self.rng.choice(self.customers)
        amount = self.rng.randint(50, 20_000)
        currency = self._currency()
        arguments = {
            "customer_id": customer,
            "amount": amount,
            "currency": currency,
            "capture": capture,
        }
        if customer in self.refusing:
            assert code_of(self.instance, "create_charge", **arguments) == "CARD_DECLINED"
            return
        charge = self.instance.call("create_charge", **arguments)
        self.currency_of[charge.id] = currency
        if capture:
            self.refundable[charge.id] = amount
        else:
            self.held.append((charge.id, amount))

    def authorise(self) -> None:
        self.charge(capture=False)

    def capture(self) -> None:
        if not self.held:
            return
        charge_id, amount = self.held.pop(self.rng.randrange(len(self.held)))
        taken = self.rng.choice([amount, max(50, amount // 2), amount + 1])
        if taken > amount:
            assert (
                code_of(self.instance, "capture_charge", charge_id=charge_id, amount=taken)
                == "AMOUNT_TOO_LARGE"
            )
            self.held.append((charge_id, amount))
            return
        self.instance.call("capture_charge", charge_id=charge_id, amount=taken)
        self.refundable[charge_id] = taken

    def release(self) -> None:
        if not self.held:
            return
        charge_id, _ = self.held.pop(self.rng.randrange(len(self.held)))
        self.instance.call("cancel_charge", charge_id=charge_id)

    def refund(self) -> None:
        if not self.refundable:
            return
        charge_id = self.rng.choice(sorted(self.refundable))
        left = self.refundable[charge_id]
        amount = self.rng.choice([None, 1, left, left + 1, max(1, left // 3)])
        if left == 0:
            assert code_of(self.instance, "create_refund", charge_id=charge_id) == "INVALID_STATE"
            return
        if amount is not None and amount > left:
            assert (
                code_of(self.instance, "create_refund", charge_id=charge_id, amount=amount)
                == "AMOUNT_TOO_LARGE"
            )
            return
        refund = self.instance.call("create_refund", charge_id=charge_id, amount=amount)
        self.refundable[charge_id] = left - refund.amount

    def payout(self) -> None:
        currency = self._currency()
        available = self.instance.call("get_balance").available_in(currency)
        amount = self.rng.choice([1, max(1, available // 2), available, available + 1])
        if amount > available or amount < 1:
            assert (
                code_of(self.instance, "create_payout", amount=max(amount, 1), currency=currency)
                == "AMOUNT_TOO_LARGE"
            )
            return
        payout = self.instance.call("create_payout", amount=amount, currency=currency)
        self.pending_payouts.append(payout.id)

    def cancel_payout(self) -> None:
        if not self.pending_payouts:
            return
        payout_id = self.pending_payouts.pop(self.rng.randrange(len(self.pending_payouts)))
        self.instance.call("cancel_payout", payout_id=payout_id)


@pytest.mark.parametrize("seed", range(6))
def test_the_ledger_sums_to_the_balance_after_any_sequence(
    world: seahaven.World, seed: int
) -> None:
    with world.instance("empty", clock_mode="tick", seed=seed) as instance:
        shopper = Shopper(instance, seed)
        shopper.setup()
        for _ in range(60):
            shopper.step()
            assert_ledger_sums(instance)
        # The sequence did real work in both directions, not sixty no-ops.
        kinds = {entry["type"] for entry in rows(instance, "SELECT type FROM balance_transactions")}
        assert {"charge", "refund", "payout"} <= kinds


@pytest.mark.seahaven(fixture="small_shop")
def test_the_small_shop_ledger_sums_to_its_balance(instance: seahaven.Instance) -> None:
    assert_ledger_sums(instance)


@pytest.mark.seahaven(fixture="empty", clock_mode="fixed", startup={"settlement_days": 2})
def test_with_a_settlement_delay_captured_funds_are_pending_and_cannot_be_paid_out(
    instance: seahaven.Instance,
) -> None:
    customer, _ = customer_with_card(instance)
    instance.call(
        "add_bank_account", currency="usd", account_holder_name="A", account_number="1234"
    )
    charge = instance.call("create_charge", customer_id=customer.id, amount=10_000, currency="usd")

    balance = instance.call("get_balance")

    net = 10_000 - documented_fee(10_000, "usd")
    assert (balance.available_in("usd"), balance.pending_in("usd")) == (0, net)
    entry = instance.call(
        "get_balance_transaction", balance_transaction_id=charge.balance_transaction_id
    )
    assert (entry.status, entry.available_on) == ("pending", "2026-06-03T09:00:00.000Z")
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call("create_payout", amount=1, currency="usd")
    assert raised.value.code == "AMOUNT_TOO_LARGE"
    assert raised.value.details is not None and raised.value.details["maximum"] == 0
    # A refund takes from available at once, so available goes below zero.
    instance.call("create_refund", charge_id=charge.id, amount=1000)
    balance = instance.call("get_balance")
    assert (balance.available_in("usd"), balance.pending_in("usd")) == (-1000, net)


def test_pending_funds_become_available_once_the_clock_passes_available_on(
    world: seahaven.World, tmp_path: Path
) -> None:
    settled = copy.copy(world)
    settled.fixtures_dir = tmp_path
    with settled.instance(now=NOW, clock_mode="fixed", startup={"settlement_days": 2}) as building:
        customer, _ = customer_with_card(building)
        building.call("create_charge", customer_id=customer.id, amount=10_000, currency="usd")
        building.freeze("one_pending_charge", "One captured charge, settling over two days.")
    net = 10_000 - documented_fee(10_000, "usd")

    for now, available, pending in [
        ("2026-06-03T08:59:59.999Z", 0, net),
        ("2026-06-03T09:00:00.000Z", net, 0),
    ]:
        with settled.instance("one_pending_charge", now=now, clock_mode="fixed") as later:
            balance = later.call("get_balance")
            assert (balance.available_in("usd"), balance.pending_in("usd")) == (available, pending)


@pytest.mark.parametrize("bad", [-1, 31, True, "2"])
def test_a_settlement_delay_out_of_range_is_the_authors_mistake(
    world: seahaven.World, bad: object
) -> None:
    with pytest.raises(seahaven.WorldBug, match="settlement_days"):
        world.instance("empty", startup={"settlement_days": bad})


@pytest.mark.seahaven(fixture="small_shop", clock_mode="fixed")
def test_balance_transactions_filter_by_type_currency_and_source(
    instance: seahaven.Instance,
) -> None:
    refunds = instance.call("list_balance_transactions", type="refund", limit=100)
    eur = instance.call("list_balance_transactions", currency="eur", limit=100)
    payout = row(instance, "SELECT id FROM payouts WHERE status = 'canceled'")["id"]
    of_payout = instance.call("list_balance_transactions", source_id=payout)

    assert {entry.type for entry in refunds.data} == {"refund"}
    assert len(refunds.data) == row(instance, "SELECT count(*) AS n FROM refunds")["n"]
    assert {entry.currency for entry in eur.data} == {"eur"}
    assert sorted(entry.type for entry in of_payout.data) == ["payout", "payout_cancel"]
    assert sum(entry.net for entry in of_payout.data) == 0
    assert code_of(instance, "list_balance_transactions", type="transfer") == "INVALID_INPUT"
    assert (
        code_of(instance, "get_balance_transaction", balance_transaction_id="txn_nothing")
        == "NOT_FOUND"
    )


@pytest.mark.seahaven(fixture="empty")
def test_an_empty_account_has_no_balance(instance: seahaven.Instance) -> None:
    balance = instance.call("get_balance")
    assert (balance.available, balance.pending) == ([], [])
    assert (balance.available_in("usd"), balance.pending_in("usd")) == (0, 0)
