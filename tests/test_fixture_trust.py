"""What a fixture must be before it is copied, however it was tampered with; how freezing fails.

Each test here is a way a fixture directory can lie: a sidecar whose recorded hash was edited
after the file was verified once, a state file with a schema its sidecar does not record, a
directory or sidecar that is a link to somewhere else, a rollback journal left beside a file.
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
import yaml

import seahaven
from seahaven import fixtures
from seahaven.fixtures import preparation, verification
from seahaven.fixtures import sidecar as sidecars
from seahaven.stores import workdir

NOW = "2026-06-01T09:00:00.000Z"


def make_world(tmp_path: Path, name: str = "ledger", **options: Any) -> seahaven.World:
    options.setdefault("fixtures_dir", tmp_path / "fixtures")
    options.setdefault("work_dir", tmp_path / "work")
    return seahaven.World(
        name=name,
        version="1.0.0",
        schema="CREATE TABLE entries (id TEXT PRIMARY KEY, cents INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
        **options,
    )


def freeze_rows(world: seahaven.World, fixture_id: str, rows: int = 3) -> fixtures.Fixture:
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        with inst.bulk() as ctx:
            ctx.db.executemany(
                "INSERT INTO entries (id, cents) VALUES (?, ?)",
                [(f"e{n}", n * 100) for n in range(rows)],
            )
        return inst.freeze(fixture_id, "A few ledger entries.")


def rewrite_sidecar(fixture: fixtures.Fixture, **changes: Any) -> None:
    sidecar = fixture.directory / sidecars.SIDECAR
    fields = yaml.safe_load(sidecar.read_text(encoding="utf-8"))
    fields.update(changes)
    sidecar.write_text(yaml.safe_dump(fields, sort_keys=False), encoding="utf-8")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def no_instance_left(tmp_path: Path) -> bool:
    work = tmp_path / "work"
    return not work.exists() or not any(work.iterdir())


# --- 1: the verification cache --------------------------------------------------------------------


def test_a_forged_file_sha256_is_noticed_after_the_file_was_verified_once(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    with world.instance("books"):
        pass
    forged = "0" * 64
    rewrite_sidecar(fixture, file_sha256=forged)

    with pytest.raises(seahaven.WorldBug, match="does not match its file_sha256"):
        world.instance("books")
    assert no_instance_left(tmp_path)
    with pytest.raises(seahaven.WorldBug, match="does not match its file_sha256"):
        fixtures.verify(fixtures.load(fixture.directory))


def test_a_forged_node_hash_is_noticed_after_the_file_was_verified_once(tmp_path: Path) -> None:
    world = make_world(tmp_path, name="office")
    world.add_world(make_world(tmp_path, name="till"), name="till")
    fixture = freeze_rows(world, "shop")
    with world.instance("shop"):
        pass
    sidecar = fixture.directory / sidecars.SIDECAR
    fields = yaml.safe_load(sidecar.read_text(encoding="utf-8"))
    fields["nodes"][0]["file_sha256"] = "f" * 64
    sidecar.write_text(yaml.safe_dump(fields, sort_keys=False), encoding="utf-8")

    with pytest.raises(seahaven.WorldBug, match=r"node 'till' .* does not match its file_sha256"):
        world.instance("shop")


# --- 2: a file's schema is checked, not taken on trust --------------------------------------------


def add_table_and_rehash(fixture: fixtures.Fixture) -> None:
    """Give the state file an extra table and record the new file's hash, as a forger would."""
    file = fixture.state_path
    file.chmod(0o644)
    conn = apsw.Connection(str(file))
    conn.execute("CREATE TABLE smuggled (id INTEGER PRIMARY KEY)")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    rewrite_sidecar(fixture, file_sha256=sha256(file))


def test_a_state_file_with_another_schema_and_a_recomputed_hash_is_refused(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    add_table_and_rehash(fixture)

    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("books")
    message = str(raised.value)
    assert "node 'main' (state.sqlite)" in message
    assert "schema" in message and "regenerate" in message
    assert no_instance_left(tmp_path)
    with pytest.raises(seahaven.WorldBug, match="schema"):
        fixtures.verify(fixtures.load(fixture.directory))


def test_the_schema_is_read_once_and_remembered_with_the_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path)
    freeze_rows(world, "books")
    opened: list[str] = []
    real = verification.file_schema_hash

    def counted(path: Path) -> str:
        opened.append(path.name)
        return real(path)

    monkeypatch.setattr(verification, "file_schema_hash", counted)
    for _ in range(3):
        with world.instance("books"):
            pass
    assert opened == ["state.sqlite"]


# --- 3: unsafe shapes -----------------------------------------------------------------------------


