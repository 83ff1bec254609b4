"""Helpers the payments world's tests share: reading rows, a customer with a card, error codes."""

from __future__ import annotations

from typing import Any

import pytest
from payments_world.models import Customer, PaymentMethod

import seahaven

NOW = "2026-06-01T09:00:00.000Z"


def row(instance: seahaven.Instance, sql: str, *params: Any) -> dict[str, Any]:
    """The one row ``sql`` selects from the instance, read on the inspection connection."""
    found = instance.inspect().one(sql, *params)
    assert found is not None, f"no row for {sql} {params}"
    return found


def rows(instance: seahaven.Instance, sql: str, *params: Any) -> list[dict[str, Any]]:
    """Every row ``sql`` selects from the instance."""
    return instance.inspect().rows(sql, *params)


def customer_with_card(
    instance: seahaven.Instance, token: str = "tok_visa", email: str = "ada@example.com"
) -> tuple[Customer, PaymentMethod]:
    """A new customer with one card from ``token``, which becomes their default."""
    customer = instance.call("create_customer", email=email, name="Ada Lovelace")
    card = instance.call("attach_payment_method", customer_id=customer.id, token=token)
    return customer, card


def code_of(instance: seahaven.Instance, tool: str, **arguments: Any) -> str:
    """Call ``tool`` expecting a ToolError, and return its code."""
    with pytest.raises(seahaven.ToolError) as raised:
        instance.call(tool, **arguments)
    return raised.value.code


def record_shape(instance: seahaven.Instance, call_index: int) -> list[tuple[str, str]]:
    """The (table, op) pairs call ``call_index`` left in the change log, sorted."""
    return sorted(
        (record.table, record.op) for record in instance.change_log() if record.i == call_index
    )
