"""Keeping the customer's phone in step with the carrier's records, after every call.

tau2-bench's telecom environment syncs its two sides after each tool call that
succeeds, the agent's and the user's alike (``TelecomEnvironment.sync_tools``):
once the phone knows its number, the phone's surroundings follow the line (it
is active, roaming is allowed on it, its data allowance is used up), a bill the
user paid on the phone is marked paid and the request closed, and a bill
awaiting payment becomes the phone's payment request. ``sync`` does the same
on the two stores; the telecom world's middleware runs it after every call,
and a task's setup after each of its actions.

Most calls leave both sides as they were, so the sync first reads only what it
decides from (the phone's surroundings and its payment request) and works out
what they should be; it loads the whole phone, to change it and save what its
change does to the rest (its diagnostics), only when something differs.
"""

from __future__ import annotations

from typing import Any

from seahaven import Db
from telecom_world import store
from telecom_world.phone.state import PaymentRequest
from telecom_world.phone.store import load, save

__all__ = ["sync"]


def sync(carrier: Db, phone_db: Db) -> None:
    """Bring the phone's surroundings and the carrier's bills into step, as the benchmark does."""
    around = phone_db.one(
        "SELECT phone_number, line_active, roaming_allowed, mobile_data_usage_exceeded"
        " FROM surroundings WHERE id = 1"
    )
    if around is None or around["phone_number"] is None:
        return
    number = around["phone_number"]
    line = store.line_by_phone(carrier, number)
    plan = store.plan(carrier, line["plan_id"])
    wanted: dict[str, Any] = {
        "line_active": line["status"] == "Active",
        "roaming_allowed": bool(line["roaming_enabled"]),
        "mobile_data_usage_exceeded": line["data_used_gb"]
        >= plan["data_limit_gb"] + line["data_refueling_gb"],
    }
    request_row = phone_db.one("SELECT bill_id, amount_due, paid FROM payment_request")
    request = _request_of(request_row)
    if request is not None and request.paid:
        store.bill(carrier, request.bill_id)
        carrier.execute(
            "UPDATE bills SET status = 'Paid' WHERE bill_id = ? AND status != 'Paid'",
            request.bill_id,
        )
        request = None
    if request is None:
        awaiting = store.bills_awaiting_payment(carrier, store.customer_by_phone(carrier, number))
        if awaiting:
            request = PaymentRequest(
                bill_id=awaiting[0]["bill_id"], amount_due=awaiting[0]["total_due"]
            )
    unchanged = all(bool(around[key]) == value for key, value in wanted.items())
    if unchanged and request == _request_of(request_row):
        return
    phone = load(phone_db)
    for key, value in wanted.items():
        setattr(phone.surroundings, key, value)
    phone.surroundings.payment_request = request
    save(phone_db, phone)


def _request_of(row: dict[str, Any] | None) -> PaymentRequest | None:
    if row is None:
        return None
    return PaymentRequest(
        bill_id=row["bill_id"], amount_due=row["amount_due"], paid=bool(row["paid"])
    )
