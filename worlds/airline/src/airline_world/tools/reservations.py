"""Reservations: read, book, cancel, and change their flights, baggage and passengers.

Each tool checks what tau2-bench's checks, in the same order, with the same
messages, and writes what it writes, including where the benchmark is
generous: a cancellation refunds every payment without looking at the fare
rules (the policy is the agent's to apply), seats are not given back on a
cancellation or a change of flights, and changing flights or bags charges or
refunds the difference on the payment method named.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field

import seahaven
from airline_world import store
from airline_world.errors import (
    CertificateNotAllowed,
    FlightNotAvailable,
    InsufficientBalance,
    LimitReached,
    NotEnoughSeats,
    NotFound,
    PassengerCountMismatch,
    PaymentMismatch,
)
from airline_world.models import (
    CabinClass,
    FlightInfo,
    FlightType,
    Insurance,
    Passenger,
    Payment,
    Reservation,
)
from airline_world.world import world

__all__ = [
    "NEW_RESERVATION_IDS",
    "book_reservation",
    "cancel_reservation",
    "get_reservation_details",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
]

ReservationId = Annotated[str, Field(description="The reservation id, such as 'ZFA04Y'.")]
PaymentId = Annotated[
    str,
    Field(
        description="A payment method on the customer's profile, such as 'credit_card_7815826', "
        "'gift_card_7815826' or 'certificate_7815826'."
    ),
]

NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
"""The benchmark's ids for new reservations, tried in order: at most three per episode."""

INSURANCE_PER_PASSENGER = 30
"""Dollars of travel insurance per passenger."""

PER_EXTRA_BAG = 50
"""Dollars per bag beyond the free allowance."""

_CHILD_COLUMNS = {
    "reservation_flights": ("flight_number", "origin", "destination", "date", "price"),
    "reservation_passengers": ("first_name", "last_name", "dob"),
}

# The statement reading a table's rows in order: the one reservation_model reads them with.
_CHILDREN_OF = {
    "reservation_flights": store.FLIGHTS_OF,
    "reservation_passengers": store.PASSENGERS_OF,
}


def _replace_children(
    ctx: seahaven.Ctx, table: str, reservation_id: str, rows: Sequence[dict[str, Any]]
) -> None:
    """Make a reservation's rows of ``table`` be ``rows``, position by position.

    Only the positions whose values differ are written, so a change of one
    flight of three is one row's change in the log.
    """
    columns = _CHILD_COLUMNS[table]
    # Positions run 0, 1, 2, ... (every write keeps them so), so a row's index is its position.
    existing = ctx.db.rows(_CHILDREN_OF[table], reservation_id)
    for position, row in enumerate(rows):
        values = [row[column] for column in columns]
        if position < len(existing):
            if [existing[position][column] for column in columns] != values:
                assignments = ", ".join(f"{column} = ?" for column in columns)
                ctx.db.execute(
                    f"UPDATE {table} SET {assignments} WHERE reservation_id = ? AND position = ?",
                    *values,
                    reservation_id,
                    position,
                )
        else:
            ctx.db.execute(
                f"INSERT INTO {table} (reservation_id, position, {', '.join(columns)})"
                f" VALUES (?, ?, {', '.join('?' for _ in columns)})",
                reservation_id,
                position,
                *values,
            )
    ctx.db.execute(
        f"DELETE FROM {table} WHERE reservation_id = ? AND position >= ?",
        reservation_id,
        len(rows),
    )


def _append_payments(
    ctx: seahaven.Ctx, reservation_id: str, payments: Sequence[tuple[str, int]]
) -> None:
    """Add payments (or refunds, negative) at the end of a reservation's history."""
    for payment_id, amount in payments:
        ctx.db.execute(
            "INSERT INTO reservation_payments (reservation_id, position, payment_id, amount)"
            " VALUES (?, (SELECT COUNT(*) FROM reservation_payments WHERE reservation_id = ?),"
            " ?, ?)",
            reservation_id,
            reservation_id,
            payment_id,
            amount,
        )


def _passenger_count(ctx: seahaven.Ctx, reservation_id: str) -> int:
    return len(ctx.db.rows(store.PASSENGERS_OF, reservation_id))


