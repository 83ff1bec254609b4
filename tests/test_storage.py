"""Storage: an instance in memory writes nothing to disk and behaves as one on disk does."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import apsw
import pytest

import seahaven
from seahaven.stores import images
from seahaven.stores import storage as storage_module

NOW = "2026-06-01T09:00:00.000Z"


def make_world(name: str, table: str, **options: Any) -> seahaven.World:
    world = seahaven.World(
        name=name,
        version="1.0.0",
        schema=f"CREATE TABLE {table} (id TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0) STRICT;",
        state_format="seahaven.state/1",
        **options,
    )

    @world.tool
    def put(ctx: seahaven.Ctx, id: str, n: int = 0) -> dict[str, Any]:
        """Insert or replace a row."""
        ctx.db.execute(f"INSERT OR REPLACE INTO {table} (id, n) VALUES (?, ?)", id, n)
        return {"id": id, "n": n}

    return world


def composite(tmp_path: Path) -> seahaven.World:
    world = make_world("shop", "items", fixtures_dir=tmp_path / "fixtures", work_dir=tmp_path / "w")
    world.add_world(make_world("till", "sales"), name="till", tool_prefix="till_")
    return world


def freeze(world: seahaven.World, fixture_id: str) -> seahaven.fixtures.Fixture:
    with world.instance(now=NOW, clock_mode="fixed", storage="disk") as inst:
        with inst.bulk() as ctx:
            ctx.db.execute("INSERT INTO items (id, n) VALUES ('a', 1), ('b', 2)")
            ctx.worlds.till.db.execute("INSERT INTO sales (id, n) VALUES ('s', 5)")
        return inst.freeze(fixture_id, "Two items and a sale.")


def files_under(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*")) if directory.exists() else []


def test_an_instance_in_memory_writes_nothing_and_has_no_files(tmp_path: Path) -> None:
    world = composite(tmp_path)
    freeze(world, "base")
    before = files_under(tmp_path)
    with world.instance("base", storage="memory", setup_sql="UPDATE items SET n = 9") as inst:
        assert inst.storage == "memory"
        inst.call("put", id="c", n=3)
        inst.call("till_put", id="t", n=4)
        assert files_under(tmp_path) == before
        with pytest.raises(seahaven.WorldBug, match="storage='disk'"):
            _ = inst.state_path
        with pytest.raises(seahaven.WorldBug, match="freeze"):
            _ = inst.directory
    assert files_under(tmp_path) == before


def test_memory_and_disk_read_and_record_the_same(tmp_path: Path) -> None:
    world = composite(tmp_path)
    freeze(world, "base")
    seen: dict[str, Any] = {}
    for where in ("memory", "disk"):
        with world.instance(
            "base",
            storage=where,
            seed=3,
            clock_mode="fixed",
            setup_sql="UPDATE items SET n = n + 10",
        ) as inst:
            reader = inst.inspect()
            first = reader.rows("SELECT id, n FROM items ORDER BY id")
            inst.call("put", id="a", n=100)
            inst.call("till_put", id="s2", n=7)
            # The reader sees each commit, the attached store's too.
            after = reader.rows("SELECT id, n FROM items ORDER BY id")
            sales = reader.rows("SELECT id, n FROM till.sales ORDER BY id")
            with inst.bulk() as ctx:
                ctx.db.execute("DELETE FROM items WHERE id = 'b'")
                during = reader.rows("SELECT id FROM items ORDER BY id")
            seen[where] = {
                "first": first,
                "after": after,
                "sales": sales,
                "during": during,
                "end": reader.rows("SELECT id FROM items ORDER BY id"),
                "log": [record.to_dict() for record in inst.change_log()],
                "state": inst.state_json().replace(inst.id, "<id>"),
            }
    assert seen["memory"]["first"] == [{"id": "a", "n": 11}, {"id": "b", "n": 12}]
    assert seen["memory"]["after"] == [{"id": "a", "n": 100}, {"id": "b", "n": 12}]
    assert seen["memory"]["sales"] == [{"id": "s", "n": 5}, {"id": "s2", "n": 7}]
    assert seen["memory"]["during"] == [{"id": "a"}, {"id": "b"}]
    assert seen["memory"]["end"] == [{"id": "a"}]
    assert seen["memory"] == seen["disk"]


def test_a_reader_of_an_instance_in_memory_refuses_writes(tmp_path: Path) -> None:
    world = composite(tmp_path)
    with world.instance(storage="memory") as inst:
        with pytest.raises(seahaven.DbError):
            inst.inspect().execute("INSERT INTO items (id) VALUES ('x')")
        assert inst.inspect().rows("SELECT id FROM items") == []


def test_a_reader_waits_for_a_call_in_another_thread_and_sees_its_commit(tmp_path: Path) -> None:
    world = make_world("slow", "rows", work_dir=tmp_path)
    entered, release = threading.Event(), threading.Event()

    @world.tool
    def hold(ctx: seahaven.Ctx) -> None:
        """Write, then wait to be let go."""
        ctx.db.execute("INSERT INTO rows (id) VALUES ('held')")
        entered.set()
        release.wait(10)

    with world.instance(storage="memory") as inst:
        reader = inst.inspect()
        worker = threading.Thread(target=inst.call, args=("hold",))
        worker.start()
        entered.wait(10)
        answer: list[Any] = []
        reading = threading.Thread(target=lambda: answer.append(reader.rows("SELECT id FROM rows")))
        reading.start()
        reading.join(0.2)
        assert answer == [], "a reader never sees a call half way"
        release.set()
        worker.join(10)
        reading.join(10)
        assert answer == [[{"id": "held"}]]


def test_freezing_in_memory_writes_the_bytes_freezing_on_disk_does(tmp_path: Path) -> None:
    world = composite(tmp_path)
    freeze(world, "base")
    frozen = {}
    for where in ("memory", "disk"):
        with world.instance("base", storage=where, clock_mode="fixed") as inst:
            inst.call("put", id="z", n=26)
            fixture = inst.freeze(f"from-{where}", "One more item.")
        frozen[where] = {path: file.read_bytes() for path, (file, _) in fixture.files().items()}
    assert frozen["memory"] == frozen["disk"]
    with world.instance("from-memory", storage="memory") as inst:
        assert inst.inspect().one("SELECT n FROM items WHERE id = 'z'") == {"n": 26}


def test_a_changed_fixture_file_is_never_served_from_the_cache(tmp_path: Path) -> None:
    world = composite(tmp_path)
    fixture = freeze(world, "base")
    with world.instance("base", storage="memory"):
        pass
    state = fixture.state_path
    state.chmod(0o644)
    data = bytearray(state.read_bytes())
    data[len(data) - 100] ^= 0x01
    state.write_bytes(bytes(data))
    with pytest.raises(seahaven.WorldBug, match="file_sha256"):
        world.instance("base", storage="memory")


def test_the_image_cache_is_bounded_least_recently_used_first_out(tmp_path: Path) -> None:
    world = make_world("many", "rows", fixtures_dir=tmp_path / "fixtures", work_dir=tmp_path / "w")
    sizes = []
    for number in range(3):
        with world.instance(now=NOW, storage="disk") as inst:
            with inst.bulk() as ctx:
                ctx.db.execute("INSERT INTO rows (id, n) VALUES (?, ?)", f"r{number}", number)
            sizes.append(inst.freeze(f"f{number}", "One row.").state_path.stat().st_size)
    storage_module.set_image_cache_limit(0)
    try:
        assert storage_module.cached_image_bytes() == 0
        storage_module.set_image_cache_limit(sizes[0] * 2)
        for number in range(3):
            with world.instance(f"f{number}", storage="memory") as inst:
                assert inst.inspect().one("SELECT n FROM rows") == {"n": number}
        assert storage_module.cached_image_bytes() == sizes[1] + sizes[2]
        # An image larger than the whole cache is used, and kept by none.
        storage_module.set_image_cache_limit(sizes[0] - 1)
        with world.instance("f0", storage="memory") as inst:
            assert inst.inspect().one("SELECT n FROM rows") == {"n": 0}
        assert storage_module.cached_image_bytes() == 0
    finally:
        storage_module.set_image_cache_limit(256 * 1024 * 1024)


def test_a_write_ahead_image_is_marked_for_a_rollback_journal() -> None:
    header = bytearray(100)
    header[18:20] = b"\x02\x02"
    assert storage_module.rollback_image(bytes(header))[18:20] == b"\x01\x01"
    assert storage_module.rollback_image(b"short") == b"short"


def test_the_storage_is_checked_and_the_default_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = make_world("plain", "rows", work_dir=tmp_path)
    with pytest.raises(seahaven.WorldBug, match="'memory' or 'disk'"):
        world.instance(storage="tape")  # type: ignore[arg-type]
    monkeypatch.setenv("SEAHAVEN_STORAGE", "disk")
    with world.instance() as inst:
        assert inst.storage == "disk"
        assert inst.state_path.is_file()
    monkeypatch.setenv("SEAHAVEN_STORAGE", "memory")
    with world.instance() as inst:
        assert inst.storage == "memory"
    monkeypatch.setenv("SEAHAVEN_STORAGE", "floppy")
    with pytest.raises(seahaven.WorldBug, match="SEAHAVEN_STORAGE"):
        world.instance()
    monkeypatch.delenv("SEAHAVEN_STORAGE")
    with world.instance() as inst:
        assert inst.storage == storage_module.DEFAULT_STORAGE
    assert os.listdir(tmp_path) == []


def test_the_fixture_image_is_the_verified_file(tmp_path: Path) -> None:
    world = composite(tmp_path)
    fixture = freeze(world, "base")
    data = fixture.state_path.read_bytes()
    image = storage_module.fixture_image(fixture.state_path, hashlib.sha256(data).hexdigest())
    assert image[:18] == data[:18] and image[20:] == data[20:]
    with pytest.raises(seahaven.WorldBug, match="file_sha256"):
        storage_module.fixture_image(fixture.state_path, "0" * 64)


# An outside tool: another process, with Python's own sqlite3, reading a file read-only and
# giving up at once when the file is locked.
_OUTSIDE_READER = """
import sqlite3, sys
try:
    conn = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=0)
    print(conn.execute("SELECT count(*) FROM " + sys.argv[2]).fetchone()[0])
