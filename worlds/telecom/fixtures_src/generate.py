"""The committed generator of the telecom world's fixture, ``initial``: tau2-bench's two databases.

It reads the benchmark's ``telecom/db.toml`` (the carrier's records) and
``telecom/user_db.toml`` (the customer's phone; see ``source.py`` for where),
and loads them, row by row, into a blank instance on a fixed clock at the
benchmark's "now": the carrier's tables into the telecom world's own store, the
phone into the ``phone`` store. Then it freezes the instance, so a rebuild
writes the same bytes. Run from ``worlds/telecom``::

    python -m fixtures_src.generate

``tables(db)`` and ``phone_of(user_db)`` are the mappings themselves (the
benchmark's layout to this world's rows), kept separate so that anything
holding the benchmark's databases (the differential benchmark holds tau2's own,
after an episode) can be compared with an instance table by table.
"""

from __future__ import annotations

import copy
import json
import sys
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import telecom_world
from telecom_world.phone.state import (
    APPS,
    DEFAULT_SIGNALS,
    Apn,
    Device,
    PaymentRequest,
    Permissions,
    Phone,
    Surroundings,
    Vpn,
)
from telecom_world.phone.store import insert
from telecom_world.times import instant_from_est

import seahaven
import seahaven.toolkit
from fixtures_src.source import tau2_data

__all__ = [
    "COLUMNS",
    "FIXTURES",
    "NOW",
    "SEED",
    "build",
    "load_db",
    "load_user_db",
    "main",
    "phone_of",
    "tables",
]

NOW = "2025-02-25T17:08:00.000Z"
"""tau2-bench's fixed "now", 2025-02-25 12:08:00 EST, as a UTC instant. Never move it."""

SEED = 0
"""The seed of the build; nothing in it is drawn."""

FIXTURES = {
    "initial": (
        "tau2-bench's telecom databases as the benchmark ships them: 5 plans, 9 devices, 9 "
        "lines, 4 customers and 6 bills on the carrier's side, and the customer's phone as "
        "it starts every task, working, at home. Every telecom task starts here, then runs "
        "its own setup (the startup keyword initialization_actions)."
    ),
}

COLUMNS: dict[str, tuple[str, ...]] = {
    "plans": (
        "plan_id",
        "name",
        "data_limit_gb",
        "price_per_month",
        "data_refueling_price_per_gb",
        "position",
    ),
    "devices": (
        "device_id",
        "device_type",
        "model",
        "imei",
        "is_esim_capable",
        "activated",
        "activation_date",
        "last_esim_transfer_date",
        "position",
    ),
    "lines": (
        "line_id",
        "phone_number",
        "status",
        "plan_id",
        "device_id",
        "data_used_gb",
        "data_refueling_gb",
        "roaming_enabled",
        "contract_end_date",
        "last_plan_change_date",
        "last_sim_replacement_date",
        "suspension_start_date",
        "position",
    ),
    "customers": (
        "customer_id",
        "full_name",
        "date_of_birth",
        "email",
        "phone_number",
        "street",
        "city",
        "state",
        "zip_code",
        "account_status",
        "line_ids",
        "bill_ids",
        "created_at",
        "last_extension_date",
        "goodwill_credit_used_this_year",
        "position",
    ),
    "payment_methods": (
        "customer_id",
        "position",
        "method_type",
        "account_number_last_4",
        "expiration_date",
    ),
    "bills": (
        "bill_id",
        "customer_id",
        "period_start",
        "period_end",
        "issue_date",
        "total_due",
        "due_date",
        "status",
        "position",
    ),
    "bill_line_items": ("bill_id", "position", "description", "amount", "date", "item_type"),
}
"""Each carrier table's columns, in the order ``tables`` gives their values."""


