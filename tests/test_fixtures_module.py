"""``seahaven.fixtures`` for tooling, and ``world.fixtures()``: listing, loading and verifying."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import seahaven
from seahaven import fixtures

NOW = "2026-06-01T09:00:00.000Z"


def make_world(name: str, table: str, **options: Any) -> seahaven.World:
    return seahaven.World(
        name=name,
        version="1.0.0",
        schema=f"CREATE TABLE {table} (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
        **options,
    )


def freeze(world: seahaven.World, fixture_id: str, description: str = "Nothing.") -> Path:
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        return inst.freeze(fixture_id, description).directory


def break_state_file(directory: Path) -> Path:
    state = directory / "state.sqlite"
    state.chmod(0o644)
    state.write_bytes(state.read_bytes()[:-1] + b"\x01")
    return state


# --- load -----------------------------------------------------------------------------------------


def test_load_never_opens_the_state_file(tmp_path: Path) -> None:
    directory = freeze(make_world("notes", "notes", fixtures_dir=tmp_path), "one")
    state = directory / "state.sqlite"
    state.chmod(0o644)
    state.write_bytes(b"this is not a database")
    fixture = fixtures.load(directory)
    assert fixture.id == "one"
    # Nothing read it as a database: no journal appeared and the bytes are as written.
    assert sorted(path.name for path in directory.iterdir()) == ["fixture.yaml", "state.sqlite"]
    assert state.read_bytes() == b"this is not a database"
    state.unlink()
    assert fixtures.load(directory) == fixture


def test_load_takes_a_string_path(tmp_path: Path) -> None:
    directory = freeze(make_world("notes", "notes", fixtures_dir=tmp_path), "one")
    assert fixtures.load(str(directory)) == fixtures.load(directory)


# --- load_all -------------------------------------------------------------------------------------


def test_load_all_keys_every_fixture_by_id(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path)
    for fixture_id in ("b", "a", "c"):
        freeze(world, fixture_id, f"Fixture {fixture_id}.")
    found = fixtures.load_all(tmp_path)
    assert sorted(found) == ["a", "b", "c"]
    assert found["b"].description == "Fixture b."
    assert found["c"].directory == tmp_path / "c"


def test_load_all_of_an_empty_or_missing_directory_is_empty(tmp_path: Path) -> None:
    assert fixtures.load_all(tmp_path) == {}
    assert fixtures.load_all(tmp_path / "absent") == {}


def test_load_all_skips_dot_directories_and_a_freeze_in_flight(tmp_path: Path) -> None:
    directory = freeze(make_world("notes", "notes", fixtures_dir=tmp_path), "real")
    # A complete-looking copy under a pending name, and a hidden folder, are both ignored.
    shutil.copytree(directory, tmp_path / ".pending-real-0a1b2c3d")
    shutil.copytree(directory, tmp_path / ".git")
    (tmp_path / "notes.txt").write_text("a loose file", encoding="utf-8")
    (tmp_path / "scratch").mkdir()
    assert list(fixtures.load_all(tmp_path)) == ["real"]


def test_two_fixtures_claiming_one_id_is_an_error_naming_both_files(tmp_path: Path) -> None:
    directory = freeze(make_world("notes", "notes", fixtures_dir=tmp_path), "one")
    shutil.copytree(directory, tmp_path / "one_copy")
    with pytest.raises(seahaven.WorldBug) as raised:
        fixtures.load_all(tmp_path)
    message = str(raised.value)
    assert str(tmp_path / "one" / "fixture.yaml") in message
    assert str(tmp_path / "one_copy" / "fixture.yaml") in message
    assert "'one'" in message


def test_load_all_reports_a_malformed_sidecar_by_file(tmp_path: Path) -> None:
    freeze(make_world("notes", "notes", fixtures_dir=tmp_path), "good")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "fixture.yaml").write_text("format_version: 9\n", encoding="utf-8")
    with pytest.raises(seahaven.WorldBug) as raised:
        fixtures.load_all(tmp_path)
    assert str(tmp_path / "bad" / "fixture.yaml") in str(raised.value)
    assert "format_version 9" in str(raised.value)


# --- verify ---------------------------------------------------------------------------------------


def test_verify_accepts_a_fixture_as_frozen(tmp_path: Path) -> None:
    world = make_world("company", "staff", fixtures_dir=tmp_path)
    world.add_world(make_world("payments", "charges"), name="payments")
    fixtures.verify(fixtures.load(freeze(world, "acme")))


def test_verify_refuses_a_modified_state_file_naming_it(tmp_path: Path) -> None:
    directory = freeze(make_world("notes", "notes", fixtures_dir=tmp_path), "one")
    fixture = fixtures.load(directory)
    break_state_file(directory)
    with pytest.raises(seahaven.WorldBug) as raised:
        fixtures.verify(fixture)
    assert "fixture 'one'" in str(raised.value)
    assert "(state.sqlite)" in str(raised.value)
    assert "file_sha256" in str(raised.value)


def test_verify_refuses_a_state_file_that_links_out_of_the_directory(tmp_path: Path) -> None:
    directory = freeze(make_world("notes", "notes", fixtures_dir=tmp_path / "fx"), "one")
    fixture = fixtures.load(directory)
    outside = tmp_path / "outside.sqlite"
    shutil.copyfile(directory / "state.sqlite", outside)
    (directory / "state.sqlite").chmod(0o644)
    (directory / "state.sqlite").unlink()
    (directory / "state.sqlite").symlink_to(outside)
    with pytest.raises(seahaven.WorldBug, match=r"\(state.sqlite\) is a symbolic link"):
        fixtures.verify(fixture)


def test_verify_refuses_a_state_file_that_is_a_directory(tmp_path: Path) -> None:
    directory = freeze(make_world("notes", "notes", fixtures_dir=tmp_path), "one")
    fixture = fixtures.load(directory)
    (directory / "state.sqlite").chmod(0o644)
    (directory / "state.sqlite").unlink()
    (directory / "state.sqlite").mkdir()
    with pytest.raises(seahaven.WorldBug, match="not a regular file"):
        fixtures.verify(fixture)


# --- freeze ---------------------------------------------------------------------------------------


def test_the_module_freeze_writes_where_it_is_told(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "own")
    with world.instance(now=NOW) as inst:
        fixture = fixtures.freeze(inst, "aside", "Somewhere else.", fixtures_dir=tmp_path / "other")
        also = fixtures.freeze(inst, "aside", "Same id, own dir.", fixtures_dir=str(tmp_path))
    assert fixture.directory == tmp_path / "other" / "aside"
    assert also.directory == tmp_path / "aside"
    assert not (tmp_path / "own").exists()
    assert world.fixtures() == []


# --- world.fixtures() -----------------------------------------------------------------------------


def test_world_fixtures_are_sorted_by_id(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path)
    for fixture_id in ("zeta", "Alpha", "mid", "alpha"):
        freeze(world, fixture_id)
    listed = world.fixtures()
    assert [fixture.id for fixture in listed] == ["Alpha", "alpha", "mid", "zeta"]
    assert all(isinstance(fixture, seahaven.Fixture) for fixture in listed)


def test_a_world_without_a_fixtures_directory_has_none(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "never-made")
    assert world.fixtures() == []


def test_listing_does_not_verify(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path)
    break_state_file(freeze(world, "one"))
    assert [fixture.id for fixture in world.fixtures()] == ["one"]
    with pytest.raises(seahaven.WorldBug, match="file_sha256"):
        world.instance("one")


def test_an_added_worlds_fixtures_are_unreachable_from_its_host(tmp_path: Path) -> None:
    payments = make_world("payments", "charges", fixtures_dir=tmp_path / "payments")
    company = make_world("company", "staff", fixtures_dir=tmp_path / "company")
    company.add_world(payments, name="payments")
    freeze(payments, "pay_only")
    freeze(company, "acme")

    assert [fixture.id for fixture in payments.fixtures()] == ["pay_only"]
    assert [fixture.id for fixture in company.fixtures()] == ["acme"]
    with pytest.raises(seahaven.WorldBug, match="no fixture 'pay_only'"):
        company.instance("pay_only")


def test_a_shared_directory_lists_each_worlds_own(tmp_path: Path) -> None:
    payments = make_world("payments", "charges", fixtures_dir=tmp_path)
    company = make_world("company", "staff", fixtures_dir=tmp_path)
    company.add_world(payments, name="payments")
    freeze(payments, "pay_only")
    freeze(company, "acme")

    assert [fixture.id for fixture in company.fixtures()] == ["acme"]
    assert [fixture.id for fixture in payments.fixtures()] == ["pay_only"]
    with pytest.raises(seahaven.WorldBug, match="frozen from world 'payments'"):
        company.instance("pay_only")