# Creation remembers what passed for one sealing of a world (``after_a_first_instance``): a
# fixture that passed once and is then swapped for a link is refused all the same.


@pytest.mark.parametrize("after_a_first_instance", [False, True])
def test_a_symlinked_fixture_directory_is_refused(
    tmp_path: Path, after_a_first_instance: bool
) -> None:
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    if after_a_first_instance:
        with world.instance("books"):
            pass
    # The real fixture moves out of fixtures/, and a link takes its place.
    elsewhere = tmp_path / "elsewhere"
    shutil.move(str(fixture.directory), str(elsewhere))
    (tmp_path / "fixtures" / "books").symlink_to(elsewhere, target_is_directory=True)

    with pytest.raises(seahaven.WorldBug, match=r"fixture 'books'.* is a symbolic link"):
        world.instance("books")
    assert no_instance_left(tmp_path)
    with pytest.raises(seahaven.WorldBug, match="symbolic link"):
        fixtures.verify(fixtures.load(tmp_path / "fixtures" / "books"))


@pytest.mark.parametrize("after_a_first_instance", [False, True])
def test_a_symlinked_sidecar_is_refused(tmp_path: Path, after_a_first_instance: bool) -> None:
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    if after_a_first_instance:
        with world.instance("books"):
            pass
    sidecar = fixture.directory / sidecars.SIDECAR
    kept = tmp_path / "kept.yaml"
    shutil.copyfile(sidecar, kept)
    sidecar.unlink()
    sidecar.symlink_to(kept)

    with pytest.raises(seahaven.WorldBug, match=r"fixture\.yaml is a symbolic link"):
        world.instance("books")
    assert no_instance_left(tmp_path)


@pytest.mark.parametrize("content", [b"", b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + bytes(504)])
def test_a_rollback_journal_beside_a_state_file_is_refused(tmp_path: Path, content: bytes) -> None:
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    with world.instance("books"):
        pass
    journal = fixture.directory / "state.sqlite-journal"
    journal.write_bytes(content)

    with pytest.raises(seahaven.WorldBug, match=r"state\.sqlite-journal file beside it"):
        world.instance("books")
    assert no_instance_left(tmp_path)
    journal.unlink()
    with world.instance("books"):
        pass


# Creation remembers what passed: a state file rewritten in place, or swapped for a link, after
# it passed is refused all the same.


@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_a_state_file_rewritten_after_a_first_instance_is_refused(
    tmp_path: Path, storage: str
) -> None:
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    with world.instance("books", storage=storage):
        pass
    fixture.state_path.chmod(0o644)
    with open(fixture.state_path, "r+b") as handle:
        handle.seek(-100, os.SEEK_END)
        handle.write(b"\x01")

    with pytest.raises(seahaven.WorldBug, match="does not match its file_sha256"):
        world.instance("books", storage=storage)
    assert no_instance_left(tmp_path)


def test_a_state_file_swapped_for_a_link_after_a_first_instance_is_refused(
    tmp_path: Path,
) -> None:
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    with world.instance("books"):
        pass
    kept = tmp_path / "kept.sqlite"
    shutil.copyfile(fixture.state_path, kept)
    fixture.state_path.unlink()
    fixture.state_path.symlink_to(kept)

    with pytest.raises(seahaven.WorldBug, match="is a symbolic link"):
        world.instance("books")
    assert no_instance_left(tmp_path)


# A fixture whose directory has not changed for a while is checked again by three lstat calls
# (directory, sidecar, state file): a journal appearing beside a file changes the directory's
# stamps, so it is not looked for by name. One frozen a moment ago is looked for by name until
# its directory's stamps are older than any file system's clock tick.


def count_lstat(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = os.lstat

    def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        seen.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", counted)
    return seen


def test_a_settled_fixture_is_checked_again_by_three_lstat_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    with world.instance("books", storage="memory"):
        pass
    seen = count_lstat(monkeypatch)
    with world.instance("books", storage="memory"):
        pass
    # Frozen a moment ago: every journal is looked for by name.
    assert len(seen) == 6
    # Once the directory's stamps are old enough, the next check settles it, and from then on
    # the directory's own stamps stand for its entries.
    monkeypatch.setattr(preparation, "_SETTLED_NS", -1)
    with world.instance("books", storage="memory"):
        pass
    seen.clear()
    with world.instance("books", storage="memory"):
        pass
    assert sorted(seen) == sorted(
        [str(fixture.directory), str(fixture.directory / sidecars.SIDECAR), str(fixture.state_path)]
    )


@pytest.mark.parametrize("suffix", verification.COMPANION_SUFFIXES)
@pytest.mark.parametrize("storage", ["memory", "disk"])
def test_a_journal_beside_a_settled_fixture_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str, storage: str
) -> None:
    monkeypatch.setattr(preparation, "_SETTLED_NS", -1)
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    with world.instance("books", storage=storage):
        pass
    # Past the clock tick the freeze's last change fell in, which a real fixture's age assures.
    time.sleep(0.05)
    journal = fixture.directory / f"state.sqlite{suffix}"
    journal.write_bytes(b"")

    with pytest.raises(seahaven.WorldBug, match=rf"state\.sqlite{suffix} file beside it"):
        world.instance("books", storage=storage)
    assert no_instance_left(tmp_path)
    journal.unlink()
    with world.instance("books", storage=storage):
        pass