def _remove_payment_method(ctx: seahaven.Ctx, user_id: str, payment_id: str) -> None:
    """Remove a spent certificate, and close the gap it leaves in the profile's order.

    Positions stay 0, 1, 2, ... so that two profiles listing the same methods in the same
    order are the same rows, as they are the same dictionary in the benchmark.
    """
    removed = ctx.db.one(
        "SELECT position FROM payment_methods WHERE user_id = ? AND id = ?", user_id, payment_id
    )
    assert removed is not None  # checked by the caller
    ctx.db.execute("DELETE FROM payment_methods WHERE user_id = ? AND id = ?", user_id, payment_id)
    later = ctx.db.rows(
        # CAST: see store.FLIGHTS_OF.
        "SELECT id, position FROM payment_methods WHERE user_id = CAST(? AS TEXT)"
        " AND position > ? ORDER BY position",
        user_id,
        removed["position"],
    )
    for row in later:  # one at a time, upwards, so that (user_id, position) stays unique
        ctx.db.execute(
            "UPDATE payment_methods SET position = ? WHERE user_id = ? AND id = ?",
            row["position"] - 1,
            user_id,
            row["id"],
        )


def _set_balance(ctx: seahaven.Ctx, user_id: str, payment_id: str, amount: float) -> None:
    ctx.db.execute(
        "UPDATE payment_methods SET amount = ? WHERE user_id = ? AND id = ?",
        amount,
        user_id,
        payment_id,
    )


def _pay_for_change(
    ctx: seahaven.Ctx, user_id: str, payment_id: str, total_price: int
) -> tuple[str, int] | None:
    """Charge (or, negative, refund) a change to one payment method; the payment to record.

    A certificate is refused whatever the amount; a gift card must cover a
    charge and takes a refund back onto its balance. Nothing is recorded for 0.
    """
    method = store.user_payment_methods(ctx, user_id).get(payment_id)
    if method is None:
        raise NotFound("Payment method not found")
    if method["source"] == "certificate":
        raise CertificateNotAllowed("Certificate cannot be used to update reservation")
    if method["source"] == "gift_card":
        if method["amount"] < total_price:
            raise InsufficientBalance("Gift card balance is not enough")
        _set_balance(ctx, user_id, payment_id, method["amount"] - total_price)
    return None if total_price == 0 else (payment_id, total_price)


@world.tool
def get_reservation_details(ctx: seahaven.Ctx, reservation_id: ReservationId) -> Reservation:
    """A reservation: its customer, trip, cabin, flights with the price paid, passengers,
    payment history (refunds are negative), creation time (EST), baggage, insurance, and
    status ("cancelled", or null).

    Errors: NOT_FOUND for an unknown reservation.
    """
    return store.reservation_model(ctx, store.reservation(ctx, reservation_id))


