"""Every list tool pages newest first, by (created_at, id), covering every object exactly once."""

from __future__ import annotations

from typing import Any

import pytest
from payments_support import code_of, row, rows

import seahaven

pytestmark = pytest.mark.seahaven(fixture="small_shop")

# Each list tool, the arguments it is listed with, and the SQL naming what it must return.
LISTS = [
    ("list_customers", {}, "SELECT id, created_at FROM customers WHERE deleted_at IS NULL"),
    ("list_charges", {}, "SELECT id, created_at FROM charges"),
    ("list_charges", {"status": "succeeded"}, "SELECT id, created_at FROM charges"
     " WHERE status = 'succeeded'"),
    ("list_refunds", {}, "SELECT id, created_at FROM refunds"),
    ("list_balance_transactions", {}, "SELECT id, created_at FROM balance_transactions"),
    ("list_balance_transactions", {"currency": "eur"}, "SELECT id, created_at"
     " FROM balance_transactions WHERE currency = 'eur'"),
    ("list_payouts", {}, "SELECT id, created_at FROM payouts"),
    ("list_bank_accounts", {}, "SELECT id, created_at FROM bank_accounts"),
]  # fmt: skip


def every_page(instance: seahaven.Instance, tool: str, limit: int, **arguments: Any) -> list[str]:
    """Page through ``tool`` with ``limit``, checking each page's cursor, and return every id."""
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(1000):
        page = instance.call(tool, limit=limit, starting_after=cursor, **arguments)
        assert len(page.data) <= limit
        seen.extend(item.id for item in page.data)
        if not page.has_more:
            assert page.next_starting_after is None
            return seen
        assert len(page.data) == limit
        assert page.next_starting_after == page.data[-1].id
        cursor = page.next_starting_after
    raise AssertionError(f"{tool} never reached its last page")


def newest_first(instance: seahaven.Instance, sql: str) -> list[str]:
    found = rows(instance, sql)
    found.sort(key=lambda item: (item["created_at"], item["id"]), reverse=True)
    return [item["id"] for item in found]


@pytest.mark.parametrize("limit", [1, 7, 100])
@pytest.mark.parametrize(("tool", "arguments", "sql"), LISTS)
def test_pages_cover_every_object_exactly_once_in_order(
    instance: seahaven.Instance, tool: str, arguments: dict[str, Any], sql: str, limit: int
) -> None:
    expected = newest_first(instance, sql)
    assert expected, f"the fixture should give {tool} something to list"

    assert every_page(instance, tool, limit, **arguments) == expected


def test_a_customers_cards_page_too(instance: seahaven.Instance) -> None:
    customer = row(instance, "SELECT id FROM customers WHERE deleted_at IS NULL LIMIT 1")["id"]
    for token in ("tok_visa", "tok_amex", "tok_mastercard", "tok_visa_debit", "tok_visa"):
        instance.call("attach_payment_method", customer_id=customer, token=token)
    expected = newest_first(
        instance,
        f"SELECT id, created_at FROM payment_methods WHERE customer_id = '{customer}'"
        " AND detached_at IS NULL",
    )

    assert every_page(instance, "list_payment_methods", 2, customer_id=customer) == expected
    assert len(expected) >= 6


def test_the_default_page_is_ten(instance: seahaven.Instance) -> None:
    page = instance.call("list_charges")
    assert len(page.data) == 10
    assert page.has_more is True


@pytest.mark.seahaven(fixture="small_shop", clock_mode="tick")
def test_a_newer_object_comes_first(instance: seahaven.Instance) -> None:
    created = instance.call("create_customer", email="newest@example.com")
    newest = instance.call("list_customers", limit=1)
    assert [customer.id for customer in newest.data] == [created.id]


@pytest.mark.seahaven(fixture="small_shop", clock_mode="tick")
def test_a_cursor_survives_objects_created_between_pages(instance: seahaven.Instance) -> None:
    before = newest_first(instance, "SELECT id, created_at FROM customers WHERE deleted_at IS NULL")
    first = instance.call("list_customers", limit=5)
    instance.call("create_customer", email="late@example.com")
    rest = every_page(instance, "list_customers", 100)[6:]
    second = instance.call("list_customers", limit=100, starting_after=first.next_starting_after)

    assert [customer.id for customer in first.data] + [c.id for c in second.data] == before
    assert rest == before[5:]


@pytest.mark.parametrize("limit", [0, 101, -1, "10", 5.0, None])
def test_a_limit_outside_one_to_a_hundred_is_invalid_input(
    instance: seahaven.Instance, limit: object
) -> None:
    assert code_of(instance, "list_charges", limit=limit) == "INVALID_INPUT"


def test_a_cursor_that_names_nothing_in_the_list_is_invalid_input(
    instance: seahaven.Instance,
) -> None:
    charge = row(instance, "SELECT id FROM charges LIMIT 1")["id"]
    assert code_of(instance, "list_charges", starting_after="ch_nothing") == "INVALID_INPUT"
    # A charge's id is no cursor for the refunds list.
    assert code_of(instance, "list_refunds", starting_after=charge) == "INVALID_INPUT"
    assert code_of(instance, "list_customers", starting_after=charge) == "INVALID_INPUT"
