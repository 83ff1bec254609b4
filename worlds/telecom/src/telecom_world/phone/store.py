"""Reading the phone from its store and writing it back.

Every tool of the phone, and the carrier's side when it keeps the phone in step,
works the same way: ``load`` the whole phone (a handful of one-row tables),
change the objects as tau2-bench changes its models, and ``save``, which writes
only the rows and columns that differ from what was loaded, then the
``diagnostics`` row the phone reports of itself. So the change log holds one
update per setting that really changed, and nothing for a call that changed
nothing.

Both sides are read as flat cells, ``(table, key, column) -> value``: the phone
as loaded keeps its cells, and ``save`` compares them with the cells of the
phone as it is now, so no copy of the objects is ever made.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from seahaven import Db
from telecom_world.phone.behaviour import diagnostics
from telecom_world.phone.state import (
    Apn,
    Device,
    PaymentRequest,
    Permissions,
    Phone,
    Surroundings,
    Vpn,
)

__all__ = ["cells", "insert", "load", "save"]

Cell = tuple[str, str, str]
"""A stored value's place: its table, its row's key (``1`` for a one-row table), its column."""

_DEVICE = (
    "sim_card_status",
    "sim_card_missing",
    "airplane_mode",
    "network_signal_strength",
    "network_technology_connected",
    "network_connection_status",
    "battery_level",
    "data_enabled",
    "roaming_enabled",
    "network_mode_preference",
    "wifi_enabled",
    "wifi_connected",
    "wifi_ssid",
    "wifi_signal_strength",
    "wifi_calling_enabled",
    "wifi_calling_mms_over_wifi",
    "data_saver_mode",
    "vpn_enabled_setting",
    "vpn_connected",
)
_APN = ("apn_name", "reset_at_reboot", "mms_apn", "mmsc_url", "mms_proxy", "mms_port")
_VPN = ("server_address", "protocol", "server_performance")
_PERMISSIONS = ("sms", "storage", "phone", "network")
_SURROUNDINGS = (
    "name",
    "phone_number",
    "is_abroad",
    "roaming_allowed",
    "mobile_data_usage_exceeded",
    "line_active",
)
_REQUEST = ("bill_id", "amount_due", "paid")
_DIAGNOSTICS = (
    "sim_status",
    "mobile_data_working",
    "speed_mbps",
    "speed_description",
    "can_send_mms",
)
# The flags, stored as 0 or 1 and held as bools.
_FLAGS = frozenset(
    {
        "sim_card_missing",
        "airplane_mode",
        "data_enabled",
        "roaming_enabled",
        "wifi_enabled",
        "wifi_connected",
        "wifi_calling_enabled",
        "wifi_calling_mms_over_wifi",
        "data_saver_mode",
        "vpn_enabled_setting",
        "vpn_connected",
        "reset_at_reboot",
        *_PERMISSIONS,
        "is_abroad",
        "roaming_allowed",
        "mobile_data_usage_exceeded",
        "line_active",
        "paid",
        "mobile_data_working",
        "can_send_mms",
    }
)
_ONE = "1"


def _held(column: str, value: Any) -> Any:
    return bool(value) if column in _FLAGS and value is not None else value


def _stored(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


def cells(phone: Phone) -> dict[Cell, Any]:
    """Every stored value of the phone, by place; ``diagnostics`` worked out from it."""
    device, around = phone.device, phone.surroundings
    found: dict[Cell, Any] = {}
    for column in _DEVICE:
        found["device", _ONE, column] = getattr(device, column)
    for column in _APN:
        found["apn_settings", _ONE, column] = getattr(device.apn, column)
    if device.vpn is not None:
        for column in _VPN:
            found["vpn_details", _ONE, column] = getattr(device.vpn, column)
    for name, permissions in device.apps.items():
        for column in _PERMISSIONS:
            found["apps", name, column] = getattr(permissions, column)
    for column in _SURROUNDINGS:
        found["surroundings", _ONE, column] = getattr(around, column)
    for technology, strength in around.signal.items():
        found["signal_strengths", technology, "strength"] = strength
    if around.payment_request is not None:
        for column in _REQUEST:
            found["payment_request", _ONE, column] = getattr(around.payment_request, column)
    for column, value in diagnostics(phone).items():
        found["diagnostics", _ONE, column] = value
    return found


def _row(row: dict[str, Any], columns: tuple[str, ...]) -> dict[str, Any]:
    return {column: _held(column, row[column]) for column in columns}


def load(db: Db) -> Phone:
    """The phone as its store holds it; it remembers what it was, for ``save``."""
    device_row = db.one("SELECT * FROM device WHERE id = 1")
    apn_row = db.one("SELECT * FROM apn_settings WHERE id = 1")
    around_row = db.one("SELECT * FROM surroundings WHERE id = 1")
    if device_row is None or apn_row is None or around_row is None:
        raise RuntimeError("the phone's store has no device, APN or surroundings row")
    vpn_row = db.one("SELECT * FROM vpn_details WHERE id = 1")
    request_row = db.one("SELECT * FROM payment_request WHERE id = 1")
    diagnostics_row = db.one("SELECT * FROM diagnostics WHERE id = 1")
    device = Device(
        **_row(device_row, _DEVICE),
        apn=Apn(**_row(apn_row, _APN)),
        vpn=None if vpn_row is None else Vpn(**_row(vpn_row, _VPN)),
        apps={
            row["app_name"]: Permissions(**_row(row, _PERMISSIONS))
            for row in db.rows("SELECT * FROM apps ORDER BY position")
        },
    )
    surroundings = Surroundings(
        **_row(around_row, _SURROUNDINGS),
        signal={
            row["technology"]: row["strength"]
            for row in db.rows(
                "SELECT technology, strength FROM signal_strengths ORDER BY position"
            )
        },
        payment_request=None
        if request_row is None
        else PaymentRequest(**_row(request_row, _REQUEST)),
    )
    phone = Phone(device=device, surroundings=surroundings)
    loaded = cells(phone)
    # What diagnostics the store held, which is what save compares with (not what the
    # phone reports now: the two are the same unless the row was missing or stale).
    for column in _DIAGNOSTICS:
        loaded.pop(("diagnostics", _ONE, column))
        if diagnostics_row is not None:
            loaded["diagnostics", _ONE, column] = _held(column, diagnostics_row[column])
    phone.loaded = loaded
    return phone


_KEYS = {
    "apps": "app_name",
    "signal_strengths": "technology",
}


def save(db: Db, phone: Phone) -> None:
    """Write what differs between the phone as loaded and as it is now, diagnostics included."""
    before = phone.loaded
    after = cells(phone)
    updates: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    inserted: dict[str, dict[str, Any]] = defaultdict(dict)
    for place, value in after.items():
        table, key, column = place
        if place not in before:
            inserted[table][column] = value
        elif before[place] != value:
            updates[table, key][column] = value
    for table in inserted.keys() - {"vpn_details", "payment_request", "diagnostics"}:
        raise RuntimeError(f"a row of {table} appeared on the phone; no tool adds one")
    # A row there only while its object is: gone when its first column is.
    for table, column in (("vpn_details", _VPN[0]), ("payment_request", _REQUEST[0])):
        if (table, _ONE, column) in before and (table, _ONE, column) not in after:
            db.execute(f"DELETE FROM {table} WHERE id = 1")
    for (table, key), values in updates.items():
        assignments = ", ".join(f"{column} = ?" for column in values)
        key_column = _KEYS.get(table, "id")
        db.execute(
            f"UPDATE {table} SET {assignments} WHERE {key_column} = ?",
            *(_stored(value) for value in values.values()),
            int(key) if key_column == "id" else key,
        )
    for table, values in inserted.items():
        _insert(db, table, {"id": 1, **values})
    phone.loaded = after


def _insert(db: Db, table: str, values: dict[str, Any]) -> None:
    db.execute(
        f"INSERT INTO {table} ({', '.join(values)}) VALUES ({', '.join('?' for _ in values)})",
        *(_stored(value) for value in values.values()),
    )


def insert(db: Db, phone: Phone) -> None:
    """Write a whole phone into an empty store: a fixture's, when it is built."""
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
    for (table, key, column), value in cells(phone).items():
        rows[table, key][column] = value
    positions: dict[str, int] = defaultdict(int)
    for (table, key), values in rows.items():
        if table in _KEYS:
            values = {_KEYS[table]: key, "position": positions[table], **values}
            positions[table] += 1
        else:
            values = {"id": int(key), **values}
        _insert(db, table, values)
