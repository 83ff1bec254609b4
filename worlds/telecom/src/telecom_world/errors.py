"""The refusals the carrier's tools answer with: one class per code, the benchmark's words.

tau2-bench answers a refused call with the text of the error its tool raised;
each class here fixes a stable code for one kind of refusal, and the message is
that text, word for word.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import seahaven

__all__ = [
    "Internal",
    "InvalidId",
    "InvalidInput",
    "InvalidRequest",
    "InvalidState",
    "NotFound",
    "TelecomError",
]


class TelecomError(seahaven.ToolError):
    """The base of this world's refusals: a subclass fixes ``CODE`` once."""

    CODE: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(self.CODE, message, details)


class NotFound(TelecomError):
    """A customer, line, plan, device or bill that does not exist, or is not the customer's."""

    CODE = "NOT_FOUND"


class InvalidState(TelecomError):
    """The line or the bills are not in a state the request allows (a line must be active
    to suspend; another bill already awaits payment)."""

    CODE = "INVALID_STATE"


class InvalidRequest(TelecomError):
    """A request the carrier does not take: a refuel of no data, or less."""

    CODE = "INVALID_REQUEST"


class InvalidId(TelecomError):
    """An id that is none of the kinds ``get_details_by_id`` knows (by its first letter)."""

    CODE = "INVALID_ID"


class InvalidInput(TelecomError):
    """An argument of the wrong type or shape; ``details.violations`` lists every problem."""

    CODE = "INVALID_INPUT"

    def __init__(self, violations: Sequence[Mapping[str, str]]) -> None:
        listed = [dict(violation) for violation in violations]
        summary = "; ".join(f"{item['field']}: {item['message']}" for item in listed)
        super().__init__(f"invalid arguments: {summary}", {"violations": listed})


class Internal(TelecomError):
    """A defect in the world; the agent cannot fix it by changing arguments."""

    CODE = "INTERNAL"

    def __init__(self) -> None:
        super().__init__("the telecom system hit an internal error")
