"""The company summary: people, invoices, expenses, and the balances read through payments."""

from __future__ import annotations

import pytest
from company_support import as_

import seahaven


@pytest.mark.seahaven(fixture="acme", startup=as_("priya"))
def test_the_summary_of_acme(instance: seahaven.Instance) -> None:
    summary = instance.call("get_company_summary")
    assert (summary.active_staff, summary.inactive_staff) == (11, 1)
    assert {item.department: item.active for item in summary.headcount} == {
        "executive": 2,
        "engineering": 4,
        "finance": 2,
        "people": 1,
        "sales": 1,
        "support": 1,
    }
    assert [(i.status, i.currency, i.count, i.amount) for i in summary.invoices] == [
        ("paid", "eur", 2, 905_000),
        ("paid", "usd", 4, 2_425_000),
        ("payment_failed", "eur", 1, 142_000),
        ("payment_failed", "usd", 2, 160_000),
        ("refunded", "usd", 1, 310_000),
    ]
    assert [(e.status, e.count, e.amount) for e in summary.expenses] == [
        ("reimbursed", 4, 60_330),
        ("rejected", 1, 129_900),
        ("submitted", 4, 108_700),
    ]


@pytest.mark.seahaven(fixture="acme", startup=as_("carla"))
def test_the_summary_follows_what_happens_in_every_store(instance: seahaven.Instance) -> None:
    before = instance.call("get_company_summary")
    instance.call(
        "invoice_customer",
        customer_email="buchhaltung@hansa.test",
        amount=10_000,
        description="Spare parts",
        currency="eur",
    )
    instance.call("pay_create_payout", amount=100_000, currency="usd")
    after = instance.call("get_company_summary")
    paid_eur = next(i for i in after.invoices if (i.status, i.currency) == ("paid", "eur"))
    assert (paid_eur.count, paid_eur.amount) == (3, 915_000)
    usd_before, eur_before = before.balances
    usd_after, eur_after = after.balances
    assert usd_after.available == usd_before.available - 100_000
    # The European account settles in two days: the new money is pending there.
    assert eur_after.pending - eur_before.pending == 10_000 - (290 + 25)
    assert eur_after.available == eur_before.available == 0


@pytest.mark.seahaven(fixture="empty")
def test_the_summary_of_a_company_with_one_person(instance: seahaven.Instance) -> None:
    instance.call(
        "onboard_employee",
        full_name="Ada Founder",
        email="ada@new.test",
        title="Founder",
        role="admin",
        department="executive",
        chat_handle="ada",
    )
    summary = instance.call("get_company_summary")
    assert (summary.active_staff, summary.inactive_staff) == (1, 0)
    assert [item.active for item in summary.headcount] == [1, 0, 0, 0, 0, 0]
    assert (summary.invoices, summary.expenses) == ([], [])
    assert [(b.account, b.currency, b.available, b.pending) for b in summary.balances] == [
        ("payments", "usd", 0, 0),
        ("payments_eu", "eur", 0, 0),
    ]
