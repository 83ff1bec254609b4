"""The committed generator of the airline world's fixture, ``initial``: tau2-bench's database.

It reads the benchmark's ``airline/db.json`` (see ``source.py`` for where) and
loads it, row by row, into a blank instance on a fixed clock at the benchmark's
"now", then freezes it, so a rebuild writes the same bytes. Run from
``worlds/airline``, as a module so that it finds ``fixtures_src``::

    python -m fixtures_src.generate

``tables(db)`` is the mapping itself (the benchmark's nested JSON to this
world's tables), kept separate so that anything holding a database in the
benchmark's layout (the differential benchmark holds tau2's own, after an
episode) can be compared with an instance table by table.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import airline_world
from airline_world.models import CABINS
from airline_world.times import instant_from_est

import seahaven
import seahaven.toolkit
from fixtures_src.source import tau2_data

__all__ = ["COLUMNS", "FIXTURES", "NOW", "SEED", "build", "load_db", "main", "tables"]

NOW = "2024-05-15T20:00:00.000Z"
"""tau2-bench's fixed "now", 2024-05-15 15:00:00 EST, as a UTC instant. Never move it."""

SEED = 0
"""The seed of the build; the airline draws nothing from it."""

FIXTURES = {
    "initial": (
        "tau2-bench's airline database as the benchmark ships it: 300 flights with their "
        "status, seats and prices on every date from 2024-05-01 to 2024-05-30, 500 customers "
        "with their saved payment methods and passengers, and 2,000 reservations. Every "
        "airline task starts here."
    ),
}

COLUMNS: dict[str, tuple[str, ...]] = {
    "flights": (
        "flight_number",
        "origin",
        "destination",
        "scheduled_departure_time_est",
        "scheduled_arrival_time_est",
        "position",
    ),
    "flight_dates": (
        "flight_number",
        "date",
        "status",
        *(f"seats_{cabin}" for cabin in CABINS),
        *(f"price_{cabin}" for cabin in CABINS),
        "estimated_departure_at",
        "estimated_arrival_at",
        "actual_departure_at",
        "actual_arrival_at",
    ),
    "users": (
        "user_id",
        "first_name",
        "last_name",
        "address1",
        "address2",
        "city",
        "country",
        "state",
        "zip",
        "email",
        "dob",
        "membership",
        "saved_passengers",
        "reservations",
    ),
    "payment_methods": ("user_id", "id", "source", "brand", "last_four", "amount", "position"),
    "reservations": (
        "reservation_id",
        "user_id",
        "origin",
        "destination",
        "flight_type",
        "cabin",
        "created_at",
        "total_baggages",
        "nonfree_baggages",
        "insurance",
        "status",
    ),
    "reservation_flights": (
        "reservation_id",
        "position",
        "flight_number",
        "origin",
        "destination",
        "date",
        "price",
    ),
    "reservation_passengers": ("reservation_id", "position", "first_name", "last_name", "dob"),
    "reservation_payments": ("reservation_id", "position", "payment_id", "amount"),
}
"""Each table's columns, in the order ``tables`` gives their values."""

# The instants a flight date may carry, by the benchmark's field and this world's column.
_INSTANTS = {
    "estimated_departure_time_est": "estimated_departure_at",
    "estimated_arrival_time_est": "estimated_arrival_at",
    "actual_departure_time_est": "actual_departure_at",
    "actual_arrival_time_est": "actual_arrival_at",
}


