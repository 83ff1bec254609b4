"""Flights: the airports served, searches for direct and one-stop flights, a flight's status.

Searches list flights in the benchmark's order (by flight number) and only
those ``available`` on the date, with their seats left and prices by cabin.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

import seahaven
from airline_world import store
from airline_world.errors import InvalidDate
from airline_world.models import AirportCode, CabinClass, DirectFlight
from airline_world.world import world

__all__ = [
    "AIRPORTS",
    "get_flight_status",
    "list_all_airports",
    "search_direct_flight",
    "search_onestop_flight",
]

Airport = Annotated[str, Field(description="An airport's three-letter IATA code, such as 'JFK'.")]
FlightDate = Annotated[str, Field(description="The date of the flight, as YYYY-MM-DD.")]

AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)
"""The airports the benchmark's airline lists, in its order."""


def _available(
    ctx: seahaven.Ctx,
    date: str,
    origin: str | None = None,
    destination: str | None = None,
    leave_after: str | None = None,
) -> list[DirectFlight]:
    """The flights available on ``date``, optionally from, to, and leaving no earlier than."""
    # Only the filters given are written into the query: a "? IS NULL OR" filter keeps SQLite
    # from walking the flights first, and it scans every flight date instead (ten times slower).
    # Each value is bound as CAST(? AS TEXT): with a bare "= ?" beside the ORDER BY, SQLite
    # prepares the statement again on every execution; the columns are TEXT either way.
    filters = "".join(
        f" AND flights.{column} = CAST(? AS TEXT)"
        for column, value in (("origin", origin), ("destination", destination))
        if value is not None
    )
    rows = ctx.db.rows(
        "SELECT flights.*, flight_dates.* FROM flights JOIN flight_dates"
        " ON flight_dates.flight_number = flights.flight_number"
        " AND flight_dates.date = CAST(? AS TEXT)"
        f" WHERE flight_dates.status = 'available'{filters} ORDER BY flights.position",
        date,
        *(value for value in (origin, destination) if value is not None),
    )
    found = []
    for row in rows:
        # Text comparison of HH:MM:SS, as the benchmark compares them.
        if leave_after is not None and not row["scheduled_departure_time_est"] >= leave_after:
            continue
        seats, prices = store.seats_and_prices(row)
        found.append(_direct(row, seats, prices))
    return found


def _direct(
    row: dict[str, Any], seats: dict[CabinClass, int], prices: dict[CabinClass, int]
) -> DirectFlight:
    return DirectFlight.model_validate(
        {
            "flight_number": row["flight_number"],
            "origin": row["origin"],
            "destination": row["destination"],
            "status": "available",
            "scheduled_departure_time_est": row["scheduled_departure_time_est"],
            "scheduled_arrival_time_est": row["scheduled_arrival_time_est"],
            "available_seats": seats,
            "prices": prices,
        }
    )


@world.tool
def list_all_airports(ctx: seahaven.Ctx) -> list[AirportCode]:
    """Every airport the airline flies to, by IATA code and city."""
    return [AirportCode(iata=iata, city=city) for iata, city in AIRPORTS]


@world.tool
def search_direct_flight(
    ctx: seahaven.Ctx, origin: Airport, destination: Airport, date: FlightDate
) -> list[DirectFlight]:
    """The direct flights from origin to destination that can be booked on a date, with the
    seats left and the price per passenger in each cabin."""
    return _available(ctx, date, origin=origin, destination=destination)


@world.tool
def search_onestop_flight(
    ctx: seahaven.Ctx, origin: Airport, destination: Airport, date: FlightDate
) -> list[list[DirectFlight]]:
    """Pairs of flights from origin to destination with one stop: a first flight on the date,
    and a second one from its destination that leaves after it lands (on the next day when
    the first lands after midnight). Each flight carries its date.

    Errors: INVALID_DATE when a first flight lands the next day and the date's
    day cannot be read.
    """
    pairs: list[list[DirectFlight]] = []
    for first in _available(ctx, date, origin=origin):
        first.date = date
        arrival = first.scheduled_arrival_time_est
        second_date = date
        if "+1" in arrival:
            # The benchmark's next day: the day of the month plus one, in May 2024, unpadded.
            try:
                second_date = f"2024-05-{int(date[-2:]) + 1}"
            except ValueError as refused:
                raise InvalidDate(str(refused)) from None
        for second in _available(
            ctx, second_date, origin=first.destination, destination=destination, leave_after=arrival
        ):
            second.date = second_date
            pairs.append([first, second])
    return pairs


@world.tool
def get_flight_status(ctx: seahaven.Ctx, flight_number: str, date: FlightDate) -> str:
    """A flight's status on a date: available, on time, delayed, flying, landed or cancelled.

    Args:
        flight_number: The flight number, such as 'HAT001'.

    Errors: NOT_FOUND for an unknown flight, or a date it does not fly.
    """
    return str(store.flight_date(ctx, flight_number, date)["status"])
