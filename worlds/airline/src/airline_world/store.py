"""Reading the airline's records: lookups that refuse as the benchmark does, and row-to-model.

Each lookup raises ``NOT_FOUND`` with tau2-bench's message for a record that is
not there, so a tool reads what it needs before it writes anything.
"""

from __future__ import annotations

import json
from typing import Any

import seahaven
from airline_world.errors import NotFound
from airline_world.models import (
    CABINS,
    Address,
    CabinClass,
    Certificate,
    CreditCard,
    GiftCard,
    Name,
    Passenger,
    Payment,
    PaymentMethod,
    Reservation,
    ReservationFlight,
    User,
)
from airline_world.times import est_from_instant

__all__ = [
    "FLIGHTS_OF",
    "PASSENGERS_OF",
    "PAYMENTS_OF",
    "date_of_found_flight",
    "flight",
    "flight_date",
    "payment_method_model",
    "reservation",
    "reservation_model",
    "seats_and_prices",
    "user",
    "user_model",
    "user_payment_methods",
]


# A reservation's child rows in order. Every tool reads them with these very statements, so
# an episode prepares each once on its connection, however many tools read them. A key is
# bound as CAST(? AS TEXT) wherever the statement has an ORDER BY: with a bare ``col = ?``
# there, SQLite's planner marks the statement to be prepared again on every execution (it
# looks at the bound value), and the key is TEXT either way, so the rows are the same.
FLIGHTS_OF = (
    "SELECT flight_number, origin, destination, date, price FROM reservation_flights"
    " WHERE reservation_id = CAST(? AS TEXT) ORDER BY position"
)
"""A reservation's flights, in order."""

PASSENGERS_OF = (
    "SELECT first_name, last_name, dob FROM reservation_passengers"
    " WHERE reservation_id = CAST(? AS TEXT) ORDER BY position"
)
"""A reservation's passengers, in order."""

PAYMENTS_OF = (
    "SELECT payment_id, amount FROM reservation_payments"
    " WHERE reservation_id = CAST(? AS TEXT) ORDER BY position"
)
"""A reservation's payment history, in order."""


def user(ctx: seahaven.Ctx, user_id: str) -> dict[str, Any]:
    """The ``users`` row, or ``NOT_FOUND``: "User <id> not found"."""
    found = ctx.db.one("SELECT * FROM users WHERE user_id = ?", user_id)
    if found is None:
        raise NotFound(f"User {user_id} not found")
    return found


def reservation(ctx: seahaven.Ctx, reservation_id: str) -> dict[str, Any]:
    """The ``reservations`` row, or ``NOT_FOUND``: "Reservation <id> not found"."""
    found = ctx.db.one("SELECT * FROM reservations WHERE reservation_id = ?", reservation_id)
    if found is None:
        raise NotFound(f"Reservation {reservation_id} not found")
    return found


def flight(ctx: seahaven.Ctx, flight_number: str) -> dict[str, Any]:
    """The ``flights`` row, or ``NOT_FOUND``: "Flight <number> not found"."""
    found = ctx.db.one("SELECT * FROM flights WHERE flight_number = ?", flight_number)
    if found is None:
        raise NotFound(f"Flight {flight_number} not found")
    return found


def flight_date(ctx: seahaven.Ctx, flight_number: str, date: str) -> dict[str, Any]:
    """The flight's row for one date; ``NOT_FOUND`` for an unknown flight, then an unknown date."""
    flight(ctx, flight_number)
    return date_of_found_flight(ctx, flight_number, date)


def date_of_found_flight(ctx: seahaven.Ctx, flight_number: str, date: str) -> dict[str, Any]:
    """``flight_date`` for a flight ``flight`` has just found: ``NOT_FOUND`` for the date alone."""
    found = ctx.db.one(
        "SELECT * FROM flight_dates WHERE flight_number = ? AND date = ?", flight_number, date
    )
    if found is None:
        raise NotFound(f"Flight {flight_number} not found on date {date}")
    return found


def seats_and_prices(
    row: dict[str, Any],
) -> tuple[dict[CabinClass, int], dict[CabinClass, int]]:
    """An available flight date's seats left and prices, by cabin in the benchmark's order."""
    seats = {cabin: int(row[f"seats_{cabin}"]) for cabin in CABINS}
    prices = {cabin: int(row[f"price_{cabin}"]) for cabin in CABINS}
    return seats, prices


def payment_method_model(row: dict[str, Any]) -> PaymentMethod:
    """A ``payment_methods`` row as the benchmark shows the payment method."""
    if row["source"] == "credit_card":
        return CreditCard(
            source="credit_card", id=row["id"], brand=row["brand"], last_four=row["last_four"]
        )
    if row["source"] == "gift_card":
        return GiftCard(source="gift_card", id=row["id"], amount=row["amount"])
    return Certificate(source="certificate", id=row["id"], amount=row["amount"])


def user_payment_methods(ctx: seahaven.Ctx, user_id: str) -> dict[str, dict[str, Any]]:
    """A user's payment method rows by id, in the order of their profile."""
    # CAST: see FLIGHTS_OF.
    rows = ctx.db.rows(
        "SELECT * FROM payment_methods WHERE user_id = CAST(? AS TEXT) ORDER BY position", user_id
    )
    return {row["id"]: row for row in rows}


def user_model(ctx: seahaven.Ctx, row: dict[str, Any]) -> User:
    """A ``users`` row and its payment methods as the benchmark's ``User``."""
    methods = user_payment_methods(ctx, row["user_id"])
    return User(
        user_id=row["user_id"],
        name=Name(first_name=row["first_name"], last_name=row["last_name"]),
        address=Address(
            address1=row["address1"],
            address2=row["address2"],
            city=row["city"],
            country=row["country"],
            state=row["state"],
            zip=row["zip"],
        ),
        email=row["email"],
        dob=row["dob"],
        payment_methods={key: payment_method_model(value) for key, value in methods.items()},
        saved_passengers=[Passenger(**item) for item in json.loads(row["saved_passengers"])],
        membership=row["membership"],
        reservations=json.loads(row["reservations"]),
    )


def reservation_model(ctx: seahaven.Ctx, row: dict[str, Any]) -> Reservation:
    """A ``reservations`` row and its flights, passengers and payments, as the benchmark's."""
    key = row["reservation_id"]
    flights = ctx.db.rows(FLIGHTS_OF, key)
    passengers = ctx.db.rows(PASSENGERS_OF, key)
    payments = ctx.db.rows(PAYMENTS_OF, key)
    return Reservation(
        reservation_id=key,
        user_id=row["user_id"],
        origin=row["origin"],
        destination=row["destination"],
        flight_type=row["flight_type"],
        cabin=row["cabin"],
        flights=[ReservationFlight(**item) for item in flights],
        passengers=[Passenger(**item) for item in passengers],
        payment_history=[Payment(**item) for item in payments],
        created_at=est_from_instant(row["created_at"]),
        total_baggages=row["total_baggages"],
        nonfree_baggages=row["nonfree_baggages"],
        insurance=row["insurance"],
        status=row["status"],
    )
