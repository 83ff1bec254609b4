"""The committed fixtures: rebuilt byte for byte by the generator, and holding what they promise."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import pytest
import yaml
from fixtures_src.generate import FIXTURES, build
from payments_support import NOW, row, rows
from payments_world.money import fee_for

import seahaven


def _sidecar(directory: Path) -> dict[str, object]:
    loaded: dict[str, object] = yaml.safe_load((directory / "fixture.yaml").read_text())
    return loaded


def test_the_committed_fixtures_are_the_ones_the_generator_builds(world: seahaven.World) -> None:
    committed = sorted(path.name for path in world.fixtures_dir.iterdir() if path.is_dir())
    assert committed == sorted(FIXTURES)
    # They live inside the package, so they travel in the wheel.
    assert world.fixtures_dir.parent.name == "payments_world"


@pytest.mark.parametrize("fixture_id", sorted(FIXTURES))
def test_the_generator_rebuilds_every_fixture_byte_for_byte(
    world: seahaven.World, tmp_path: Path, fixture_id: str
) -> None:
    elsewhere = copy.copy(world)
    elsewhere.fixtures_dir = tmp_path

    build(fixture_id, world=elsewhere)

    committed, rebuilt = world.fixtures_dir / fixture_id, tmp_path / fixture_id
    assert sorted(path.name for path in rebuilt.iterdir()) == sorted(
        path.name for path in committed.iterdir()
    )
    for state in sorted(committed.glob("*.sqlite")):
        built = (rebuilt / state.name).read_bytes()
        assert hashlib.sha256(built).hexdigest() == hashlib.sha256(state.read_bytes()).hexdigest()
        assert built == state.read_bytes()
    old, new = _sidecar(committed), _sidecar(rebuilt)
    # created_at is the wall-clock moment of freezing, by design the one field a rebuild
    # cannot reproduce; every other field must match.
    old.pop("created_at")
    new.pop("created_at")
    assert new == old
    assert new["now"] == NOW


def test_every_fixture_verifies_against_its_sidecar(world: seahaven.World) -> None:
    for fixture in world.fixtures():
        actual = hashlib.sha256(fixture.state_path.read_bytes()).hexdigest()
        assert actual == fixture.file_sha256
        assert fixture.schema_hash == world.schema_hash
        assert (fixture.world, fixture.world_version, fixture.now) == ("payments", "1.0.0", NOW)
        assert fixture.description == FIXTURES[fixture.id].description


def test_the_same_seed_mints_the_same_ids(world: seahaven.World) -> None:
    def first_ids(seed: int) -> tuple[str, str, str]:
        with world.instance("small_shop", seed=seed) as inst:
            customer = inst.call("create_customer", email="same@example.com")
            card = inst.call("attach_payment_method", customer_id=customer.id, token="tok_visa")
            charge = inst.call("create_charge", customer_id=customer.id, amount=700, currency="usd")
            return customer.id, card.id, charge.id

    assert first_ids(3) == first_ids(3)
    assert first_ids(3) != first_ids(4)


@pytest.mark.seahaven(fixture="empty")
def test_empty_has_the_schema_and_no_rows(instance: seahaven.Instance) -> None:
    tables = rows(instance, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    names = [table["name"] for table in tables]
    assert names == [
        "balance_transactions",
        "bank_accounts",
        "charges",
        "customers",
        "payment_methods",
        "payouts",
        "refunds",
    ]
    for name in names:
        assert row(instance, f"SELECT count(*) AS n FROM {name}") == {"n": 0}


@pytest.mark.seahaven(fixture="small_shop")
def test_small_shop_holds_what_its_description_promises(instance: seahaven.Instance) -> None:
    def count(sql: str) -> int:
        return int(row(instance, f"SELECT count(*) AS n FROM {sql}")["n"])

    assert count("customers") == 32
    assert count("customers WHERE deleted_at IS NOT NULL") == 1
    assert count("payment_methods") == 40
    assert count("payment_methods WHERE detached_at IS NOT NULL") == 2
    statuses = {
        item["status"]: item["n"]
        for item in rows(instance, "SELECT status, count(*) AS n FROM charges GROUP BY status")
    }
    assert statuses == {
        "succeeded": 40,
        "partially_refunded": 5,
        "refunded": 3,
        "requires_capture": 7,
        "canceled": 2,
        "failed": 5,
    }
    assert count("charges WHERE status = 'succeeded' AND amount_captured < amount") == 2
    failures = rows(
        instance,
        "SELECT failure_code, count(*) AS n FROM charges WHERE status = 'failed'"
        " GROUP BY failure_code ORDER BY failure_code",
    )
    assert [(item["failure_code"], item["n"]) for item in failures] == [
        ("card_declined", 2),
        ("expired_card", 1),
        ("insufficient_funds", 1),
        ("processing_error", 1),
    ]
    assert {item["currency"] for item in rows(instance, "SELECT currency FROM charges")} == {
        "usd",
        "eur",
    }
    assert count("refunds") == 9
    assert count("refunds WHERE reason IS NOT NULL") == 8
    assert count("bank_accounts") == 3
    payouts = rows(
        instance, "SELECT currency, status, arrival_date FROM payouts ORDER BY currency, status"
    )
    assert [(item["currency"], item["status"]) for item in payouts] == [
        ("eur", "pending"),
        ("usd", "canceled"),
        ("usd", "pending"),
    ]
    assert {item["arrival_date"] for item in payouts} == {"2026-06-03"}
    balance = instance.call("get_balance")
    assert (balance.available_in("usd"), balance.available_in("eur")) == (48685, 43429)
    assert (balance.pending_in("usd"), balance.pending_in("eur")) == (0, 0)


@pytest.mark.seahaven(fixture="small_shop")
def test_small_shop_was_made_the_way_its_tools_make_things(instance: seahaven.Instance) -> None:
    # Every capture carries the documented fee, every refund stays within its
    # charge, and every object is stamped with the fixture's instant.
    for charge in rows(instance, "SELECT * FROM charges WHERE balance_transaction_id IS NOT NULL"):
        entry = row(
            instance,
            "SELECT amount, fee FROM balance_transactions WHERE id = ?",
            charge["balance_transaction_id"],
        )
        assert entry == {
            "amount": charge["amount_captured"],
            "fee": fee_for(charge["amount_captured"], charge["currency"]),
        }
    over_refunded = rows(
        instance,
        "SELECT charges.id FROM charges JOIN refunds ON refunds.charge_id = charges.id"
        " GROUP BY charges.id HAVING SUM(refunds.amount) != charges.amount_refunded"
        " OR SUM(refunds.amount) > charges.amount_captured",
    )
    assert over_refunded == []
    for table in ("customers", "payment_methods", "charges", "refunds", "payouts"):
        stamps = rows(instance, f"SELECT DISTINCT created_at FROM {table}")
        assert stamps == [{"created_at": NOW}]
    # A charge that failed took nothing, and one still held has no ledger entry.
    assert (
        row(
            instance,
            "SELECT count(*) AS n FROM charges WHERE status IN ('failed', 'requires_capture',"
            " 'canceled') AND (amount_captured != 0 OR balance_transaction_id IS NOT NULL)",
        )["n"]
        == 0
    )
