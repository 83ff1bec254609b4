"""Invoices: collected by card through the account of their currency, and announced in chat."""

from __future__ import annotations

import json

import pytest
from company_support import as_, calls_records, count, refused, row, rows, snapshot, staff_id
from payments_world.errors import NotFound as PaymentsNotFound

import seahaven

pytestmark = pytest.mark.seahaven(fixture="acme", startup=as_("tom"))

NEW_CUSTOMER = {
    "customer_email": "ap@cyberdyne.test",
    "customer_name": "Cyberdyne Systems",
    "amount": 275_000,
    "description": "Arm calibration, phase one",
}


def _billing_thread(instance: seahaven.Instance, message_id: str) -> list[str]:
    return [
        item["text"]
        for item in rows(
            instance,
            "SELECT text FROM chat.messages WHERE id = ? OR thread_root_id = ? ORDER BY ts",
            message_id,
            message_id,
        )
    ]


def test_an_invoice_to_a_new_customer_is_charged_filed_and_announced(
    instance: seahaven.Instance,
) -> None:
    invoice = instance.call("invoice_customer", card_token="tok_visa", **NEW_CUSTOMER)
    assert (invoice.number, invoice.status, invoice.currency, invoice.amount) == (
        "INV-0011",
        "paid",
        "usd",
        275_000,
    )
    assert (invoice.issued_by, invoice.due_date, invoice.paid_at) == (
        staff_id(instance, "tom"),
        "2026-07-01",
        invoice.issued_at,
    )
    charge = instance.call("pay_get_charge", charge_id=invoice.charge_id)
    assert (charge.status, charge.amount, charge.customer_id) == (
        "succeeded",
        275_000,
        invoice.payments_customer_id,
    )
    assert charge.metadata == {"invoice_id": invoice.id, "invoice_number": "INV-0011"}
    customer = instance.call("pay_get_customer", customer_id=invoice.payments_customer_id)
    assert (customer.email, customer.name) == ("ap@cyberdyne.test", "Cyberdyne Systems")
    announced = row(
        instance,
        "SELECT c.name, u.handle, m.text FROM chat.messages AS m"
        " JOIN chat.channels AS c ON c.id = m.channel_id JOIN chat.users AS u ON u.id = m.user_id"
        " WHERE m.id = ?",
        invoice.announcement_message_id,
    )
    assert announced == {
        "name": "billing",
        "handle": "backoffice",
        "text": "Invoice INV-0011 to Cyberdyne Systems for $2,750.00, Arm calibration, phase "
        f"one: paid by card ({invoice.charge_id}).",
    }
    assert {record.world for record in calls_records(instance, 0)} == {"main", "payments", "chat"}


def test_a_known_customer_is_charged_on_the_card_on_file(instance: seahaven.Instance) -> None:
    customers = count(instance, "payments.customers")
    cards = count(instance, "payments.payment_methods")
    invoice = instance.call(
        "invoice_customer", customer_email="AP@globex.test", amount=99_00, description="Spare parts"
    )
    assert invoice.status == "paid"
    assert (count(instance, "payments.customers"), count(instance, "payments.payment_methods")) == (
        customers,
        cards,
    )
    earlier = row(instance, "SELECT payments_customer_id FROM invoices WHERE number = 'INV-0001'")
    assert invoice.payments_customer_id == earlier["payments_customer_id"]
    assert invoice.customer_email == "ap@globex.test"


def test_a_refused_card_files_the_invoice_as_payment_failed(instance: seahaven.Instance) -> None:
    invoice = instance.call("invoice_customer", card_token="tok_chargeDeclined", **NEW_CUSTOMER)
    assert (invoice.status, invoice.failure_code, invoice.failure_message, invoice.paid_at) == (
        "payment_failed",
        "card_declined",
        "Your card was declined.",
        None,
    )
    charge = instance.call("pay_get_charge", charge_id=invoice.charge_id)
    assert (charge.status, charge.failure_code) == ("failed", "card_declined")
    (text,) = _billing_thread(instance, str(invoice.announcement_message_id))
    assert "card payment FAILED (card_declined: Your card was declined.), due 2026-07-01" in text


def test_a_failed_invoice_is_retried_with_a_new_card(instance: seahaven.Instance) -> None:
    failed = row(instance, "SELECT * FROM invoices WHERE number = 'INV-0003'")
    assert failed["status"] == "payment_failed"
    again = instance.call("retry_invoice_payment", invoice_id=failed["id"])
    assert (again.status, again.failure_code) == ("payment_failed", "insufficient_funds")
    assert again.charge_id != failed["charge_id"]
    paid = instance.call("retry_invoice_payment", invoice_id=failed["id"], card_token="tok_amex")
    assert (paid.status, paid.failure_code, paid.failure_message) == ("paid", None, None)
    assert instance.call("pay_get_charge", charge_id=paid.charge_id).status == "succeeded"
    thread = _billing_thread(instance, failed["announcement_message_id"])
    assert thread[1:] == [
        "Retried INV-0003: the card was refused again (insufficient_funds).",
        f"Retried INV-0003: paid by card ({paid.charge_id}).",
    ]
    refused(instance, "INVALID_STATE", "retry_invoice_payment", invoice_id=failed["id"])


