"""``inst.freeze``: its checks, what it writes, and that a failure leaves nothing behind."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import stat
import sysconfig
import time
from pathlib import Path
from typing import Any

import pytest

import seahaven
from seahaven import fixtures
from seahaven.fixtures import sidecar as sidecars
from seahaven.fixtures import verification
from seahaven.stores.clock import is_canonical, parse_instant

NOW = "2026-06-01T09:00:00.000Z"


def make_world(name: str, table: str, **options: Any) -> seahaven.World:
    return seahaven.World(
        name=name,
        version="1.0.0",
        schema=f"CREATE TABLE {table} (id TEXT PRIMARY KEY, gist TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
        **options,
    )


def company_with_payments(fixtures_dir: Path) -> seahaven.World:
    """A host adding one world, with tools that change the added store's schema behind its back."""
    payments = make_world("payments", "charges")
    company = make_world("company", "staff", fixtures_dir=fixtures_dir)
    company.add_world(payments, name="payments")

    @company.tool
    def add_staff(ctx: seahaven.Ctx, id: str) -> str:
        """Hire someone, and charge for it."""
        ctx.db.execute("INSERT INTO staff (id, gist) VALUES (?, 'hired')", id)
        ctx.worlds.payments.db.execute(
            "INSERT INTO charges (id, gist) VALUES (?, 'payroll')", f"c-{id}"
        )
        return id

    @company.tool
    def create_side_table(ctx: seahaven.Ctx) -> None:
        """Add a table to the payments store through its raw connection."""
        ctx.worlds.payments.db.conn.execute("CREATE TABLE side (id TEXT PRIMARY KEY) STRICT")

    @company.tool
    def alter_charges(ctx: seahaven.Ctx) -> None:
        """Add a column to the payments store through its raw connection."""
        ctx.worlds.payments.db.conn.execute("ALTER TABLE charges ADD COLUMN note TEXT")

    @company.tool
    def alter_staff(ctx: seahaven.Ctx) -> None:
        """Add a column to the root's own store through its raw connection."""
        ctx.db.conn.execute("ALTER TABLE staff ADD COLUMN note TEXT")

    return company


def leftovers(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir()) if directory.exists() else []


# --- refusals before anything is written ----------------------------------------------------------


def test_freeze_inside_bulk_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    world = company_with_payments(tmp_path / "fixtures")
    with world.instance(now=NOW) as inst:
        with inst.bulk() as ctx, pytest.raises(seahaven.WorldBug, match="inside bulk"):
            ctx.db.execute("INSERT INTO staff (id, gist) VALUES ('u1', 'x')")
            inst.freeze("early", "Rows not committed yet.")
        # Leaving the block commits, and freezing then works.
        fixture = inst.freeze("later", "One person.")
    assert leftovers(tmp_path / "fixtures") == ["later"]
    assert fixture.id == "later"


@pytest.mark.parametrize(
    ("tool", "path"),
    [("create_side_table", "payments"), ("alter_charges", "payments"), ("alter_staff", "main")],
)
def test_a_drifted_node_names_its_path_and_mints_nothing(
    tmp_path: Path, tool: str, path: str
) -> None:
    world = company_with_payments(tmp_path / "fixtures")
    with world.instance(now=NOW) as inst:
        inst.call("add_staff", id="u1")
        inst.call(tool)
        with pytest.raises(seahaven.WorldBug) as raised:
            inst.freeze("drifted", "Never minted.")
    assert f"the store at {path!r}" in str(raised.value)
    assert "nothing was frozen" in str(raised.value)
    assert leftovers(tmp_path / "fixtures") == []


def test_an_existing_id_is_refused_and_the_fixture_is_untouched(tmp_path: Path) -> None:
    world = make_world("memos", "memos", fixtures_dir=tmp_path / "fixtures")
    with world.instance(now=NOW) as inst:
        first = inst.freeze("taken", "The first one.")
        sidecar = (first.directory / "fixture.yaml").read_bytes()
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO memos (id, gist) VALUES ('m1', 'new')")
        with pytest.raises(seahaven.WorldBug) as raised:
            inst.freeze("taken", "The second one.")
    assert "already exists" in str(raised.value)
    assert "new id" in str(raised.value)
    assert (first.directory / "fixture.yaml").read_bytes() == sidecar
    fixtures.verify(fixtures.load(first.directory))
    assert leftovers(tmp_path / "fixtures") == ["taken"]


def test_a_description_that_is_not_a_string_is_refused(tmp_path: Path) -> None:
    world = make_world("memos", "memos", fixtures_dir=tmp_path / "fixtures")
    with world.instance(now=NOW) as inst, pytest.raises(seahaven.WorldBug, match="description"):
        inst.freeze("x", None)  # type: ignore[arg-type]
    assert leftovers(tmp_path / "fixtures") == []


