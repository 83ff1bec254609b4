"""What the carrier's tools answer: tau2-bench's telecom models, field for field, in its order.

Dates are ``YYYY-MM-DD`` text and instants the benchmark's EST wall time
(``2025-01-15 10:30:00``), as its JSON shows them; amounts and gigabytes are
numbers. A result reads as the same JSON an agent reads from the benchmark.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = [
    "AccountStatus",
    "Address",
    "Bill",
    "BillStatus",
    "Customer",
    "DataUsage",
    "Device",
    "Line",
    "LineItem",
    "LineStatus",
    "PaymentMethod",
    "Plan",
    "RefuelResult",
    "SuspensionResult",
]

LineStatus = Literal["Active", "Suspended", "Pending Activation", "Closed"]
AccountStatus = Literal["Active", "Suspended", "Pending Verification", "Closed"]
BillStatus = Literal["Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed"]


class Address(BaseModel):
    """A customer's billing address."""

    street: str = Field(description="Street address, with the house or apartment number")
    city: str = Field(description="City")
    state: str = Field(description="State code, such as CA")
    zip_code: str = Field(description="ZIP code")


class PaymentMethod(BaseModel):
    """A payment method a customer keeps on file."""

    method_type: Literal["Credit Card", "Debit Card", "PayPal"] = Field(description="Its kind")
    account_number_last_4: str = Field(description="The account number's last four digits")
    expiration_date: str = Field(description="When it expires, MM/YYYY")


class Customer(BaseModel):
    """A customer of the carrier, with the ids of their lines and bills."""

    customer_id: str = Field(description="The customer's id, such as C1001")
    full_name: str = Field(description="The customer's full name")
    date_of_birth: str = Field(description="Date of birth, YYYY-MM-DD, to verify identity")
    email: str = Field(description="Email address")
    phone_number: str = Field(description="Primary contact phone number")
    address: Address = Field(description="Billing address")
    account_status: AccountStatus = Field(description="The account's status")
    payment_methods: list[PaymentMethod] = Field(description="Payment methods on file")
    line_ids: list[str] = Field(description="The customer's lines")
    bill_ids: list[str] = Field(description="The customer's bills")
    created_at: str = Field(description="When the account was opened, EST")
    last_extension_date: str | None = Field(description="The last payment extension's date")
    goodwill_credit_used_this_year: float = Field(
        description="Goodwill credit given this calendar year, in dollars"
    )


class Plan(BaseModel):
    """A service plan."""

    plan_id: str = Field(description="The plan's id, such as P1001")
    name: str = Field(description="The plan's name")
    data_limit_gb: float = Field(description="Data allowance per month, in GB")
    price_per_month: float = Field(description="Monthly price in dollars")
    data_refueling_price_per_gb: float = Field(description="Price of refuelled data per GB")


class Device(BaseModel):
    """A device the carrier knows."""

    device_id: str = Field(description="The device's id, such as D1001")
    device_type: Literal["phone", "router", "tablet", "watch", "other"] = Field(
        description="Its kind"
    )
    model: str = Field(description="Its model")
    imei: str | None = Field(description="Its IMEI")
    is_esim_capable: bool = Field(description="Whether it takes an eSIM")
    activated: bool = Field(description="Whether it is activated on the network")
    activation_date: str | None = Field(description="When it was activated, EST")
    last_esim_transfer_date: str | None = Field(
        description="When an eSIM profile was last transferred to it, EST"
    )


class Line(BaseModel):
    """A phone or data line."""

    line_id: str = Field(description="The line's id, such as L1001")
    phone_number: str = Field(description="Its phone number")
    status: LineStatus = Field(description="Its status")
    plan_id: str = Field(description="Its plan")
    device_id: str | None = Field(description="Its device")
    data_used_gb: float = Field(description="Data used this billing cycle, in GB")
    data_refueling_gb: float = Field(description="Data refuelled this billing cycle, in GB")
    roaming_enabled: bool = Field(description="Whether international roaming is on")
    contract_end_date: str | None = Field(description="When its contract ends, YYYY-MM-DD")
    last_plan_change_date: str | None = Field(description="When its plan last changed")
    last_sim_replacement_date: str | None = Field(description="When its SIM was last replaced")
    suspension_start_date: str | None = Field(description="When its suspension began")


class LineItem(BaseModel):
    """A charge, credit or payment on a bill."""

    description: str = Field(description="What it is")
    amount: float = Field(description="Dollars: positive for a charge, negative for a credit")
    date: str = Field(description="When it was applied, YYYY-MM-DD")
    item_type: str = Field(description="Its kind: Plan Charge, Overage, Fee, Credit, Charge...")


class Bill(BaseModel):
    """A customer's bill."""

    bill_id: str = Field(description="The bill's id, such as B1001")
    customer_id: str = Field(description="Whose bill it is")
    period_start: str = Field(description="The billing period's first day")
    period_end: str = Field(description="The billing period's last day")
    issue_date: str = Field(description="When it was issued")
    total_due: float = Field(description="The amount due, in dollars")
    due_date: str = Field(description="When payment is due")
    line_items: list[LineItem] = Field(description="Its charges, credits and payments")
    status: BillStatus = Field(description="Its status")


class SuspensionResult(BaseModel):
    """What suspending or resuming a line answers: a message and the line as it is now."""

    message: str = Field(description="What was done")
    line: Line = Field(description="The line after the change")


# The benchmark answers these two as plain dictionaries, whose numbers its JSON shows as
# text ("8.7"), where a model's stay numbers; so do these.


class DataUsage(BaseModel):
    """A line's data use in the current billing cycle (its numbers as text)."""

    line_id: str = Field(description="The line")
    data_used_gb: str = Field(description="Data used, in GB")
    data_limit_gb: str = Field(description="The plan's allowance, in GB")
    data_refueling_gb: str = Field(description="Data refuelled, in GB")
    cycle_end_date: str = Field(description="The billing cycle's last day")


class RefuelResult(BaseModel):
    """What refuelling data answers (its numbers as text)."""

    message: str = Field(description="What was done, and its charge")
    new_data_refueling_gb: str = Field(description="Data refuelled this cycle, in GB, now")
    charge: str = Field(description="The charge added to the next bill, in dollars")
