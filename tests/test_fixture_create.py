"""Creating an instance from a fixture: what is verified, what is refused, and the copy itself."""

from __future__ import annotations

import copy
import errno
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

import seahaven
from seahaven import fixtures
from seahaven.fixtures import preparation, verification

NOW = "2026-06-01T09:00:00.000Z"
LATER = "2026-07-01T00:00:00.000Z"


def make_world(name: str, table: str, version: str = "1.0.0", **options: Any) -> seahaven.World:
    return seahaven.World(
        name=name,
        version=version,
        schema=f"CREATE TABLE {table} (id TEXT PRIMARY KEY) STRICT;",
        state_format="seahaven.state/1",
        **options,
    )


def freeze_one(world: seahaven.World, fixture_id: str, **instance_options: Any) -> fixtures.Fixture:
    """Freeze ``world`` with one row in each store (the worlds here add one level at most)."""
    instance_options.setdefault("now", NOW)
    with world.instance(**instance_options) as inst:
        with inst.bulk() as ctx:
            for node in world.composition().nodes:
                table = next(iter(node.world.schema_info.tables))
                db = ctx.db if node.is_root else getattr(ctx.worlds, node.path).db
                db.execute(f"INSERT INTO {table} (id) VALUES (?)", f"{node.path}-row")
        return inst.freeze(fixture_id, f"One row per store of {world.name}.")