def test_a_destroyed_instance_cannot_be_frozen(tmp_path: Path) -> None:
    world = make_world("memos", "memos", fixtures_dir=tmp_path / "fixtures")
    inst = world.instance(now=NOW)
    inst.destroy()
    with pytest.raises(seahaven.WorldBug, match="destroyed"):
        inst.freeze("late", "Too late.")
    assert leftovers(tmp_path / "fixtures") == []


# --- what a freeze writes -------------------------------------------------------------------------


def test_freeze_checkpoints_vacuums_and_seals_every_state_file(tmp_path: Path) -> None:
    world = company_with_payments(tmp_path / "fixtures")
    with world.instance(now=NOW) as inst:
        for number in range(200):
            inst.call("add_staff", id=f"u{number}")
        with inst.bulk() as ctx:
            # Freed pages a vacuum reclaims.
            ctx.db.execute("DELETE FROM staff WHERE id != 'u7'")
        fixture = inst.freeze("sealed", "One person left of two hundred.")

    directory = fixture.directory
    # Checkpointed: no journal companion travels with the fixture.
    assert leftovers(directory) == ["fixture.yaml", "state.payments.sqlite", "state.sqlite"]
    for name in ("state.sqlite", "state.payments.sqlite"):
        assert stat.S_IMODE((directory / name).stat().st_mode) == 0o444
    # Read a private copy, so the fixture itself is never opened.
    copies = {}
    for name in ("state.sqlite", "state.payments.sqlite"):
        copies[name] = tmp_path / f"copy-{name}"
        shutil.copyfile(directory / name, copies[name])
    with sqlite3.connect(copies["state.sqlite"]) as db:
        assert db.execute("SELECT id FROM staff").fetchall() == [("u7",)]
        assert db.execute("PRAGMA freelist_count").fetchone() == (0,)
    with sqlite3.connect(copies["state.payments.sqlite"]) as db:
        assert db.execute("SELECT count(*) FROM charges").fetchone() == (200,)


def test_now_is_the_clock_and_created_at_is_the_wall_clock(tmp_path: Path) -> None:
    world = make_world("memos", "memos", fixtures_dir=tmp_path / "fixtures")

    @world.tool
    def jot(ctx: seahaven.Ctx, id: str) -> None:
        """File a memo with a placeholder gist."""
        ctx.db.execute("INSERT INTO memos (id, gist) VALUES (?, 'x')", id)

    with world.instance(now=NOW, clock_mode="tick") as inst:
        inst.call("jot", id="a")
        inst.call("jot", id="b")
        clock_reading = inst.clock.iso()
        before = time.time_ns() // 1_000_000
        fixture = inst.freeze("ticked", "Two memos.")
        after = time.time_ns() // 1_000_000

    assert clock_reading != NOW
    assert fixture.now == clock_reading
    assert is_canonical(fixture.created_at)
    # created_at is millisecond-truncated wall time, taken during the freeze.
    assert before <= parse_instant(fixture.created_at) <= after
    assert fixture.parent_id is None


def test_parent_id_is_the_fixture_the_instance_came_from(tmp_path: Path) -> None:
    world = make_world("memos", "memos", fixtures_dir=tmp_path / "fixtures")
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        inst.freeze("base", "Nothing yet.")
    with world.instance("base", clock_mode="fixed") as inst:
        child = inst.freeze("child", "Still nothing.")
    assert child.parent_id == "base"
    assert fixtures.load(tmp_path / "fixtures" / "child").parent_id == "base"


def test_freeze_returns_what_load_reads_back(tmp_path: Path) -> None:
    world = make_world("memos", "memos", fixtures_dir=tmp_path / "fixtures")
    with world.instance(now=NOW) as inst:
        returned = inst.freeze("same", "Read back.")
    assert returned == fixtures.load(tmp_path / "fixtures" / "same")
    assert returned.file_sha256 == hashlib.sha256(returned.state_path.read_bytes()).hexdigest()


# --- all or nothing -------------------------------------------------------------------------------


def _fail_on_second_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    real = verification.hash_file
    calls: list[Path] = []

    def flaky(path: Path) -> str:
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk went away")
        return real(path)

    monkeypatch.setattr(verification, "hash_file", flaky)


def _fail_on_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(source: Any, target: Any) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "rename", refuse)


