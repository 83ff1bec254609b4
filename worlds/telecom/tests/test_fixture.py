"""The committed fixture is tau2-bench's two databases, rebuilt byte for byte by the generator."""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from pathlib import Path

import pytest
import yaml
from fixtures_src.generate import (
    COLUMNS,
    FIXTURES,
    NOW,
    build,
    load_db,
    load_user_db,
    phone_of,
    tables,
)
from telecom_support import data_or_skip, row, rows
from telecom_world.phone.state import Phone
from telecom_world.phone.store import load

import seahaven

pytestmark = pytest.mark.seahaven(fixture="initial")

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "telecom_world"


def test_the_committed_fixture_is_the_one_the_generator_builds(
    world: seahaven.World, tmp_path: Path
) -> None:
    source = data_or_skip()
    assert sorted(path.name for path in world.fixtures_dir.iterdir() if path.is_dir()) == [
        "initial"
    ]
    elsewhere = copy.copy(world)
    elsewhere.fixtures_dir = tmp_path
    build("initial", world=elsewhere, source=source)
    committed, rebuilt = world.fixtures_dir / "initial", tmp_path / "initial"
    for name in ("state.sqlite", "state.phone.sqlite"):
        built = (rebuilt / name).read_bytes()
        kept = (committed / name).read_bytes()
        assert hashlib.sha256(built).hexdigest() == hashlib.sha256(kept).hexdigest(), name
    old = yaml.safe_load((committed / "fixture.yaml").read_text())
    new = yaml.safe_load((rebuilt / "fixture.yaml").read_text())
    # created_at is the wall-clock moment of freezing, the one field no rebuild repeats.
    old.pop("created_at")
    new.pop("created_at")
    assert new == old
    assert (new["now"], new["description"]) == (NOW, FIXTURES["initial"])


def test_every_carrier_table_holds_the_benchmarks_database_row_for_row(
    instance: seahaven.Instance,
) -> None:
    expected = tables(load_db(data_or_skip()))
    assert {table: len(found) for table, found in expected.items()} == {
        "plans": 5,
        "devices": 9,
        "lines": 9,
        "customers": 4,
        "payment_methods": 4,
        "bills": 6,
        "bill_line_items": 12,
    }
    for table, columns in COLUMNS.items():
        stored = rows(instance, f"SELECT {', '.join(columns)} FROM {table}")
        assert Counter(tuple(item.values()) for item in stored) == Counter(expected[table]), table


def test_the_phone_is_the_benchmarks_user_database_with_its_models_defaults(
    instance: seahaven.Instance,
) -> None:
    expected = phone_of(load_user_db(data_or_skip()))
    with instance.bulk() as reading:
        stored = load(reading.worlds.phone.db)
    assert stored == expected
    # What user_db.toml leaves out takes the defaults of the benchmark's models: nobody's
    # phone yet, at home, the line active, the default signal where they are.
    assert stored.surroundings == Phone().surroundings
    assert (stored.device.battery_level, stored.device.network_signal_strength) == (80, "good")
    assert stored.device.apps["browser"].network and not stored.device.apps["messaging"].network


def test_the_fixture_holds_the_benchmarks_now_and_shows_its_instants_in_est(
    instance: seahaven.Instance,
) -> None:
    assert instance.clock.iso() == NOW == "2025-02-25T17:08:00.000Z"
    stored = row(instance, "SELECT created_at FROM customers WHERE customer_id = 'C1001'")
    assert stored["created_at"] == "2025-01-15T15:30:00.000Z"
    shown = instance.call("get_customer_by_id", customer_id="C1001")
    assert shown.created_at == "2025-01-15 10:30:00"
    device = instance.call("get_details_by_id", id="D1002")
    assert (device.activation_date, device.last_esim_transfer_date) == (
        "2025-02-15 11:45:00",
        "2025-01-20 09:30:00",
    )


def test_the_benchmarks_license_and_provenance_travel_beside_its_data() -> None:
    source = data_or_skip()
    license_text = (source.parent / "LICENSE").read_text()
    for folder in (PACKAGE / "fixtures", PACKAGE / "scenarios"):
        assert (folder / "LICENSE").read_text() == license_text
        assert "tau2-bench" in (folder / "PROVENANCE.md").read_text()