@world.tool
def book_reservation(
    ctx: seahaven.Ctx,
    user_id: Annotated[str, Field(description="The customer's user id, such as 'sara_doe_496'.")],
    origin: Annotated[str, Field(description="The trip's origin as an IATA code, such as 'SFO'.")],
    destination: Annotated[
        str, Field(description="The trip's destination as an IATA code, such as 'JFK'.")
    ],
    flight_type: FlightType,
    cabin: CabinClass,
    flights: list[FlightInfo],
    passengers: list[Passenger],
    payment_methods: list[Payment],
    total_baggages: int,
    nonfree_baggages: int,
    insurance: Insurance,
) -> Reservation:
    """Book a reservation for a customer, paid at once.

    The price is each flight's current price in the cabin times the number of
    passengers, plus 30 dollars per passenger for insurance and 50 per non-free
    bag; the payments must add up to it exactly. A gift card's or certificate's
    balance must cover its part; a certificate used is spent whole. The seats are
    taken from each flight.

    Args:
        flight_type: 'one_way' or 'round_trip'.
        cabin: 'basic_economy', 'economy' or 'business', for every flight.
        flights: Each flight of the trip: its number and date.
        passengers: Each passenger's first name, last name and date of birth.
        payment_methods: Each payment: a payment id on the customer's profile and the
            amount in whole dollars charged to it.
        total_baggages: How many bags in all.
        nonfree_baggages: How many of them are paid for.
        insurance: 'yes' or 'no'.

    Errors: NOT_FOUND for an unknown user, flight, flight date or payment method;
    FLIGHT_NOT_AVAILABLE, NOT_ENOUGH_SEATS, INSUFFICIENT_BALANCE, PAYMENT_MISMATCH;
    LIMIT_REACHED after three bookings in one episode.
    """
    # Nothing below writes the users row before the reservation's id is added to it.
    user = store.user(ctx, user_id)
    taken = {
        row["reservation_id"]
        for row in ctx.db.rows(
            "SELECT reservation_id FROM reservations WHERE reservation_id IN (?, ?, ?)",
            *NEW_RESERVATION_IDS,
        )
    }
    reservation_id = next((key for key in NEW_RESERVATION_IDS if key not in taken), None)
    if reservation_id is None:
        raise LimitReached("Too many reservations")

    count = len(passengers)
    total_price = 0
    booked: list[dict[str, Any]] = []
    for item in flights:
        flight = store.flight(ctx, item.flight_number)
        on_date = store.date_of_found_flight(ctx, item.flight_number, item.date)
        if on_date["status"] != "available":
            raise FlightNotAvailable(
                f"Flight {item.flight_number} not available on date {item.date}"
            )
        seats, prices = store.seats_and_prices(on_date)
        if seats[cabin] < count:
            raise NotEnoughSeats(f"Not enough seats on flight {item.flight_number}")
        booked.append(
            {
                "flight_number": item.flight_number,
                "origin": flight["origin"],
                "destination": flight["destination"],
                "date": item.date,
                "price": prices[cabin],
            }
        )
        total_price += prices[cabin] * count
    if insurance == "yes":
        total_price += INSURANCE_PER_PASSENGER * count
    total_price += PER_EXTRA_BAG * nonfree_baggages

    methods = store.user_payment_methods(ctx, user_id)
    for payment in payment_methods:
        method = methods.get(payment.payment_id)
        if method is None:
            raise NotFound(f"Payment method {payment.payment_id} not found")
        if method["source"] in ("gift_card", "certificate") and method["amount"] < payment.amount:
            raise InsufficientBalance(f"Not enough balance in payment method {payment.payment_id}")
    total_payment = sum(payment.amount for payment in payment_methods)
    if total_payment != total_price:
        raise PaymentMismatch(
            f"Payment amount does not add up, total price is {total_price}, "
            f"but paid {total_payment}"
        )

    # Every check passed: take the money, in the order the payments were given.
    balances = {key: method["amount"] for key, method in methods.items()}
    spent: set[str] = set()
    for payment in payment_methods:
        source = methods[payment.payment_id]["source"]
        if payment.payment_id in spent:
            # A certificate named twice: the first use spent it.
            raise NotFound(f"Payment method {payment.payment_id} not found")
        if source == "gift_card":
            balances[payment.payment_id] -= payment.amount
            _set_balance(ctx, user_id, payment.payment_id, balances[payment.payment_id])
        elif source == "certificate":
            spent.add(payment.payment_id)
            _remove_payment_method(ctx, user_id, payment.payment_id)
    for item in flights:
        ctx.db.execute(
            f"UPDATE flight_dates SET seats_{cabin} = seats_{cabin} - ?"
            " WHERE flight_number = ? AND date = ?",
            count,
            item.flight_number,
            item.date,
        )
    ctx.db.execute(
        "INSERT INTO reservations (reservation_id, user_id, origin, destination, flight_type,"
        " cabin, created_at, total_baggages, nonfree_baggages, insurance, status)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
        reservation_id,
        user_id,
        origin,
        destination,
        flight_type,
        cabin,
        ctx.clock.iso(),
        total_baggages,
        nonfree_baggages,
        insurance,
    )
    _replace_children(ctx, "reservation_flights", reservation_id, booked)
    _replace_children(
        ctx,
        "reservation_passengers",
        reservation_id,
        [passenger.model_dump() for passenger in passengers],
    )
    _append_payments(
        ctx, reservation_id, [(payment.payment_id, payment.amount) for payment in payment_methods]
    )
    ids = [*json.loads(user["reservations"]), reservation_id]
    ctx.db.execute(
        "UPDATE users SET reservations = ? WHERE user_id = ?",
        json.dumps(ids, separators=(",", ":")),
        user_id,
    )
    return store.reservation_model(ctx, store.reservation(ctx, reservation_id))


@world.tool
def cancel_reservation(ctx: seahaven.Ctx, reservation_id: ReservationId) -> Reservation:
    """Cancel a whole reservation: every payment in its history is refunded to the payment
    method it came from, and its status becomes "cancelled". Whether the policy allows the
    cancellation is for you to decide before calling.

    Errors: NOT_FOUND for an unknown reservation.
    """
    store.reservation(ctx, reservation_id)
    history = ctx.db.rows(store.PAYMENTS_OF, reservation_id)
    _append_payments(ctx, reservation_id, [(row["payment_id"], -row["amount"]) for row in history])
    ctx.db.execute(
        "UPDATE reservations SET status = 'cancelled' WHERE reservation_id = ?", reservation_id
    )
    return store.reservation_model(ctx, store.reservation(ctx, reservation_id))


