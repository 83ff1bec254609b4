"""Argument and field types, declared once. Their constraints are the JSON schema the agent reads.

A value outside these types is refused before a tool runs, and the error
handler answers ``INVALID_INPUT`` listing every violation.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

__all__ = [
    "AccountNumber",
    "Amount",
    "Category",
    "ChannelName",
    "ChatHandle",
    "Currency",
    "Cursor",
    "Date",
    "Decision",
    "Department",
    "Description",
    "Email",
    "ExpenseAmount",
    "ExpenseId",
    "ExpenseStatus",
    "FullName",
    "InvoiceId",
    "InvoiceStatus",
    "Limit",
    "Note",
    "RefundReason",
    "Role",
    "RoutingNumber",
    "StaffId",
    "StaffStatus",
    "Timezone",
    "Title",
    "Token",
]

Role = Literal["admin", "finance", "hr", "employee"]
"""What a member of staff may do: see ``company_world.access``."""

Department = Literal["executive", "engineering", "finance", "people", "sales", "support"]

StaffStatus = Literal["active", "inactive"]

Currency = Literal["usd", "eur"]
"""What the company invoices in: usd through its own account, eur through the European one."""

InvoiceStatus = Literal["paid", "payment_failed", "refunded"]

ExpenseStatus = Literal["submitted", "reimbursed", "rejected"]

Category = Literal["travel", "meals", "equipment", "software", "training", "office", "other"]

RefundReason = Literal["duplicate", "fraudulent", "requested_by_customer"]

Decision = Literal["approved", "rejected"]


def _id(prefix: str, what: str) -> Any:
    return Field(
        pattern=rf"^{prefix}_[0-9a-f]{{16}}$",
        description=f"The id of {what}, such as {prefix}_3f9a0c1b2d4e5f60.",
    )


StaffId = Annotated[str, _id("emp", "a member of staff")]
InvoiceId = Annotated[str, _id("inv", "an invoice")]
ExpenseId = Annotated[str, _id("exp", "an expense")]

Amount = Annotated[
    int,
    Field(
        ge=50,
        le=99_999_999,
        description="An amount in cents, at least 50 (the card networks' minimum) and at most "
        "99999999.",
    ),
]

ExpenseAmount = Annotated[
    int,
    Field(gt=0, le=1_000_000, description="What was spent, in usd cents: 1 to 1000000 ($10,000)."),
]

Limit = Annotated[
    int, Field(ge=1, le=100, description="How many to return in this page, 1 to 100.")
]

Cursor = Annotated[
    str,
    Field(
        min_length=1,
        max_length=500,
        description="The next_cursor of the previous page. Leave it out for the first page, and "
        "pass the other arguments unchanged.",
    ),
]

Email = Annotated[
    str,
    Field(
        pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
        max_length=254,
        description="An email address, such as ada@example.com.",
    ),
]

FullName = Annotated[
    str,
    Field(min_length=1, max_length=120, pattern=r"\S", description="A person's full name."),
]

Title = Annotated[
    str,
    Field(
        min_length=1,
        max_length=100,
        pattern=r"\S",
        description="A job title, such as Backend Engineer.",
    ),
]

Description = Annotated[
    str,
    Field(min_length=1, max_length=300, pattern=r"\S", description="What it is for, in a line."),
]

Note = Annotated[str, Field(max_length=500, description="A note, up to 500 characters.")]

Date = Annotated[datetime.date, Field(description="A calendar date, YYYY-MM-DD.")]

ChatHandle = Annotated[
    str,
    Field(
        pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$",
        description="The person's chat handle, without the @: 1 to 32 lowercase letters, "
        "digits, '-' or '_', such as maya or dev-raman.",
    ),
]

ChannelName = Annotated[
    str,
    Field(
        pattern=r"^#?[a-z0-9][a-z0-9_-]{0,79}$",
        description="A chat channel name, with or without the #, such as #engineering.",
    ),
]

Timezone = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$",
        max_length=64,
        description="A time zone label such as Europe/Berlin or UTC.",
    ),
]

Token = Annotated[
    str,
    Field(
        pattern=r"^tok_[0-9A-Za-z_]{1,64}$",
        description="A card token from the customer's payment form, such as tok_visa.",
    ),
]

AccountNumber = Annotated[
    str,
    Field(
        pattern=r"^[0-9A-Z]{4,34}$",
        description="The bank account number or IBAN: 4 to 34 digits or capital letters.",
    ),
]

RoutingNumber = Annotated[
    str, Field(pattern=r"^[0-9]{6,9}$", description="The bank's routing number or sort code.")
]