def _json(value: Any) -> str:
    """JSON as the tools write it: compact, in the order given."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _amount(method: dict[str, Any]) -> float | None:
    return None if method["source"] == "credit_card" else float(method["amount"])


def _flight_rows(db: dict[str, Any]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for position, (number, flight) in enumerate(db["flights"].items()):
        if number != flight["flight_number"]:
            raise ValueError(f"flight {number!r} is filed under another number")
        yield (
            "flights",
            (
                number,
                flight["origin"],
                flight["destination"],
                flight["scheduled_departure_time_est"],
                flight["scheduled_arrival_time_est"],
                position,
            ),
        )
        for date, status in flight["dates"].items():
            seats = status.get("available_seats") or {}
            prices = status.get("prices") or {}
            instants = {column: None for column in _INSTANTS.values()}
            for field, column in _INSTANTS.items():
                if status.get(field) is not None:
                    instants[column] = instant_from_est(status[field])
            yield (
                "flight_dates",
                (
                    number,
                    date,
                    status["status"],
                    *(seats.get(cabin) for cabin in CABINS),
                    *(prices.get(cabin) for cabin in CABINS),
                    *instants.values(),
                ),
            )


def _user_rows(db: dict[str, Any]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for user_id, user in db["users"].items():
        if user_id != user["user_id"]:
            raise ValueError(f"user {user_id!r} is filed under another id")
        address = user["address"]
        yield (
            "users",
            (
                user_id,
                user["name"]["first_name"],
                user["name"]["last_name"],
                address["address1"],
                address.get("address2"),
                address["city"],
                address["country"],
                address["state"],
                address["zip"],
                user["email"],
                user["dob"],
                user["membership"],
                _json(user["saved_passengers"]),
                _json(user["reservations"]),
            ),
        )
        for position, (key, method) in enumerate(user["payment_methods"].items()):
            if key != method["id"]:
                raise ValueError(f"payment method {key!r} of {user_id!r} is filed under another id")
            yield (
                "payment_methods",
                (
                    user_id,
                    key,
                    method["source"],
                    method.get("brand"),
                    method.get("last_four"),
                    _amount(method),
                    position,
                ),
            )


def _reservation_rows(db: dict[str, Any]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for key, reservation in db["reservations"].items():
        if key != reservation["reservation_id"]:
            raise ValueError(f"reservation {key!r} is filed under another id")
        yield (
            "reservations",
            (
                key,
                reservation["user_id"],
                reservation["origin"],
                reservation["destination"],
                reservation["flight_type"],
                reservation["cabin"],
                instant_from_est(reservation["created_at"]),
                reservation["total_baggages"],
                reservation["nonfree_baggages"],
                reservation["insurance"],
                reservation.get("status"),
            ),
        )
        for position, item in enumerate(reservation["flights"]):
            yield (
                "reservation_flights",
                (
                    key,
                    position,
                    item["flight_number"],
                    item["origin"],
                    item["destination"],
                    item["date"],
                    item["price"],
                ),
            )
        for position, item in enumerate(reservation["passengers"]):
            yield (
                "reservation_passengers",
                (
                    key,
                    position,
                    item["first_name"],
                    item["last_name"],
                    item["dob"],
                ),
            )
        for position, item in enumerate(reservation["payment_history"]):
            yield "reservation_payments", (key, position, item["payment_id"], item["amount"])


def tables(db: dict[str, Any]) -> dict[str, list[tuple[Any, ...]]]:
    """The benchmark's database (``db.json``'s layout) as this world's rows, table by table."""
    found: dict[str, list[tuple[Any, ...]]] = {table: [] for table in COLUMNS}
    for source in (_flight_rows, _user_rows, _reservation_rows):
        for table, row in source(db):
            found[table].append(row)
    return found


def load_db(path: Path | None = None) -> dict[str, Any]:
    """The benchmark's ``db.json``; a ``WorldBug`` saying where to put it when it is missing."""
    folder = path if path is not None else tau2_data("airline")
    if folder is None:
        raise seahaven.WorldBug(
            "tau2-bench's data is not here: set SEAHAVEN_TAU2_DATA to the folder holding "
            "airline/db.json (the project keeps it in shared/data/tau2)"
        )
    loaded: dict[str, Any] = json.loads((folder / "db.json").read_text(encoding="utf-8"))
    return loaded


def fill(inst: seahaven.Instance, db: dict[str, Any]) -> None:
    """Load the benchmark's database into an instance, in one bulk block."""
    with inst.bulk() as loading:
        for table, rows in tables(db).items():
            columns = COLUMNS[table]
            loading.db.executemany(
                f"INSERT INTO {table} ({', '.join(columns)})"
                f" VALUES ({', '.join('?' for _ in columns)})",
                rows,
            )


def build(
    fixture_id: str,
    *,
    world: seahaven.World = airline_world.world,
    source: Path | None = None,
) -> seahaven.Fixture:
    """Freeze ``fixture_id`` into ``world.fixtures_dir`` from a blank instance.

    Pass ``world=copy.copy(world)`` pointed at another directory to build
    somewhere else, as the rebuild test does, and ``source`` to read the
    benchmark's data from another folder.
    """
    if fixture_id not in FIXTURES:
        raise seahaven.WorldBug(
            f"the generator has no fixture {fixture_id!r}; it builds {', '.join(FIXTURES)}"
        )
    db = load_db(source)
    with world.instance(now=NOW, clock_mode="fixed", seed=SEED) as inst:
        fill(inst, db)
        return inst.freeze(fixture_id, FIXTURES[fixture_id])


def main(argv: list[str]) -> int:
    """Rebuild the named fixtures (all of them when none is named)."""
    return seahaven.toolkit.rebuild_fixtures(
        airline_world.world,
        build,
        list(FIXTURES),
        argv,
        into=Path(airline_world.__file__).parent / "fixtures",
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