except sqlite3.OperationalError as error:
    print(error)
"""


def read_from_outside(file: Path, table: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _OUTSIDE_READER, str(file), table],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_an_outside_tool_reads_a_live_instance_once_inspect_has_shared_its_files(
    tmp_path: Path,
) -> None:
    world = composite(tmp_path)
    with world.instance(storage="disk") as inst:
        till = inst.directory / "state.till.sqlite"
        # Before its first use a store holds no lock.
        assert read_from_outside(inst.state_path, "items") == "0"
        inst.call("put", id="a", n=1)
        inst.call("till_put", id="t", n=2)
        # From its first use, each store's own connection keeps its file to itself.
        assert read_from_outside(inst.state_path, "items") == "database is locked"
        assert read_from_outside(till, "sales") == "database is locked"
        # inst.query() reads on the store's own connection, and shares nothing.
        assert inst.query("SELECT count(*) AS n FROM items") == [{"n": 1}]
        assert read_from_outside(inst.state_path, "items") == "database is locked"
        # The first inspect() switches every store to the write-ahead log, for good.
        inst.inspect()
        assert read_from_outside(inst.state_path, "items") == "1"
        assert read_from_outside(till, "sales") == "1"
        inst.call("put", id="b", n=3)
        assert read_from_outside(inst.state_path, "items") == "2"


def test_a_store_in_memory_is_loaded_with_room_to_grow_which_no_image_of_it_shows(
    tmp_path: Path,
) -> None:
    # SQLite's in-memory database reallocates its whole buffer, at twice the size, for the first
    # page written past the image it was given; a fixture's image is loaded with room to grow.
    # The room is a sixteenth of the image at most: the fixture holds 400 KB of rows.
    world = composite(tmp_path)
    with world.instance(now=NOW, clock_mode="fixed", storage="disk") as inst:
        with inst.bulk() as ctx:
            for number in range(200):
                ctx.db.execute(
                    "INSERT INTO items (id, n) VALUES (?, ?)", f"{number:03d}-" + "y" * 1000, number
                )
        fixture = inst.freeze("base", "Two hundred long items.")
    size = fixture.state_path.stat().st_size
    room = images.room_for(fixture.state_path.read_bytes())
    assert 0 < room <= images.ROOM_BYTES
    with world.instance("base", storage="memory") as inst:
        conn = inst.calls.runtimes[0].conn
        assert len(conn.serialize("main")) == size + room
        pages = conn.execute("PRAGMA page_count").fetchall()[0][0]
        for number in range(4):
            inst.call("put", id=f"long-{number:02d}-" + "x" * 1000, n=number)
        grown = conn.execute("PRAGMA page_count").fetchall()[0][0]
        assert pages < grown and grown * 4096 <= size + room
        assert len(conn.serialize("main")) == size + room
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        # Past the room, SQLite makes more as it always did.
        for number in range(4, 40):
            inst.call("put", id=f"long-{number:02d}-" + "x" * 1000, n=number)
        grown = conn.execute("PRAGMA page_count").fetchall()[0][0]
        assert grown * 4096 > size + room
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        # What a snapshot keeps, and a freeze writes, is the database alone.
        snapshot = inst.snapshot()
        assert [len(store.image) for store in snapshot.stores] == [
            grown * 4096,
            inst.calls.runtimes[1].conn.execute("PRAGMA page_count").fetchall()[0][0] * 4096,
        ]
        grown_rows = inst.query("SELECT count(*) AS n FROM items")
        frozen = inst.freeze("grown", "Forty long items more.")
    with snapshot.restore() as restored:
        assert restored.query("SELECT count(*) AS n FROM items") == grown_rows
    # A freeze writes with VACUUM INTO: the database alone, compacted.
    written = frozen.state_path.read_bytes()
    assert images.recorded_size(written) == len(written) <= grown * 4096


def test_an_image_whose_header_does_not_record_its_size_is_loaded_as_it_is() -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t (x); INSERT INTO t VALUES (zeroblob(2000000))")
    image = conn.serialize("main")
    assert images.with_room(image) == image + bytes(images.ROOM_BYTES)
    # A change counter the page count was not written with: SQLite takes the file's size.
    stale = bytearray(image)
    stale[95] ^= 0xFF
    assert images.with_room(bytes(stale)) == bytes(stale)


def test_an_image_gains_room_of_a_sixteenth_of_it_at_most_in_whole_pages() -> None:
    # Copying a small image again costs little; an idle instance holds at most 1/16 more.
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t (x)")
    small = conn.serialize("main")
    assert images.room_for(small) == 0
    assert images.with_room(small) is small
    conn.execute("INSERT INTO t VALUES (zeroblob(300000))")
    middling = conn.serialize("main")
    room = images.room_for(middling)
    assert 0 < room <= len(middling) // 16 and room % 4096 == 0
    assert images.with_room(middling) == middling + bytes(room)
