"""The committed fixture is tau2-bench's database, rebuilt byte for byte by the generator."""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from pathlib import Path

import pytest
import yaml
from airline_support import data_or_skip, row, rows
from fixtures_src.generate import COLUMNS, FIXTURES, NOW, build, load_db, tables

import seahaven

pytestmark = pytest.mark.seahaven(fixture="initial")

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "airline_world"


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
    built = (rebuilt / "state.sqlite").read_bytes()
    kept = (committed / "state.sqlite").read_bytes()
    assert hashlib.sha256(built).hexdigest() == hashlib.sha256(kept).hexdigest()
    old = yaml.safe_load((committed / "fixture.yaml").read_text())
    new = yaml.safe_load((rebuilt / "fixture.yaml").read_text())
    # created_at is the wall-clock moment of freezing, the one field no rebuild repeats.
    old.pop("created_at")
    new.pop("created_at")
    assert new == old
    assert (new["now"], new["description"]) == (NOW, FIXTURES["initial"])


def test_every_table_holds_the_benchmarks_database_row_for_row(
    instance: seahaven.Instance,
) -> None:
    expected = tables(load_db(data_or_skip()))
    for table, columns in COLUMNS.items():
        stored = rows(instance, f"SELECT {', '.join(columns)} FROM {table}")
        assert Counter(tuple(item.values()) for item in stored) == Counter(expected[table]), table


def test_the_fixture_holds_the_benchmarks_numbers_and_its_now(instance: seahaven.Instance) -> None:
    def count(table: str) -> int:
        return int(row(instance, f"SELECT count(*) AS n FROM {table}")["n"])

    assert (count("flights"), count("users"), count("reservations")) == (300, 500, 2000)
    assert count("flight_dates") == 9000
    assert instance.clock.iso() == NOW == "2024-05-15T20:00:00.000Z"
    # Instants are kept in UTC and shown in the benchmark's EST wall time.
    stored = row(instance, "SELECT created_at FROM reservations WHERE reservation_id = '4WQ150'")
    assert stored["created_at"] == "2024-05-02T08:10:19.000Z"
    shown = instance.call("get_reservation_details", reservation_id="4WQ150")
    assert shown.created_at == "2024-05-02T03:10:19"


def test_the_benchmarks_license_and_provenance_travel_beside_its_data() -> None:
    source = data_or_skip()
    license_text = (source.parent / "LICENSE").read_text()
    for folder in (PACKAGE / "fixtures", PACKAGE / "scenarios"):
        assert (folder / "LICENSE").read_text() == license_text
        assert "tau2-bench" in (folder / "PROVENANCE.md").read_text()
