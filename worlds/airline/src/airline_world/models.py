"""What the airline's tools take and return, in the benchmark's shapes.

Results have the fields of tau2-bench's own models, in the same order, so the
JSON an agent reads is the JSON it would read there (``status: null`` on a
reservation that stands, ``date: null`` on a direct flight searched by itself).
The argument models validate as the benchmark's do: pydantic's lax mode, extra
keys ignored, so ``{"amount": 150.0}`` is a payment of 150 there and here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Address",
    "AirportCode",
    "CabinClass",
    "Certificate",
    "CreditCard",
    "DirectFlight",
    "FlightInfo",
    "FlightType",
    "GiftCard",
    "Insurance",
    "Name",
    "Passenger",
    "Payment",
    "PaymentMethod",
    "Reservation",
    "ReservationFlight",
    "User",
]

CabinClass = Literal["business", "economy", "basic_economy"]
"""A cabin: basic economy is a class of its own, distinct from economy."""

FlightType = Literal["round_trip", "one_way"]
"""Whether a reservation is one way or a round trip."""

Insurance = Literal["yes", "no"]
"""Whether a reservation carries travel insurance."""

CABINS: tuple[CabinClass, ...] = ("basic_economy", "economy", "business")
"""The cabins in the order the benchmark lists seats and prices."""

# The benchmark's argument models are plain pydantic models: lax, extra keys dropped.
_LAX = ConfigDict(strict=False, extra="ignore")


class FlightInfo(BaseModel):
    """One flight of a booking or a change: its number and date."""

    model_config = _LAX

    flight_number: Annotated[str, Field(description="The flight number, such as 'HAT001'.")]
    date: Annotated[str, Field(description="The date of the flight, as YYYY-MM-DD.")]


class Passenger(BaseModel):
    """A passenger: first and last name, and date of birth as YYYY-MM-DD."""

    model_config = _LAX

    first_name: Annotated[str, Field(description="The passenger's first name.")]
    last_name: Annotated[str, Field(description="The passenger's last name.")]
    dob: Annotated[str, Field(description="The passenger's date of birth, as YYYY-MM-DD.")]


class Payment(BaseModel):
    """A payment (or, negative, a refund) of whole dollars through one payment method."""

    model_config = _LAX

    payment_id: Annotated[
        str, Field(description="A payment method on the user's profile, such as 'gift_card_1234'.")
    ]
    amount: Annotated[int, Field(description="The amount in whole dollars.")]


class Name(BaseModel):
    """A person's name."""

    first_name: str
    last_name: str


class Address(BaseModel):
    """A postal address."""

    address1: str
    address2: str | None = None
    city: str
    country: str
    state: str
    zip: str


class CreditCard(BaseModel):
    """A saved credit card."""

    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class GiftCard(BaseModel):
    """A saved gift card and its balance in dollars."""

    source: Literal["gift_card"]
    id: str
    amount: float


class Certificate(BaseModel):
    """A travel certificate and its value in dollars."""

    source: Literal["certificate"]
    id: str
    amount: float


PaymentMethod = CreditCard | GiftCard | Certificate
"""One of a user's saved payment methods."""


class User(BaseModel):
    """A customer's profile, with their payment methods and reservation ids."""

    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    payment_methods: dict[str, PaymentMethod]
    saved_passengers: list[Passenger]
    membership: Literal["gold", "silver", "regular"]
    reservations: list[str]


class ReservationFlight(BaseModel):
    """One flight of a reservation, at the price paid per passenger."""

    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


class Reservation(BaseModel):
    """A reservation as the benchmark shows it; ``created_at`` is EST wall time."""

    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: CabinClass
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Insurance
    status: Literal["cancelled"] | None = None


class DirectFlight(BaseModel):
    """A flight that can be booked on a date, with its seats left and prices by cabin."""

    flight_number: str
    origin: str
    destination: str
    status: Literal["available"]
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    date: str | None = None
    available_seats: dict[CabinClass, int]
    prices: dict[CabinClass, int]


class AirportCode(BaseModel):
    """An airport the airline serves: its IATA code and city."""

    iata: str
    city: str
