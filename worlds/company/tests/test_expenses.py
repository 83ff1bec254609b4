"""Expenses: filed by staff, decided by finance, reimbursed by a payout from the usd account."""

from __future__ import annotations

import pytest
from company_support import as_, count, refused, row, rows, snapshot, staff_id

import seahaven


def _waiting(instance: seahaven.Instance, handle: str) -> str:
    """The id of the first expense of that person still waiting for a decision."""
    return str(
        row(
            instance,
            "SELECT e.id FROM expenses AS e JOIN staff AS s ON s.id = e.staff_id"
            " WHERE s.email = ? AND e.status = 'submitted' ORDER BY e.amount DESC LIMIT 1",
            f"{handle}@acme-robotics.test",
        )["id"]
    )


@pytest.mark.seahaven(fixture="acme", startup=as_("sam"))
def test_staff_file_their_own_expenses(instance: seahaven.Instance) -> None:
    filed = instance.call(
        "submit_expense",
        amount=2_350,
        category="meals",
        description="  Lunch with a candidate  ",
        incurred_on="2026-05-31",
    )
    sam = staff_id(instance, "sam")
    assert (filed.staff_id, filed.submitted_by, filed.status, filed.currency) == (
        sam,
        sam,
        "submitted",
        "usd",
    )
    assert (filed.description, filed.incurred_on, filed.decision) == (
        "Lunch with a candidate",
        "2026-05-31",
        None,
    )
    before = snapshot(instance)
    error = refused(
        instance,
        "INVALID_INPUT",
        "submit_expense",
        amount=100,
        category="meals",
        description="Tomorrow's lunch",
        incurred_on="2026-06-02",
    )
    assert "is in the future" in error.message
    refused(
        instance,
        "FORBIDDEN",
        "submit_expense",
        amount=100,
        category="meals",
        description="For Jonas",
        incurred_on="2026-05-30",
        staff_id=staff_id(instance, "jonas"),
    )
    refused(
        instance,
        "INVALID_INPUT",
        "submit_expense",
        amount=0,
        category="snacks",
        description="x",
        incurred_on="yesterday",
    )
    assert snapshot(instance) == before


@pytest.mark.seahaven(fixture="acme", startup=as_("carla"))
def test_finance_files_for_someone_else_but_not_for_someone_who_left(
    instance: seahaven.Instance,
) -> None:
    jonas = staff_id(instance, "jonas")
    filed = instance.call(
        "submit_expense",
        amount=4_000,
        category="office",
        description="Cables",
        incurred_on="2026-05-30",
        staff_id=jonas,
    )
    assert (filed.staff_id, filed.submitted_by) == (jonas, staff_id(instance, "carla"))
    refused(
        instance,
        "INVALID_STATE",
        "submit_expense",
        amount=4_000,
        category="office",
        description="Cables",
        incurred_on="2026-05-30",
        staff_id=staff_id(instance, "nina"),
    )


@pytest.mark.seahaven(fixture="acme", startup=as_("tom"))
def test_approving_reimburses_by_a_payout_to_the_person_s_bank_account(
    instance: seahaven.Instance,
) -> None:
    expense_id = _waiting(instance, "rafael")
    rafael = instance.call("get_staff", staff_id=staff_id(instance, "rafael"))
    available = instance.call("pay_get_balance").available_in("usd")

    approved = instance.call("approve_expense", expense_id=expense_id, note="Hansa trip")

    assert approved.status == "reimbursed" and approved.payout_id is not None
    assert approved.decision is not None
    assert (approved.decision.decision, approved.decision.decided_by, approved.decision.note) == (
        "approved",
        staff_id(instance, "tom"),
        "Hansa trip",
    )
    payout = instance.call("pay_get_payout", payout_id=approved.payout_id)
    assert (payout.amount, payout.currency, payout.bank_account_id, payout.status) == (
        52_000,
        "usd",
        rafael.reimbursement_bank_account_id,
        "pending",
    )
    assert payout.arrival_date == "2026-06-03"
    assert instance.call("pay_get_balance").available_in("usd") == available - 52_000
    refused(instance, "INVALID_STATE", "approve_expense", expense_id=expense_id)
    refused(instance, "INVALID_STATE", "reject_expense", expense_id=expense_id, reason="No")


@pytest.mark.seahaven(fixture="acme", startup=as_("carla"))
def test_nobody_decides_on_their_own_expense(instance: seahaven.Instance) -> None:
    own = _waiting(instance, "carla")
    before = snapshot(instance)
    refused(instance, "FORBIDDEN", "approve_expense", expense_id=own)
    refused(instance, "FORBIDDEN", "reject_expense", expense_id=own, reason="Too pricey")
    assert snapshot(instance) == before


