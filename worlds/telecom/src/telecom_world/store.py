"""Reading the carrier's records: lookups that refuse as the benchmark does, and row-to-model.

Each lookup raises ``NOT_FOUND`` with tau2-bench's message for a record that is
not there, so a tool reads what it needs before it writes anything. Lists are
read in the benchmark's order (``position``), since its lookups take the first
match.
"""

from __future__ import annotations

import json
from typing import Any

from seahaven import Db
from telecom_world.errors import NotFound
from telecom_world.models import (
    Address,
    Bill,
    Customer,
    Device,
    Line,
    LineItem,
    PaymentMethod,
    Plan,
)
from telecom_world.times import shown

__all__ = [
    "bill",
    "bill_model",
    "bills_awaiting_payment",
    "customer",
    "customer_by_phone",
    "customer_model",
    "device",
    "device_model",
    "line",
    "line_by_phone",
    "line_model",
    "plan",
    "plan_model",
    "target_line",
]


def customer(db: Db, customer_id: str) -> dict[str, Any]:
    """The ``customers`` row, or ``NOT_FOUND``: "Customer with ID <id> not found"."""
    found = db.one("SELECT * FROM customers WHERE customer_id = ?", customer_id)
    if found is None:
        raise NotFound(f"Customer with ID {customer_id} not found")
    return found


def line(db: Db, line_id: str) -> dict[str, Any]:
    """The ``lines`` row, or ``NOT_FOUND``: "Line with ID <id> not found"."""
    found = db.one("SELECT * FROM lines WHERE line_id = ?", line_id)
    if found is None:
        raise NotFound(f"Line with ID {line_id} not found")
    return found


def line_by_phone(db: Db, phone_number: str) -> dict[str, Any]:
    """The first line with that number, or ``NOT_FOUND``."""
    # The number is bound as CAST(? AS TEXT): with a bare "col = ?" beside an ORDER BY,
    # SQLite's planner looks at the bound value, so the statement would be prepared again at
    # every execution. The column is TEXT, so the comparison and the rows are the same.
    found = db.one(
        "SELECT * FROM lines WHERE phone_number = CAST(? AS TEXT) ORDER BY position LIMIT 1",
        phone_number,
    )
    if found is None:
        raise NotFound(f"Line with phone number {phone_number} not found")
    return found


def plan(db: Db, plan_id: str) -> dict[str, Any]:
    """The ``plans`` row, or ``NOT_FOUND``: "Plan with ID <id> not found"."""
    found = db.one("SELECT * FROM plans WHERE plan_id = ?", plan_id)
    if found is None:
        raise NotFound(f"Plan with ID {plan_id} not found")
    return found


def device(db: Db, device_id: str) -> dict[str, Any]:
    """The ``devices`` row, or ``NOT_FOUND``: "Device with ID <id> not found"."""
    found = db.one("SELECT * FROM devices WHERE device_id = ?", device_id)
    if found is None:
        raise NotFound(f"Device with ID {device_id} not found")
    return found


def bill(db: Db, bill_id: str) -> dict[str, Any]:
    """The ``bills`` row, or ``NOT_FOUND``: "Bill with ID <id> not found"."""
    found = db.one("SELECT * FROM bills WHERE bill_id = ?", bill_id)
    if found is None:
        raise NotFound(f"Bill with ID {bill_id} not found")
    return found


def target_line(db: Db, customer_id: str, line_id: str) -> dict[str, Any]:
    """A line of a customer's: the customer first, then that the line is theirs, then the line."""
    owner = customer(db, customer_id)
    if line_id not in json.loads(owner["line_ids"]):
        raise NotFound(f"Line {line_id} not found for customer {customer_id}")
    return line(db, line_id)


def customer_by_phone(db: Db, phone_number: str) -> dict[str, Any]:
    """The first customer whose contact number, or one of whose lines' numbers, it is."""
    for row in db.rows("SELECT * FROM customers ORDER BY position"):
        if row["phone_number"] == phone_number:
            return row
        for line_id in json.loads(row["line_ids"]):
            if line(db, line_id)["phone_number"] == phone_number:
                return row
    raise NotFound(f"Customer with phone number {phone_number} not found")


def bills_awaiting_payment(db: Db, owner: dict[str, Any]) -> list[dict[str, Any]]:
    """A customer's bills awaiting payment, in the order of their bill ids."""
    found = []
    for bill_id in json.loads(owner["bill_ids"]):
        row = bill(db, bill_id)
        if row["status"] == "Awaiting Payment":
            found.append(row)
    return found


def customer_model(db: Db, row: dict[str, Any]) -> Customer:
    """A ``customers`` row and its payment methods, as the benchmark's ``Customer``."""
    methods = db.rows(
        "SELECT method_type, account_number_last_4, expiration_date FROM payment_methods"
        " WHERE customer_id = CAST(? AS TEXT) ORDER BY position",  # CAST: see line_by_phone
        row["customer_id"],
    )
    created = shown(row["created_at"])
    assert created is not None
    return Customer(
        customer_id=row["customer_id"],
        full_name=row["full_name"],
        date_of_birth=row["date_of_birth"],
        email=row["email"],
        phone_number=row["phone_number"],
        address=Address(
            street=row["street"], city=row["city"], state=row["state"], zip_code=row["zip_code"]
        ),
        account_status=row["account_status"],
        payment_methods=[PaymentMethod(**method) for method in methods],
        line_ids=json.loads(row["line_ids"]),
        bill_ids=json.loads(row["bill_ids"]),
        created_at=created,
        last_extension_date=row["last_extension_date"],
        goodwill_credit_used_this_year=row["goodwill_credit_used_this_year"],
    )


def line_model(row: dict[str, Any]) -> Line:
    """A ``lines`` row as the benchmark's ``Line``."""
    fields = {key: row[key] for key in Line.model_fields}
    fields["roaming_enabled"] = bool(row["roaming_enabled"])
    return Line(**fields)


def plan_model(row: dict[str, Any]) -> Plan:
    """A ``plans`` row as the benchmark's ``Plan``."""
    return Plan(**{key: row[key] for key in Plan.model_fields})


def device_model(row: dict[str, Any]) -> Device:
    """A ``devices`` row as the benchmark's ``Device``."""
    return Device(
        device_id=row["device_id"],
        device_type=row["device_type"],
        model=row["model"],
        imei=row["imei"],
        is_esim_capable=bool(row["is_esim_capable"]),
        activated=bool(row["activated"]),
        activation_date=shown(row["activation_date"]),
        last_esim_transfer_date=shown(row["last_esim_transfer_date"]),
    )


def bill_model(db: Db, row: dict[str, Any]) -> Bill:
    """A ``bills`` row and its line items, as the benchmark's ``Bill``."""
    items = db.rows(
        "SELECT description, amount, date, item_type FROM bill_line_items"
        " WHERE bill_id = CAST(? AS TEXT) ORDER BY position",  # CAST: see line_by_phone
        row["bill_id"],
    )
    return Bill(
        **{key: row[key] for key in Bill.model_fields if key != "line_items"},
        line_items=[LineItem(**item) for item in items],
    )