def _fail_on_sidecar(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(sidecar: Any) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(sidecars.Sidecar, "render", interrupted)


@pytest.mark.parametrize(
    ("break_it", "raised"),
    [
        (_fail_on_second_hash, seahaven.WorldBug),
        (_fail_on_rename, seahaven.WorldBug),
        (_fail_on_sidecar, KeyboardInterrupt),
    ],
)
def test_a_freeze_that_fails_half_way_leaves_no_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, break_it: Any, raised: type[BaseException]
) -> None:
    fixtures_dir = tmp_path / "fixtures"
    world = company_with_payments(fixtures_dir)
    with world.instance(now=NOW) as inst:
        inst.call("add_staff", id="u1")
        with monkeypatch.context() as patch:
            break_it(patch)
            with pytest.raises(raised):
                inst.freeze("half", "Never published.")
        assert leftovers(fixtures_dir) == []
        # The instance is still good, and the same id can be frozen once the fault is gone.
        fixture = inst.freeze("half", "Published this time.")
    assert leftovers(fixtures_dir) == ["half"]
    fixtures.verify(fixture)


def test_a_failed_publish_names_the_fixture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world("memos", "memos", fixtures_dir=tmp_path / "fixtures")
    with world.instance(now=NOW) as inst:
        _fail_on_rename(monkeypatch)
        with pytest.raises(seahaven.WorldBug) as raised:
            inst.freeze("unpublished", "Never published.")
    assert "'unpublished' could not be published" in str(raised.value)


# --- where a freeze may write ---------------------------------------------------------------------


def test_freezing_where_no_directory_can_be_made_names_the_escape_hatch(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    world = make_world("memos", "memos", fixtures_dir=blocker / "fixtures")
    with world.instance(now=NOW) as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.freeze("nowhere", "Cannot be written.")
    assert "World(fixtures_dir=...)" in str(raised.value)
    assert "nothing was frozen" in str(raised.value)
    assert blocker.read_text(encoding="utf-8") == "not a directory"


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="file modes do not bind root or Windows"
)
def test_freezing_into_a_read_only_directory_names_the_escape_hatch(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    world = make_world("memos", "memos", fixtures_dir=locked)
    try:
        with world.instance(now=NOW) as inst, pytest.raises(seahaven.WorldBug) as raised:
            inst.freeze("x", "Read-only.")
    finally:
        locked.chmod(0o755)
    assert "World(fixtures_dir=...)" in str(raised.value)
    assert leftovers(locked) == []


def test_freezing_into_site_packages_is_refused_before_anything_is_made() -> None:
    installed = Path(sysconfig.get_paths()["purelib"]) / "seahaven-test-never-made" / "fixtures"
    world = make_world("memos", "memos", fixtures_dir=installed)
    with world.instance(now=NOW) as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.freeze("x", "Into an installed package.")
    assert "installed package" in str(raised.value)
    assert "World(fixtures_dir=...)" in str(raised.value)
    assert not installed.parent.exists()


def test_freezing_into_a_package_a_distribution_installed_is_refused(tmp_path: Path) -> None:
    # The layout `pip install --target` leaves: the package beside the dist-info that records it.
    target = tmp_path / "target"
    (target / "tinyworld" / "fixtures").mkdir(parents=True)
    (target / "tinyworld" / "__init__.py").write_text("", encoding="utf-8")
    (target / "tinyworld-1.0.dist-info").mkdir()
    (target / "tinyworld-1.0.dist-info" / "RECORD").write_text(
        "tinyworld/__init__.py,sha256=x,0\ntinyworld-1.0.dist-info/RECORD,,\n", encoding="utf-8"
    )
    world = make_world("memos", "memos", fixtures_dir=target / "tinyworld" / "fixtures")
    with world.instance(now=NOW) as inst, pytest.raises(seahaven.WorldBug) as raised:
        inst.freeze("x", "Into an installed package.")
    assert "tinyworld-1.0.dist-info" in str(raised.value)
    assert "World(fixtures_dir=...)" in str(raised.value)
    assert leftovers(target / "tinyworld" / "fixtures") == []


def test_a_dist_info_for_another_package_does_not_block_a_freeze(tmp_path: Path) -> None:
    (tmp_path / "other-1.0.dist-info").mkdir()
    (tmp_path / "other-1.0.dist-info" / "RECORD").write_text(
        "other/__init__.py,sha256=x,0\n", encoding="utf-8"
    )
    world = make_world("memos", "memos", fixtures_dir=tmp_path / "mine" / "fixtures")
    with world.instance(now=NOW) as inst:
        inst.freeze("x", "Beside someone else's install.")
    assert leftovers(tmp_path / "mine" / "fixtures") == ["x"]


def test_the_sidecar_model_renders_every_shipped_sidecar_byte_for_byte() -> None:
    import yaml

    root = Path(__file__).resolve().parent.parent
    shipped = sorted(root.glob("worlds/*/src/*/fixtures/*/fixture.yaml"))
    assert len(shipped) >= 5
    for path in shipped:
        text = path.read_text(encoding="utf-8")
        sidecar = sidecars.Sidecar.model_validate(yaml.safe_load(text))
        assert sidecar.render() == text, path
        assert sidecar.fixture(path.parent) == sidecars.load(path.parent)