@pytest.mark.seahaven(fixture="acme", startup=as_("tom"))
def test_no_reimbursement_without_an_account_on_file(instance: seahaven.Instance) -> None:
    aikos = _waiting(instance, "aiko")
    before = snapshot(instance)
    error = refused(instance, "INVALID_STATE", "approve_expense", expense_id=aikos)
    assert error.details == {"staff_id": staff_id(instance, "aiko")}
    assert snapshot(instance) == before


@pytest.mark.seahaven(fixture="acme", startup=as_("tom"))
def test_a_payout_the_balance_cannot_cover_is_the_processor_s_refusal_and_records_nothing(
    instance: seahaven.Instance,
) -> None:
    available = instance.call("pay_get_balance").available_in("usd")
    with instance.bulk() as ctx:
        # More than the account holds, which no tool would let anyone file at once.
        ctx.db.execute(
            "UPDATE expenses SET amount = ? WHERE id = ?",
            available + 1,
            _waiting(instance, "rafael"),
        )
    expense_id = _waiting(instance, "rafael")
    before = snapshot(instance)
    error = refused(instance, "AMOUNT_TOO_LARGE", "approve_expense", expense_id=expense_id)
    assert error.details is not None and error.details["maximum"] == available
    assert snapshot(instance) == before
    assert row(instance, "SELECT status FROM expenses WHERE id = ?", expense_id) == {
        "status": "submitted"
    }


@pytest.mark.seahaven(fixture="acme", startup=as_("carla"))
def test_rejecting_says_why_and_pays_nothing(instance: seahaven.Instance) -> None:
    expense_id = _waiting(instance, "aiko")
    payouts = count(instance, "payments.payouts")
    rejected = instance.call("reject_expense", expense_id=expense_id, reason=" Use the team plan ")
    assert (rejected.status, rejected.payout_id) == ("rejected", None)
    assert rejected.decision is not None
    assert (rejected.decision.decision, rejected.decision.note) == ("rejected", "Use the team plan")
    assert count(instance, "payments.payouts") == payouts
    refused(
        instance,
        "INVALID_INPUT",
        "reject_expense",
        expense_id=_waiting(instance, "rafael"),
        reason="   ",
    )
    refused(instance, "NOT_FOUND", "reject_expense", expense_id="exp_0000000000000000", reason="No")


@pytest.mark.seahaven(fixture="acme", startup=as_("sam"))
def test_staff_see_only_their_own_expenses(instance: seahaven.Instance) -> None:
    mine = instance.call("list_expenses")
    sam = staff_id(instance, "sam")
    assert len(mine.expenses) == 2
    assert {expense.staff_id for expense in mine.expenses} == {sam}
    assert all(expense.decision is not None for expense in mine.expenses)
    jonas = staff_id(instance, "jonas")
    refused(instance, "FORBIDDEN", "list_expenses", staff_id=jonas)
    theirs = row(instance, "SELECT id FROM expenses WHERE staff_id = ?", jonas)["id"]
    refused(instance, "FORBIDDEN", "get_expense", expense_id=theirs)
    assert instance.call("get_expense", expense_id=mine.expenses[0].id).staff_id == sam


@pytest.mark.seahaven(fixture="acme", startup=as_("tom"))
def test_finance_lists_everybody_s_newest_first_and_pages(instance: seahaven.Instance) -> None:
    every = []
    cursor = None
    while True:
        page = instance.call("list_expenses", limit=4, cursor=cursor)
        every.extend(page.expenses)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(every) == 9
    assert [expense.id for expense in every] == sorted((e.id for e in every), reverse=True)
    waiting = instance.call("list_expenses", status="submitted")
    assert len(waiting.expenses) == 4 and all(e.decision is None for e in waiting.expenses)
    decided = {
        expense.status: expense.decision.decision
        for expense in every
        if expense.decision is not None
    }
    assert decided == {"reimbursed": "approved", "rejected": "rejected"}
    lena = instance.call("list_expenses", staff_id=staff_id(instance, "lena"))
    assert [expense.description for expense in lena.expenses] == ["Whiteboard markers for the lab"]


@pytest.mark.seahaven(fixture="acme", startup=as_("tom"))
def test_decisions_are_kept_one_per_expense(instance: seahaven.Instance) -> None:
    instance.call("approve_expense", expense_id=_waiting(instance, "rafael"))
    decided = rows(
        instance,
        "SELECT e.status, a.decision FROM expenses AS e JOIN approvals AS a"
        " ON a.expense_id = e.id ORDER BY e.id",
    )
    assert len(decided) == 6
    assert all(
        (item["status"], item["decision"]) in {("reimbursed", "approved"), ("rejected", "rejected")}
        for item in decided
    )
