"""Helpers the company world's tests share: reading rows, people by handle, expected refusals."""

from __future__ import annotations

from typing import Any

import pytest

import seahaven

NOW = "2026-06-01T09:00:00.000Z"

DOMAIN = "acme-robotics.test"


def email(handle: str) -> str:
    """The work email of someone in the acme fixture, by their chat handle."""
    return f"{handle}@{DOMAIN}"


def as_(handle: str) -> dict[str, str]:
    """The startup keywords that make the instance act as that person of the acme fixture."""
    return {"principal": email(handle)}


def row(instance: seahaven.Instance, sql: str, *params: Any) -> dict[str, Any]:
    """The one row ``sql`` selects, read on the inspection connection (every store attached)."""
    found = instance.inspect().one(sql, *params)
    assert found is not None, f"no row for {sql} {params}"
    return found


def rows(instance: seahaven.Instance, sql: str, *params: Any) -> list[dict[str, Any]]:
    """Every row ``sql`` selects."""
    return instance.inspect().rows(sql, *params)


def count(instance: seahaven.Instance, table: str, where: str = "1", *params: Any) -> int:
    """How many rows of ``table`` (schema-qualified for an added store) match ``where``."""
    return int(row(instance, f"SELECT count(*) AS n FROM {table} WHERE {where}", *params)["n"])


def staff_id(instance: seahaven.Instance, handle: str) -> str:
    """The staff id of someone in the acme fixture, by their chat handle."""
    return str(row(instance, "SELECT id FROM staff WHERE email = ?", email(handle))["id"])


def refused(
    instance: seahaven.Instance, code: str, tool: str, **arguments: Any
) -> seahaven.ToolError:
    """Call ``tool`` expecting a ToolError with ``code``, and return the error."""
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call(tool, **arguments)
    assert raised.value.code == code, raised.value.to_dict()
    return raised.value


def snapshot(instance: seahaven.Instance) -> dict[str, int]:
    """Row counts of every table that matters, in every store: compare two to see nothing moved."""
    tables = [
        "staff",
        "invoices",
        "expenses",
        "approvals",
        "audit_log",
        "payments.customers",
        "payments.payment_methods",
        "payments.charges",
        "payments.refunds",
        "payments.bank_accounts",
        "payments.payouts",
        "payments_eu.customers",
        "payments_eu.charges",
        "chat.users",
        "chat.channels",
        "chat.memberships",
        "chat.messages",
    ]
    return {table: count(instance, table) for table in tables}


def calls_records(instance: seahaven.Instance, call_index: int) -> list[seahaven.LogRecord]:
    """The change-log records of one call."""
    return [record for record in instance.change_log() if record.i == call_index]
