"""The error shapes this processor returns. Each class has one fixed code; the code is the contract.

Every error is a ``seahaven.ToolError``, so it reaches the agent as
``{code, message, details}``. Card errors name the failed charge in their
details, because a declined charge is still recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import seahaven

__all__ = [
    "AmountTooLarge",
    "CardDeclined",
    "CardError",
    "ExpiredCard",
    "InsufficientFunds",
    "Internal",
    "InvalidInput",
    "InvalidState",
    "NotFound",
    "PaymentsError",
    "ProcessingError",
]


class PaymentsError(seahaven.ToolError):
    """The base of this world's errors: a subclass fixes ``CODE`` once."""

    CODE: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(self.CODE, message, details)


class NotFound(PaymentsError):
    """An object the caller named does not exist (or was deleted)."""

    CODE = "NOT_FOUND"

    def __init__(self, kind: str, key: str, *, deleted: bool = False) -> None:
        message = f"{kind} {key} was deleted" if deleted else f"no such {kind}: {key}"
        details: dict[str, Any] = {"kind": kind, "id": key}
        if deleted:
            details["deleted"] = True
        super().__init__(message, details)


class InvalidInput(PaymentsError):
    """An argument is malformed or out of range; ``details.violations`` lists every problem."""

    CODE = "INVALID_INPUT"

    def __init__(self, violations: Sequence[Mapping[str, str]]) -> None:
        self.violations = [dict(violation) for violation in violations]
        if len(self.violations) == 1:
            only = self.violations[0]
            message = f"{only['field']}: {only['message']}"
        else:
            summary = "; ".join(f"{item['field']}: {item['message']}" for item in self.violations)
            message = f"{len(self.violations)} invalid arguments: {summary}"
        super().__init__(message, {"violations": self.violations})

    @classmethod
    def on(cls, field: str, message: str) -> InvalidInput:
        """One argument is wrong: name it and say what it must be."""
        return cls([{"field": field, "message": message}])


class InvalidState(PaymentsError):
    """The object exists, but is not in a state that allows this action."""

    CODE = "INVALID_STATE"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message, details or None)


class AmountTooLarge(PaymentsError):
    """An amount exceeds what may be captured, refunded or paid out; ``details.maximum`` may."""

    CODE = "AMOUNT_TOO_LARGE"

    def __init__(self, message: str, *, requested: int, maximum: int, currency: str) -> None:
        super().__init__(
            message, {"requested": requested, "maximum": maximum, "currency": currency}
        )


class CardError(PaymentsError):
    """The card was refused. The failed charge is recorded and named in ``details.charge_id``."""

    def __init__(self, message: str, *, charge_id: str, decline_code: str) -> None:
        super().__init__(message, {"charge_id": charge_id, "decline_code": decline_code})
        self.charge_id = charge_id
        self.decline_code = decline_code


class CardDeclined(CardError):
    """The issuer declined the card without giving a more specific reason."""

    CODE = "CARD_DECLINED"


class InsufficientFunds(CardError):
    """The issuer declined the card because the cardholder's account lacks the funds."""

    CODE = "INSUFFICIENT_FUNDS"


class ExpiredCard(CardError):
    """The issuer declined the card because it has expired."""

    CODE = "EXPIRED_CARD"


class ProcessingError(CardError):
    """The card network failed while processing the charge; trying again later may succeed."""

    CODE = "PROCESSING_ERROR"


class Internal(PaymentsError):
    """Something went wrong inside the processor; the agent cannot fix it by changing arguments."""

    CODE = "INTERNAL"

    def __init__(self) -> None:
        super().__init__("the processor hit an internal error; try again, or report it", None)