def _json(value: Any) -> str:
    """JSON as the tools write it: compact, in the order given."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _instant(value: Any) -> str | None:
    """An EST wall time (text, or a ``datetime`` from a database dump) as a UTC instant."""
    if value is None:
        return None
    text = value if isinstance(value, str) else value.isoformat()
    return instant_from_est(text.replace(" ", "T"))


def _date(value: Any) -> str | None:
    return None if value is None else str(value)


def _carrier_rows(db: Mapping[str, Any]) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for position, plan in enumerate(db.get("plans", [])):
        yield (
            "plans",
            (
                plan["plan_id"],
                plan["name"],
                float(plan["data_limit_gb"]),
                float(plan["price_per_month"]),
                float(plan["data_refueling_price_per_gb"]),
                position,
            ),
        )
    for position, device in enumerate(db.get("devices", [])):
        yield (
            "devices",
            (
                device["device_id"],
                str(device["device_type"]),
                device["model"],
                device.get("imei"),
                int(bool(device["is_esim_capable"])),
                int(bool(device.get("activated", False))),
                _instant(device.get("activation_date")),
                _instant(device.get("last_esim_transfer_date")),
                position,
            ),
        )
    for position, line in enumerate(db.get("lines", [])):
        yield (
            "lines",
            (
                line["line_id"],
                line["phone_number"],
                str(line.get("status", "Pending Activation")),
                line["plan_id"],
                line.get("device_id"),
                float(line.get("data_used_gb", 0.0)),
                float(line.get("data_refueling_gb", 0.0)),
                int(bool(line.get("roaming_enabled", False))),
                _date(line.get("contract_end_date")),
                _date(line.get("last_plan_change_date")),
                _date(line.get("last_sim_replacement_date")),
                _date(line.get("suspension_start_date")),
                position,
            ),
        )
    for position, customer in enumerate(db.get("customers", [])):
        address = customer["address"]
        yield (
            "customers",
            (
                customer["customer_id"],
                customer["full_name"],
                customer["date_of_birth"],
                customer["email"],
                customer["phone_number"],
                address["street"],
                address["city"],
                address["state"],
                address["zip_code"],
                str(customer.get("account_status", "Pending Verification")),
                _json(customer.get("line_ids", [])),
                _json(customer.get("bill_ids", [])),
                _instant(customer.get("created_at", "2025-01-01T00:00:00")),
                _date(customer.get("last_extension_date")),
                float(customer.get("goodwill_credit_used_this_year", 0.0)),
                position,
            ),
        )
        for index, method in enumerate(customer.get("payment_methods", [])):
            yield (
                "payment_methods",
                (
                    customer["customer_id"],
                    index,
                    str(method["method_type"]),
                    method["account_number_last_4"],
                    method["expiration_date"],
                ),
            )
    for position, bill in enumerate(db.get("bills", [])):
        yield (
            "bills",
            (
                bill["bill_id"],
                bill["customer_id"],
                _date(bill["period_start"]),
                _date(bill["period_end"]),
                _date(bill["issue_date"]),
                float(bill["total_due"]),
                _date(bill["due_date"]),
                str(bill.get("status", "Draft")),
                position,
            ),
        )
        for index, item in enumerate(bill.get("line_items", [])):
            yield (
                "bill_line_items",
                (
                    bill["bill_id"],
                    index,
                    item["description"],
                    float(item["amount"]),
                    _date(item["date"]),
                    item["item_type"],
                ),
            )


def tables(db: Mapping[str, Any]) -> dict[str, list[tuple[Any, ...]]]:
    """The benchmark's carrier database (``db.toml``'s layout) as this world's rows."""
    found: dict[str, list[tuple[Any, ...]]] = {table: [] for table in COLUMNS}
    for table, row in _carrier_rows(db):
        found[table].append(row)
    return found


def _enum(value: Any) -> Any:
    """An enum of the benchmark's (from a dump) as its value; anything else as it is."""
    return getattr(value, "value", value)


def phone_of(user_db: Mapping[str, Any]) -> Phone:
    """The benchmark's user database (``user_db.toml``'s layout, or a dump of it) as a phone.

    What it leaves out takes the benchmark's defaults, as its models do.
    """
    given = dict(user_db.get("device") or {})
    apn = given.pop("active_apn_settings", None)
    vpn = given.pop("vpn_details", None)
    apps = given.pop("app_statuses", None)
    device = Device(
        **{key: _enum(value) for key, value in given.items()},
        apn=Apn(**{key: _enum(value) for key, value in (apn or {}).items()}),
        vpn=None if vpn is None else Vpn(**{key: _enum(value) for key, value in vpn.items()}),
        apps=copy.deepcopy(APPS)
        if apps is None
        else {
            name: Permissions(**dict(status.get("permissions") or {}))
            for name, status in apps.items()
        },
    )
    around = dict(user_db.get("surroundings") or {})
    signal = around.pop("signal_strength", None)
    request = around.pop("payment_request", None)
    surroundings = Surroundings(
        **around,
        signal=dict(DEFAULT_SIGNALS)
        if signal is None
        else {_enum(key): _enum(value) for key, value in signal.items()},
        payment_request=None if request is None else PaymentRequest(**request),
    )
    return Phone(device=device, surroundings=surroundings)


def _load(source: Path | None, name: str) -> dict[str, Any]:
    folder = source if source is not None else tau2_data()
    if folder is None:
        raise seahaven.WorldBug(
            "tau2-bench's data is not here: set SEAHAVEN_TAU2_DATA to the folder holding "
            f"telecom/{name} (the project keeps it in shared/data/tau2)"
        )
    with (folder / name).open("rb") as handle:
        return tomllib.load(handle)


def load_db(source: Path | None = None) -> dict[str, Any]:
    """The benchmark's ``db.toml``; a ``WorldBug`` saying where to put it when it is missing."""
    return _load(source, "db.toml")


def load_user_db(source: Path | None = None) -> dict[str, Any]:
    """The benchmark's ``user_db.toml`` (the phone)."""
    return _load(source, "user_db.toml")


def fill(inst: seahaven.Instance, db: Mapping[str, Any], user_db: Mapping[str, Any]) -> None:
    """Load the benchmark's two databases into an instance, in one bulk block."""
    with inst.bulk() as loading:
        for table, rows in tables(db).items():
            columns = COLUMNS[table]
            loading.db.executemany(
                f"INSERT INTO {table} ({', '.join(columns)})"
                f" VALUES ({', '.join('?' for _ in columns)})",
                rows,
            )
        insert(loading.worlds.phone.db, phone_of(user_db))


def build(
    fixture_id: str,
    *,
    world: seahaven.World = telecom_world.world,
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
    db, user_db = load_db(source), load_user_db(source)
    with world.instance(now=NOW, clock_mode="fixed", seed=SEED) as inst:
        fill(inst, db, user_db)
        return inst.freeze(fixture_id, FIXTURES[fixture_id])


def main(argv: list[str]) -> int:
    """Rebuild the named fixtures (all of them when none is named)."""
    return seahaven.toolkit.rebuild_fixtures(
        telecom_world.world,
        build,
        list(FIXTURES),
        argv,
        into=Path(telecom_world.__file__).parent / "fixtures",
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