@world.tool
def update_reservation_baggages(
    ctx: seahaven.Ctx,
    reservation_id: ReservationId,
    total_baggages: Annotated[int, Field(description="The new total number of bags.")],
    nonfree_baggages: Annotated[int, Field(description="The new number of paid bags.")],
    payment_id: PaymentId,
) -> Reservation:
    """Change a reservation's baggage. Each paid bag added costs 50 dollars, charged to the
    payment method named (a gift card must cover it; a certificate cannot be used).

    Errors: NOT_FOUND for an unknown reservation, user or payment method;
    CERTIFICATE_NOT_ALLOWED; INSUFFICIENT_BALANCE.
    """
    reservation = store.reservation(ctx, reservation_id)
    store.user(ctx, reservation["user_id"])
    total_price = PER_EXTRA_BAG * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    payment = _pay_for_change(ctx, reservation["user_id"], payment_id, total_price)
    if payment is not None:
        _append_payments(ctx, reservation_id, [payment])
    ctx.db.execute(
        "UPDATE reservations SET total_baggages = ?, nonfree_baggages = ? WHERE reservation_id = ?",
        total_baggages,
        nonfree_baggages,
        reservation_id,
    )
    return store.reservation_model(ctx, store.reservation(ctx, reservation_id))


@world.tool
def update_reservation_flights(
    ctx: seahaven.Ctx,
    reservation_id: ReservationId,
    cabin: CabinClass,
    flights: list[FlightInfo],
    payment_id: PaymentId,
) -> Reservation:
    """Change a reservation's flights or cabin. Give every flight of the whole new
    reservation, the unchanged ones too.

    A flight kept in the same cabin keeps the price paid; any other is priced now, in the
    cabin given, and must have seats for every passenger. The difference from what was paid
    is charged (or, when negative, refunded) to the payment method named: a gift card must
    cover a charge and takes a refund back; a certificate cannot be used.

    Args:
        cabin: The cabin of the whole reservation after the change.
        flights: Each flight of the new reservation: its number and date.

    Errors: NOT_FOUND for an unknown reservation, user, flight, flight date or
    payment method; FLIGHT_NOT_AVAILABLE; NOT_ENOUGH_SEATS; CERTIFICATE_NOT_ALLOWED;
    INSUFFICIENT_BALANCE.
    """
    reservation = store.reservation(ctx, reservation_id)
    store.user(ctx, reservation["user_id"])
    current = ctx.db.rows(store.FLIGHTS_OF, reservation_id)
    count = _passenger_count(ctx, reservation_id)
    total_price = 0
    new_flights: list[dict[str, Any]] = []
    for item in flights:
        kept = next(
            (
                row
                for row in current
                if row["flight_number"] == item.flight_number
                and row["date"] == item.date
                and cabin == reservation["cabin"]
            ),
            None,
        )
        if kept is not None:
            total_price += kept["price"] * count
            new_flights.append(kept)
            continue
        flight = store.flight(ctx, item.flight_number)
        on_date = store.date_of_found_flight(ctx, item.flight_number, item.date)
        if on_date["status"] != "available":
            raise FlightNotAvailable(
                f"Flight {item.flight_number} not available on date {item.date}"
            )
        seats, prices = store.seats_and_prices(on_date)
        if seats[cabin] < count:
            raise NotEnoughSeats(f"Not enough seats on flight {item.flight_number}")
        new_flights.append(
            {
                "flight_number": item.flight_number,
                "origin": flight["origin"],
                "destination": flight["destination"],
                "date": item.date,
                "price": prices[cabin],
            }
        )
        total_price += prices[cabin] * count
    total_price -= sum(row["price"] for row in current) * count

    payment = _pay_for_change(ctx, reservation["user_id"], payment_id, total_price)
    if payment is not None:
        _append_payments(ctx, reservation_id, [payment])
    _replace_children(ctx, "reservation_flights", reservation_id, new_flights)
    ctx.db.execute(
        "UPDATE reservations SET cabin = ? WHERE reservation_id = ?", cabin, reservation_id
    )
    return store.reservation_model(ctx, store.reservation(ctx, reservation_id))


@world.tool
def update_reservation_passengers(
    ctx: seahaven.Ctx, reservation_id: ReservationId, passengers: list[Passenger]
) -> Reservation:
    """Replace a reservation's passengers; the number of passengers cannot change.

    Args:
        passengers: Every passenger of the reservation, in order: first name, last name and
            date of birth.

    Errors: NOT_FOUND for an unknown reservation; PASSENGER_COUNT_MISMATCH.
    """
    store.reservation(ctx, reservation_id)
    count = _passenger_count(ctx, reservation_id)
    if len(passengers) != count:
        raise PassengerCountMismatch("Number of passengers does not match")
    _replace_children(
        ctx,
        "reservation_passengers",
        reservation_id,
        [passenger.model_dump() for passenger in passengers],
    )
    return store.reservation_model(ctx, store.reservation(ctx, reservation_id))