# --- 13: the advice names a fix that works --------------------------------------------------------


def test_a_tampered_file_is_refused_with_a_fix_that_works(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    fixture = freeze_rows(world, "books")
    fixture.state_path.chmod(0o644)
    with open(fixture.state_path, "r+b") as handle:
        handle.seek(-100, os.SEEK_END)
        handle.write(b"\x01")

    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("books")
    message = str(raised.value)
    assert "fork it, change the fork" not in message
    assert "restore" in message and "regenerate" in message
    # Forking is what the old advice said; it refuses the same fixture.
    with pytest.raises(seahaven.WorldBug, match="file_sha256"):
        world.instance("books")


# --- 18: the missing-fixture error lists what there is --------------------------------------------


def test_a_missing_fixture_error_lists_the_fixtures_that_exist(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    freeze_rows(world, "books")
    freeze_rows(world, "alpha")
    with pytest.raises(seahaven.WorldBug) as raised:
        world.instance("bokos")
    assert "it has alpha, books" in str(raised.value)


def test_a_missing_fixture_error_says_when_there_are_none(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    with pytest.raises(seahaven.WorldBug, match="it has no fixtures yet"):
        world.instance("books")


# --- 10: stale pending directories ----------------------------------------------------------------


def dead_mark() -> str:
    """The mark a process that no longer runs would have left: a pid nothing holds."""
    pid = 2**22 + 12345
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return f"{pid}-1"
        except PermissionError:
            pass
        pid += 1


def test_a_freeze_removes_pending_directories_left_by_dead_processes(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    folder = tmp_path / "fixtures"
    folder.mkdir()
    stale = folder / f".pending-{dead_mark()}-books-0a1b2c3d"
    stale.mkdir()
    (stale / "state.sqlite").write_bytes(b"half")
    live = folder / f".pending-{workdir.process_mark()}-other-0a1b2c3d"
    live.mkdir()
    unknown = folder / ".pending-notes-0a1b2c3d"
    unknown.mkdir()

    freeze_rows(world, "books")
    assert not stale.exists()
    # A live process's pending directory may be a freeze in progress; an unparsable one too.
    assert live.is_dir() and unknown.is_dir()
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == ["books"]


def test_a_pending_directory_carries_the_mark_of_the_process_writing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world(tmp_path)
    seen: list[str] = []
    real = sidecars.Sidecar.render

    def spy(sidecar: sidecars.Sidecar) -> str:
        seen.extend(p.name for p in (tmp_path / "fixtures").iterdir())
        return real(sidecar)

    monkeypatch.setattr(sidecars.Sidecar, "render", spy)
    freeze_rows(world, "books")
    [pending] = seen
    assert pending.startswith(f".pending-{workdir.process_mark()}-books-")


# --- 6: a full disk while freezing ----------------------------------------------------------------


@pytest.mark.skipif(not hasattr(signal, "SIGXFSZ"), reason="needs POSIX file-size limits")
def test_freezing_onto_a_full_disk_is_a_world_bug_and_leaves_nothing(tmp_path: Path) -> None:
    world = make_world(tmp_path)
    with world.instance(now=NOW, clock_mode="fixed") as inst:
        with inst.bulk() as ctx:
            ctx.db.executemany(
                "INSERT INTO entries (id, cents) VALUES (?, ?)",
                [(f"e{n}-{'x' * 200}", n) for n in range(2000)],
            )
        # Everything committed is in the file already, so only the frozen copy is written below.
        inst.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        # Writing past the limit fails as a full disk does, with no signal to stop the process.
        previous_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, hard))
        try:
            with pytest.raises(seahaven.WorldBug) as raised:
                inst.freeze("books", "Too big for the disk.")
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
            signal.signal(signal.SIGXFSZ, previous_handler)
    message = str(raised.value)
    assert "nothing was frozen" in message
    assert "fixtures_dir" in message
    assert list((tmp_path / "fixtures").iterdir()) == []