def test_a_paid_invoice_is_refunded_through_its_own_account(instance: seahaven.Instance) -> None:
    paid = row(instance, "SELECT * FROM invoices WHERE number = 'INV-0005'")
    assert (paid["currency"], paid["status"]) == ("eur", "paid")
    refunded = instance.call("refund_invoice", invoice_id=paid["id"], reason="duplicate")
    assert refunded.status == "refunded" and refunded.refunded_at is not None
    refund = instance.call("eu_pay_get_refund", refund_id=refunded.refund_id)
    assert (refund.charge_id, refund.amount, refund.reason) == (
        paid["charge_id"],
        720_000,
        "duplicate",
    )
    assert count(instance, "payments.refunds", "id = ?", refunded.refund_id) == 0
    refused(instance, "INVALID_STATE", "refund_invoice", invoice_id=paid["id"])
    failed = row(instance, "SELECT id FROM invoices WHERE number = 'INV-0009'")
    refused(instance, "INVALID_STATE", "refund_invoice", invoice_id=failed["id"])


def test_a_charge_refunded_behind_the_invoice_s_back_answers_with_the_processor_s_error(
    instance: seahaven.Instance,
) -> None:
    paid = row(instance, "SELECT * FROM invoices WHERE number = 'INV-0001'")
    instance.call("pay_create_refund", charge_id=paid["charge_id"])
    refused(instance, "INVALID_STATE", "refund_invoice", invoice_id=paid["id"])
    assert row(instance, "SELECT status FROM invoices WHERE id = ?", paid["id"]) == {
        "status": "paid"
    }


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"card_token": None}, "INVALID_INPUT"),
        ({"amount": 49}, "INVALID_INPUT"),
        ({"due_in_days": 121, "card_token": "tok_visa"}, "INVALID_INPUT"),
        ({"currency": "gbp", "card_token": "tok_visa"}, "INVALID_INPUT"),
    ],
)
def test_a_refused_invoice_touches_no_store(
    instance: seahaven.Instance, arguments: dict[str, object], code: str
) -> None:
    before = snapshot(instance)
    refused(instance, code, "invoice_customer", **{**NEW_CUSTOMER, **arguments})
    assert snapshot(instance) == before


def test_a_customer_without_a_card_on_file_must_bring_one(instance: seahaven.Instance) -> None:
    cardless = instance.call("pay_create_customer", email="ap@cardless.test")
    before = snapshot(instance)
    error = refused(
        instance,
        "INVALID_STATE",
        "invoice_customer",
        customer_email="ap@cardless.test",
        amount=5_000,
        description="Consulting",
    )
    assert error.details == {"payments_customer_id": cardless.id}
    assert snapshot(instance) == before


def test_an_unknown_card_token_is_the_processor_s_own_not_found(
    instance: seahaven.Instance,
) -> None:
    error = refused(
        instance, "NOT_FOUND", "invoice_customer", card_token="tok_nonsense", **NEW_CUSTOMER
    )
    assert isinstance(error, PaymentsNotFound)
    # No cross-world atomicity: the customer the processor created first stays there.
    assert count(instance, "payments.customers", "email = 'ap@cyberdyne.test'") == 1
    assert count(instance, "invoices", "customer_email = 'ap@cyberdyne.test'") == 0


def test_list_invoices_is_newest_first_with_an_id_tiebreak_and_pages(
    instance: seahaven.Instance,
) -> None:
    seen = []
    cursor = None
    while True:
        page = instance.call("list_invoices", limit=3, cursor=cursor)
        seen.extend(page.invoices)
        cursor = page.next_cursor
        if cursor is None:
            break
    # The fixture was built on a fixed clock: every invoice shares one instant,
    # so the id alone decides the order.
    assert len({invoice.issued_at for invoice in seen}) == 1
    assert [invoice.id for invoice in seen] == sorted(
        (invoice.id for invoice in seen), reverse=True
    )
    assert len(seen) == 10
    failed = instance.call("list_invoices", status="payment_failed")
    assert sorted(invoice.number for invoice in failed.invoices) == [
        "INV-0003",
        "INV-0009",
        "INV-0010",
    ]
    euros = instance.call("list_invoices", currency="eur")
    assert {invoice.currency for invoice in euros.invoices} == {"eur"} and len(euros.invoices) == 3
    globex = instance.call("list_invoices", customer_email="ap@globex.test")
    assert sorted(invoice.number for invoice in globex.invoices) == ["INV-0001", "INV-0008"]


def test_get_invoice(instance: seahaven.Instance) -> None:
    wanted = row(instance, "SELECT id FROM invoices WHERE number = 'INV-0007'")["id"]
    invoice = instance.call("get_invoice", invoice_id=wanted)
    assert (invoice.customer_name, invoice.status) == ("Wayne Freight", "paid")
    refused(instance, "NOT_FOUND", "get_invoice", invoice_id="inv_0000000000000000")


def test_every_invoice_change_is_in_the_audit_trail(instance: seahaven.Instance) -> None:
    invoice = instance.call("invoice_customer", card_token="tok_visa", **NEW_CUSTOMER)
    instance.call("refund_invoice", invoice_id=invoice.id)
    trail = rows(
        instance,
        "SELECT action, actor_id, detail FROM audit_log WHERE subject_id = ? ORDER BY seq",
        invoice.id,
    )
    assert [item["action"] for item in trail] == ["invoice.issued", "invoice.refunded"]
    assert {item["actor_id"] for item in trail} == {staff_id(instance, "tom")}
    assert json.loads(trail[0]["detail"]) == {
        "charge_id": invoice.charge_id,
        "number": invoice.number,
        "paid": True,
    }