def counting_hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record every file the fixture module hashes."""
    real = verification.hash_file
    calls: list[Path] = []

    def counted(path: Path) -> str:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(verification, "hash_file", counted)
    return calls


def flip_one_byte(path: Path) -> None:
    path.chmod(0o644)
    data = bytearray(path.read_bytes())
    # Past the header, inside the first table's page.
    data[len(data) - 200] ^= 0x01
    path.write_bytes(bytes(data))


# --- the happy path -------------------------------------------------------------------------------


def test_an_instance_of_a_fixture_holds_its_rows_and_starts_at_its_now(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    fixture = freeze_one(world, "one", clock_mode="fixed")
    with world.instance("one") as inst:
        assert inst.inspect().rows("SELECT id FROM notes") == [{"id": "main-row"}]
        assert inst.fixture == "one"
        assert inst.clock.iso() >= fixture.now
        assert inst.change_log() == []
        document = inst.state()
    assert document["fixture"] == {
        "id": "one",
        "nodes": {"main": {"file_sha256": fixture.file_sha256}},
    }
    with world.instance("one", clock_mode="fixed") as inst:
        assert inst.clock.iso() == NOW


@pytest.mark.usefixtures("on_disk")
def test_an_instance_writes_its_own_copy_and_never_the_fixture(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    fixture = freeze_one(world, "one")
    before = fixture.state_path.read_bytes()
    with world.instance("one") as inst:
        assert inst.state_path != fixture.state_path
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO notes (id) VALUES ('more')")
    with world.instance("one") as inst:
        assert inst.inspect().one("SELECT count(*) AS n FROM notes") == {"n": 1}
    assert fixture.state_path.read_bytes() == before
    # The fixture is copied, never opened: no journal appears beside it.
    assert sorted(p.name for p in fixture.directory.iterdir()) == ["fixture.yaml", "state.sqlite"]


def test_a_composite_instance_holds_every_stores_rows(tmp_path: Path) -> None:
    world = make_world("company", "staff", fixtures_dir=tmp_path / "fixtures")
    world.add_world(make_world("payments", "charges"), name="payments")
    fixture = freeze_one(world, "acme")
    with world.instance("acme") as inst:
        assert inst.inspect().rows("SELECT id FROM payments.charges") == [{"id": "payments-row"}]
        assert inst.inspect().rows("SELECT id FROM staff") == [{"id": "main-row"}]
        files = inst.state()["fixture"]["nodes"]
    assert files == {path: {"file_sha256": digest} for path, (_, digest) in fixture.files().items()}


def test_a_later_now_is_accepted_and_an_earlier_one_refused(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    freeze_one(world, "one", clock_mode="fixed")
    with world.instance("one", now=LATER, clock_mode="fixed") as inst:
        assert inst.clock.iso() == LATER
    with world.instance("one", now=NOW, clock_mode="fixed") as inst:
        assert inst.clock.iso() == NOW
    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("one", now="2026-05-31T23:59:59.999Z")
    assert "earlier than fixture 'one'" in str(raised.value)
    assert NOW in str(raised.value)


def test_a_fixture_that_does_not_exist_names_the_directory_and_the_way_out(
    tmp_path: Path,
) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("nowhere")
    assert "no fixture 'nowhere'" in str(raised.value)
    assert str(tmp_path / "fixtures") in str(raised.value)
    assert "World(fixtures_dir=...)" in str(raised.value)


# --- verification ---------------------------------------------------------------------------------


def test_each_file_is_hashed_once_per_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world("company", "staff", fixtures_dir=tmp_path / "fixtures")
    world.add_world(make_world("payments", "charges"), name="payments")
    fixture = freeze_one(world, "acme")
    calls = counting_hashes(monkeypatch)
    with world.instance("acme"):
        pass
    assert sorted(calls) == sorted(path for path, _ in fixture.files().values())
    calls.clear()
    with world.instance("acme"), world.instance("acme"):
        pass
    assert calls == []


def test_a_file_touched_after_verification_is_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    fixture = freeze_one(world, "one")
    with world.instance("one"):
        pass
    calls = counting_hashes(monkeypatch)
    # Rewriting the same bytes and restoring the times still moves the inode's change time.
    stamp = fixture.state_path.stat()
    flip_one_byte(fixture.state_path)
    flip_one_byte(fixture.state_path)
    os.utime(fixture.state_path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    with world.instance("one"):
        pass
    assert calls == [fixture.state_path]


@pytest.mark.parametrize("path", ["main", "payments"])
def test_one_changed_byte_is_refused_naming_the_fixture(tmp_path: Path, path: str) -> None:
    work = tmp_path / "work"
    world = make_world("company", "staff", fixtures_dir=tmp_path / "fixtures", work_dir=work)
    world.add_world(make_world("payments", "charges"), name="payments")
    fixture = freeze_one(world, "acme")
    # Verified once, so the refusal below proves the edit is noticed, not a first look.
    with world.instance("acme"):
        pass
    file, _ = fixture.files()[path]
    flip_one_byte(file)

    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("acme")
    message = str(raised.value)
    assert "fixture 'acme'" in message
    assert f"node {path!r} ({file.name})" in message
    assert "file_sha256" in message
    assert "restore the file" in message
    assert list(work.rglob("state*.sqlite")) == []


@pytest.mark.parametrize("path", ["main", "payments"])
def test_a_symbolic_link_is_refused_by_name_before_it_is_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    world = make_world("company", "staff", fixtures_dir=tmp_path / "fixtures")
    world.add_world(make_world("payments", "charges"), name="payments")
    fixture = freeze_one(world, "acme")
    file, _ = fixture.files()[path]
    # The link's target has exactly the recorded bytes, so only the rule can refuse it.
    elsewhere = tmp_path / "elsewhere.sqlite"
    shutil.copyfile(file, elsewhere)
    file.chmod(0o644)
    file.unlink()
    file.symlink_to(elsewhere)
    calls = counting_hashes(monkeypatch)

    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("acme")
    assert f"node {path!r} ({file.name}) is a symbolic link" in str(raised.value)
    assert file not in calls
    with pytest.raises(seahaven.WorldBug, match="symbolic link"):
        fixtures.verify(fixture)


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
def test_a_journal_beside_a_state_file_is_refused_on_every_create(
    tmp_path: Path, suffix: str
) -> None:
    world = make_world("company", "staff", fixtures_dir=tmp_path / "fixtures")
    world.add_world(make_world("payments", "charges"), name="payments")
    fixture = freeze_one(world, "acme")
    # Already verified and remembered: the companion must still be noticed.
    with world.instance("acme"):
        pass
    file, _ = fixture.files()["payments"]
    companion = file.with_name(file.name + suffix)
    companion.write_bytes(b"")
    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("acme")
    assert f"node 'payments' (state.payments.sqlite) has a state.payments.sqlite{suffix}" in str(
        raised.value
    )
    assert "regenerate" in str(raised.value)
    companion.unlink()
    with world.instance("acme"):
        pass


def test_a_missing_state_file_is_refused(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    fixture = freeze_one(world, "one")
    fixture.state_path.chmod(0o644)
    fixture.state_path.unlink()
    with pytest.raises(seahaven.WorldBug, match="is missing; regenerate"):
        world.instance("one")


def test_a_sidecar_whose_id_is_not_its_directory_is_refused(tmp_path: Path) -> None:
    world = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    freeze_one(world, "one")
    (tmp_path / "fixtures" / "one").rename(tmp_path / "fixtures" / "two")
    with pytest.raises(seahaven.WorldBug, match="its sidecar says id 'one'"):
        world.instance("two")


def test_another_worlds_fixture_in_a_shared_directory_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "fixtures"
    payments = make_world("payments", "charges", fixtures_dir=shared)
    company = make_world("company", "staff", fixtures_dir=shared)
    freeze_one(payments, "ledger")
    with pytest.raises(seahaven.WorldBug) as raised:
        company.instance("ledger")
    assert "was frozen from world 'payments'" in str(raised.value)


# --- the shape and schema checks ------------------------------------------------------------------


SENTENCES = {
    "node added": "node added: the world has a store at 'payments'",
    "node removed": "node removed: the fixture holds a store at 'payments'",
    "scope changed": "is in scope 'acct' now and was in None when frozen",
    "alias changed": "is also reached by [] now and was by ['shop/payments'] when frozen",
    "schema drifted": "schema drifted: the store at 'payments' (world 'payments')",
}


def _host(fixtures_dir: Path) -> seahaven.World:
    return make_world("company", "staff", fixtures_dir=fixtures_dir)


def _refusal(frozen_from: seahaven.World, created_from: seahaven.World) -> str:
    freeze_one(frozen_from, "acme")
    with pytest.raises(seahaven.WorldBug) as raised:
        created_from.instance("acme")
    message = str(raised.value)
    assert message.startswith("fixture 'acme' of world 'company' cannot be used: ")
    return message


def assert_only(message: str, kind: str) -> None:
    assert SENTENCES[kind] in message
    for other, sentence in SENTENCES.items():
        if other != kind:
            assert sentence not in message


def test_a_node_added_since_the_freeze_is_refused(tmp_path: Path) -> None:
    before = _host(tmp_path / "fixtures")
    after = copy.copy(before)
    after.add_world(make_world("payments", "charges"), name="payments")
    assert_only(_refusal(before, after), "node added")


def test_a_node_removed_since_the_freeze_is_refused(tmp_path: Path) -> None:
    before = _host(tmp_path / "fixtures")
    before.add_world(make_world("payments", "charges"), name="payments")
    after = _host(tmp_path / "fixtures")
    assert_only(_refusal(before, after), "node removed")


def test_a_node_moved_to_another_scope_is_refused(tmp_path: Path) -> None:
    payments = make_world("payments", "charges")
    before = _host(tmp_path / "fixtures")
    before.add_world(payments, name="payments")
    after = _host(tmp_path / "fixtures")
    after.add_world(payments, name="payments", store="acct")
    assert_only(_refusal(before, after), "scope changed")


def test_a_node_reached_by_other_routes_is_refused(tmp_path: Path) -> None:
    payments = make_world("payments", "charges")
    shop_with_payments = make_world("shop", "orders")
    shop_with_payments.add_world(payments, name="payments")
    shop_without = make_world("shop", "orders")
    before = _host(tmp_path / "fixtures")
    before.add_world(payments, name="payments")
    before.add_world(shop_with_payments, name="shop")
    after = _host(tmp_path / "fixtures")
    after.add_world(payments, name="payments")
    after.add_world(shop_without, name="shop")
    assert_only(_refusal(before, after), "alias changed")


def test_a_node_whose_schema_drifted_is_refused(tmp_path: Path) -> None:
    before = _host(tmp_path / "fixtures")
    before.add_world(make_world("payments", "charges"), name="payments")
    after = _host(tmp_path / "fixtures")
    after.add_world(make_world("payments", "refunds"), name="payments")
    message = _refusal(before, after)
    assert_only(message, "schema drifted")
    assert "regenerate the fixture" in message


def test_the_roots_schema_drifting_is_refused_naming_main(tmp_path: Path) -> None:
    before = make_world("notes", "notes", fixtures_dir=tmp_path / "fixtures")
    after = make_world("notes", "memos", fixtures_dir=tmp_path / "fixtures")
    freeze_one(before, "one")
    with pytest.raises(seahaven.WorldBug) as raised:
        after.instance("one")
    assert "schema drifted: the store at 'main' (world 'notes')" in str(raised.value)


def test_another_world_at_a_path_is_refused(tmp_path: Path) -> None:
    before = _host(tmp_path / "fixtures")
    before.add_world(make_world("payments", "charges"), name="payments")
    after = _host(tmp_path / "fixtures")
    after.add_world(make_world("billing", "charges"), name="payments")
    message = _refusal(before, after)
    assert "is world 'billing' now and was 'payments' when frozen" in message


def test_a_version_only_difference_is_reported_and_never_refused(tmp_path: Path) -> None:
    before = make_world("company", "staff", fixtures_dir=tmp_path / "fixtures")
    before.add_world(make_world("payments", "charges", version="1.0.0"), name="payments")
    after = make_world("company", "staff", version="1.1.0", fixtures_dir=tmp_path / "fixtures")
    after.add_world(make_world("payments", "charges", version="2.0.0"), name="payments")
    freeze_one(before, "acme")

    with after.instance("acme") as inst:
        reports = {report.path: report for report in inst.composition()}
        document = inst.state()
    assert reports["main"].world_version == "1.1.0"
    assert reports["main"].frozen_world_version == "1.0.0"
    assert reports["payments"].world_version == "2.0.0"
    assert reports["payments"].frozen_world_version == "1.0.0"
    assert document["composition"]["payments"]["frozen_world_version"] == "1.0.0"
    assert document["composition"]["main"]["frozen_world_version"] == "1.0.0"

    # Where the versions agree, and on a blank instance, there is nothing to report.
    with before.instance("acme") as inst:
        assert [report.frozen_world_version for report in inst.composition()] == [None, None]
    with after.instance() as inst:
        assert inst.state()["composition"]["payments"]["frozen_world_version"] is None


# --- the copy -------------------------------------------------------------------------------------


def _big_file(path: Path) -> bytes:
    data = hashlib.sha256(b"seed").digest() * (3 * 1024 * 1024 // 32 + 7)
    path.write_bytes(data)
    return data


def test_copy_state_file_copies_every_byte(tmp_path: Path) -> None:
    data = _big_file(tmp_path / "source")
    preparation.copy_state_file(tmp_path / "source", tmp_path / "target")
    assert (tmp_path / "target").read_bytes() == data


def test_copy_state_file_falls_back_to_a_plain_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    def no_reflink(*args: Any) -> None:
        raise OSError(errno.EOPNOTSUPP, "no reflinks here")

    def no_copy_file_range(*args: Any) -> int:
        raise OSError(errno.EXDEV, "across devices")

    monkeypatch.setattr(fcntl, "ioctl", no_reflink)
    monkeypatch.setattr(os, "copy_file_range", no_copy_file_range)
    data = _big_file(tmp_path / "source")
    preparation.copy_state_file(tmp_path / "source", tmp_path / "target")
    assert (tmp_path / "target").read_bytes() == data


def test_copy_state_file_finishes_a_short_copy_file_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    def no_reflink(*args: Any) -> None:
        raise OSError(errno.EOPNOTSUPP, "no reflinks here")

    real = os.copy_file_range

    def small_steps(src: int, dst: int, count: int, *args: Any) -> int:
        return real(src, dst, min(count, 65536), *args)

    monkeypatch.setattr(fcntl, "ioctl", no_reflink)
    monkeypatch.setattr(os, "copy_file_range", small_steps)
    data = _big_file(tmp_path / "source")
    preparation.copy_state_file(tmp_path / "source", tmp_path / "target")
    assert (tmp_path / "target").read_bytes() == data


def test_copy_state_file_never_overwrites(tmp_path: Path) -> None:
    (tmp_path / "source").write_bytes(b"new")
    (tmp_path / "target").write_bytes(b"old")
    with pytest.raises(FileExistsError):
        preparation.copy_state_file(tmp_path / "source", tmp_path / "target")
    assert (tmp_path / "target").read_bytes() == b"old"
