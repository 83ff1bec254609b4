"""The refusals the store's tools answer with: one class per code, the benchmark's words.

tau2-bench answers a refused call with the text of the error its tool raised;
each class here fixes a stable code for one kind of refusal, and the message
is that text, word for word, so an agent reads what it would read there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import seahaven

__all__ = [
    "InsufficientBalance",
    "Internal",
    "InvalidExpression",
    "InvalidInput",
    "InvalidRequest",
    "InvalidState",
    "ItemNotAvailable",
    "NotFound",
    "RetailError",
]


class RetailError(seahaven.ToolError):
    """The base of this world's refusals: a subclass fixes ``CODE`` once."""

    CODE: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(self.CODE, message, details)


class NotFound(RetailError):
    """A user, order, product, item or payment method that does not exist (or is not there)."""

    CODE = "NOT_FOUND"


class InvalidState(RetailError):
    """The order is not in a status that allows this: pending, or delivered, as the tool needs."""

    CODE = "INVALID_STATE"


class InvalidRequest(RetailError):
    """The request does not hold together: a reason not offered, lists of different lengths,
    an item exchanged for itself, a payment method that may not be used here."""

    CODE = "INVALID_REQUEST"


class ItemNotAvailable(RetailError):
    """The new item is out of stock."""

    CODE = "ITEM_NOT_AVAILABLE"


class InsufficientBalance(RetailError):
    """A gift card holds less than it is asked to pay."""

    CODE = "INSUFFICIENT_BALANCE"


class InvalidExpression(RetailError):
    """``calculate`` was given something that is not arithmetic it can work out."""

    CODE = "INVALID_EXPRESSION"


class InvalidInput(RetailError):
    """An argument of the wrong type or shape; ``details.violations`` lists every problem."""

    CODE = "INVALID_INPUT"

    def __init__(self, violations: Sequence[Mapping[str, str]]) -> None:
        listed = [dict(violation) for violation in violations]
        summary = "; ".join(f"{item['field']}: {item['message']}" for item in listed)
        super().__init__(f"invalid arguments: {summary}", {"violations": listed})


class Internal(RetailError):
    """A defect in the world; the agent cannot fix it by changing arguments."""

    CODE = "INTERNAL"

    def __init__(self) -> None:
        super().__init__("the store hit an internal error")
