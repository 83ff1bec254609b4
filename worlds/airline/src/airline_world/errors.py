"""The refusals the airline's tools answer with: one class per code, the benchmark's words.

tau2-bench answers a refused call with the text of the error its tool raised;
each class here fixes a stable code for one kind of refusal, and the message
is that text, word for word, so an agent reads what it would read there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import seahaven

__all__ = [
    "AirlineError",
    "CertificateNotAllowed",
    "FlightNotAvailable",
    "InsufficientBalance",
    "Internal",
    "InvalidDate",
    "InvalidExpression",
    "InvalidInput",
    "LimitReached",
    "NotEnoughSeats",
    "NotFound",
    "PassengerCountMismatch",
    "PaymentMismatch",
]


class AirlineError(seahaven.ToolError):
    """The base of this world's refusals: a subclass fixes ``CODE`` once."""

    CODE: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(self.CODE, message, details)


class NotFound(AirlineError):
    """A user, reservation, flight, flight date or payment method that does not exist."""

    CODE = "NOT_FOUND"


class FlightNotAvailable(AirlineError):
    """The flight does not take bookings on that date (it is not ``available``)."""

    CODE = "FLIGHT_NOT_AVAILABLE"


class NotEnoughSeats(AirlineError):
    """The cabin has fewer seats left than the reservation has passengers."""

    CODE = "NOT_ENOUGH_SEATS"


class InsufficientBalance(AirlineError):
    """A gift card or certificate holds less than it is asked to pay."""

    CODE = "INSUFFICIENT_BALANCE"


class PaymentMismatch(AirlineError):
    """The payments of a booking do not add up to its price."""

    CODE = "PAYMENT_MISMATCH"


class CertificateNotAllowed(AirlineError):
    """A travel certificate was offered to pay for a change to a reservation."""

    CODE = "CERTIFICATE_NOT_ALLOWED"


class PassengerCountMismatch(AirlineError):
    """A new passenger list is not as long as the reservation's."""

    CODE = "PASSENGER_COUNT_MISMATCH"


class LimitReached(AirlineError):
    """The benchmark's fixed supply of new reservation ids or certificate ids is used up."""

    CODE = "LIMIT_REACHED"


class InvalidExpression(AirlineError):
    """``calculate`` was given something that is not arithmetic it can work out."""

    CODE = "INVALID_EXPRESSION"


class InvalidDate(AirlineError):
    """A date the search cannot read; the message is Python's, as the benchmark's is."""

    CODE = "INVALID_DATE"


class InvalidInput(AirlineError):
    """An argument of the wrong type or shape; ``details.violations`` lists every problem."""

    CODE = "INVALID_INPUT"

    def __init__(self, violations: Sequence[Mapping[str, str]]) -> None:
        listed = [dict(violation) for violation in violations]
        summary = "; ".join(f"{item['field']}: {item['message']}" for item in listed)
        super().__init__(f"invalid arguments: {summary}", {"violations": listed})


class Internal(AirlineError):
    """A defect in the world; the agent cannot fix it by changing arguments."""

    CODE = "INTERNAL"

    def __init__(self) -> None:
        super().__init__("the airline system hit an internal error")
