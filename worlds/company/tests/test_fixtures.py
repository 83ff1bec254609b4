"""The committed fixtures: rebuilt byte for byte by the generator, and holding what they promise."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from company_support import NOW, count, row, rows
from fixtures_src.generate import FIXTURES, build

import seahaven


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sidecar(fixture: seahaven.Fixture) -> dict[str, Any]:
    loaded = yaml.safe_load((fixture.directory / "fixture.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def test_the_package_holds_exactly_the_company_s_own_fixtures(world: seahaven.World) -> None:
    on_disk = sorted(path.name for path in world.fixtures_dir.iterdir() if path.is_dir())
    assert on_disk == sorted(FIXTURES) == sorted(fixture.id for fixture in world.fixtures())
    for fixture in world.fixtures():
        # Composite fixtures: version 2, one file per store, none of them an added world's own.
        assert (fixture.world, fixture.format_version) == ("company", 2)
        assert [node.path for node in fixture.nodes] == [
            "payments",
            "chat",
            "payments_eu",
            "portal",
        ]
        assert sorted(path.name for path in fixture.directory.iterdir()) == [
            "fixture.yaml",
            "state.chat.sqlite",
            "state.payments.sqlite",
            "state.payments_eu.sqlite",
            "state.portal.sqlite",
            "state.sqlite",
        ]


@pytest.mark.parametrize("fixture_id", sorted(FIXTURES))
def test_the_generator_rebuilds_every_fixture_byte_for_byte(
    world: seahaven.World, tmp_path: Path, fixture_id: str
) -> None:
    committed = next(fixture for fixture in world.fixtures() if fixture.id == fixture_id)
    elsewhere = copy.copy(world)
    elsewhere.fixtures_dir = tmp_path

    rebuilt = build(fixture_id, world=elsewhere)

    assert rebuilt.directory == tmp_path / fixture_id
    committed_files, rebuilt_files = committed.files(), rebuilt.files()
    assert (
        list(committed_files)
        == list(rebuilt_files)
        == [
            "main",
            "payments",
            "chat",
            "payments_eu",
            "portal",
        ]
    )
    for path, (committed_file, recorded) in committed_files.items():
        rebuilt_file, rebuilt_recorded = rebuilt_files[path]
        assert committed_file.name == rebuilt_file.name
        assert _sha256(committed_file) == recorded == rebuilt_recorded == _sha256(rebuilt_file)
    old, new = _sidecar(committed), _sidecar(rebuilt)
    # created_at is the wall-clock moment of freezing: by design the one field a rebuild
    # cannot reproduce. Every other field, the nodes list included, must match.
    assert set(old) == set(new)
    old.pop("created_at")
    new.pop("created_at")
    assert new == old
    assert (committed.now, committed.parent_id) == (NOW, None)


def test_every_fixture_verifies_against_its_sidecar(world: seahaven.World) -> None:
    schemas = {node.path: node.world.schema_hash for node in world.composition().nodes}
    for fixture in world.fixtures():
        assert fixture.schema_hash == schemas["main"]
        for node in fixture.nodes:
            assert node.schema_hash == schemas[node.path]
        for path, (file, recorded) in fixture.files().items():
            assert _sha256(file) == recorded, (fixture.id, path)
        assert fixture.description == FIXTURES[fixture.id].description


def test_the_same_seed_mints_the_same_ids_in_every_store(world: seahaven.World) -> None:
    def minted(seed: int) -> tuple[str, ...]:
        with world.instance(
            "acme", seed=seed, startup={"principal": "carla@acme-robotics.test"}
        ) as inst:
            invoice = inst.call(
                "invoice_customer",
                customer_email="ap@tyrell.test",
                amount=5_000,
                description="Audit",
                card_token="tok_visa",
            )
            return (
                invoice.id,
                invoice.charge_id,
                invoice.payments_customer_id,
                str(invoice.announcement_message_id),
            )

    assert minted(3) == minted(3)
    assert all(a != b for a, b in zip(minted(3), minted(4), strict=True))


@pytest.mark.seahaven(fixture="empty")
def test_empty_holds_only_the_back_office_s_own_chat_account(
    instance: seahaven.Instance, world: seahaven.World
) -> None:
    for node in world.composition().nodes:
        prefix = "" if node.is_root else f"{node.schema_name}."
        for name, table in node.world.schema_info.tables.items():
            if table.kind != "table":
                continue
            expected = 1 if (node.path, name) == ("chat", "users") else 0
            assert count(instance, f'{prefix}"{name}"') == expected, (node.path, name)
    assert row(instance, "SELECT handle, role FROM chat.users") == {
        "handle": "backoffice",
        "role": "owner",
    }


@pytest.mark.seahaven(fixture="acme")
def test_acme_holds_what_its_description_promises(instance: seahaven.Instance) -> None:
    people = {
        (item["status"], item["role"]): item["n"]
        for item in rows(instance, "SELECT status, role, count(*) AS n FROM staff GROUP BY 1, 2")
    }
    assert people == {
        ("active", "admin"): 2,
        ("active", "finance"): 2,
        ("active", "hr"): 1,
        ("active", "employee"): 6,
        ("inactive", "employee"): 1,
    }
    without_account = rows(
        instance,
        "SELECT full_name FROM staff WHERE reimbursement_bank_account_id IS NULL ORDER BY 1",
    )
    assert [item["full_name"] for item in without_account] == ["Aiko Tanaka", "Omar Haddad"]
    invoices = rows(
        instance, "SELECT number, currency, status, failure_code FROM invoices ORDER BY number"
    )
    assert [(item["number"], item["currency"], item["status"]) for item in invoices] == [
        ("INV-0001", "usd", "paid"),
        ("INV-0002", "usd", "paid"),
        ("INV-0003", "usd", "payment_failed"),
        ("INV-0004", "usd", "refunded"),
        ("INV-0005", "eur", "paid"),
        ("INV-0006", "eur", "paid"),
        ("INV-0007", "usd", "paid"),
        ("INV-0008", "usd", "paid"),
        ("INV-0009", "usd", "payment_failed"),
        ("INV-0010", "eur", "payment_failed"),
    ]
    assert [item["failure_code"] for item in invoices if item["failure_code"]] == [
        "insufficient_funds",
        "expired_card",
        "processing_error",
    ]
    # Every invoice points at a charge in the store of its currency, and was announced.
    for currency, store in (("usd", "payments"), ("eur", "payments_eu")):
        orphans = count(
            instance,
            "invoices",
            f"currency = ? AND charge_id NOT IN (SELECT id FROM {store}.charges)",
            currency,
        )
        assert orphans == 0
    assert (
        count(instance, "invoices", "announcement_message_id NOT IN (SELECT id FROM chat.messages)")
        == 0
    )
    expenses = {
        item["status"]: item["n"]
        for item in rows(instance, "SELECT status, count(*) AS n FROM expenses GROUP BY 1")
    }
    assert expenses == {"reimbursed": 4, "rejected": 1, "submitted": 4}
    payouts = rows(instance, "SELECT status, arrival_date FROM payments.payouts")
    assert {(item["status"], item["arrival_date"]) for item in payouts} == {
        ("pending", "2026-06-03")
    }
    channels = rows(instance, "SELECT name, is_private FROM chat.channels ORDER BY name")
    assert [(item["name"], item["is_private"]) for item in channels] == [
        ("billing", 0),
        ("company", 0),
        ("engineering", 0),
        ("finance", 0),
        ("leadership", 1),
        ("people", 0),
        ("sales", 0),
        ("support", 0),
    ]
    usd = instance.call("get_company_summary").balances
    assert [(item.account, item.available, item.pending) for item in usd] == [
        ("payments", 2_285_205, 0),
        ("payments_eu", 0, 878_705),
    ]
