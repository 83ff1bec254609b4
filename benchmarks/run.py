"""Measure the framework against bare SQLite (apsw) doing the same work, in the same run.

Every case times the framework and its bare counterpart in alternating rounds,
so both see the same machine noise, and reports the median of the rounds. A
ratio is bare time divided by framework time: 1.0 would be as fast as bare
SQLite, 0.5 half as fast. Run it with

    .venv/bin/python benchmarks/run.py            # every case
    .venv/bin/python benchmarks/run.py write read  # some cases

It prints one line per case and, with ``--markdown``, a table for the README.
Nothing here asserts: the machines are shared and noisy, so targets are
checked by reading the figures, never by a test. The targets are issue 18's,
written as ratios (docs/performance.md says how).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import apsw

import seahaven
import seahaven.fixtures

NOW = "2031-03-14T08:30:00.000Z"


@dataclass
class Result:
    """One case's figures: times in microseconds, or sizes in KiB when ``unit`` says so."""

    name: str
    framework_us: float
    bare_us: float | None
    target: str
    note: str = ""
    unit: str = "us"

    @property
    def ratio(self) -> float | None:
        if self.bare_us is None:
            return None
        return self.bare_us / self.framework_us

    def figure(self, value: float, markdown: bool = False) -> str:
        unit = "µs" if markdown and self.unit == "us" else self.unit
        if self.unit == "us" and value >= 1000:
            return f"{value / 1000:.2f} ms"
        return f"{value:.1f} {unit}"

    def line(self) -> str:
        bare = self.figure(self.bare_us) if self.bare_us is not None else "-"
        ratio = f"{self.ratio:5.2f}" if self.ratio is not None else "    -"
        return (
            f"{self.name:<44} framework {self.figure(self.framework_us):>11}   bare {bare:>11}   "
            f"ratio {ratio}   target {self.target}{'  ' + self.note if self.note else ''}"
        )


def _per_op(operation: Callable[[int], object], count: int) -> float:
    """Microseconds per call of ``operation`` over ``count`` calls."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for index in range(count):
            operation(index)
        return (time.perf_counter() - start) / count * 1e6
    finally:
        gc.enable()


def _alternate(
    framework: Callable[[int], object],
    bare: Callable[[int], object] | None,
    *,
    count: int,
    rounds: int,
) -> tuple[float, float | None]:
    framework_times: list[float] = []
    bare_times: list[float] = []
    for _ in range(rounds):
        framework_times.append(_per_op(framework, count))
        if bare is not None:
            bare_times.append(_per_op(bare, count))
    return (
        statistics.median(framework_times),
        statistics.median(bare_times) if bare is not None else None,
    )


@contextmanager
def _scratch() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="seahaven-bench-"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _bare_connection(path: Path) -> apsw.Connection:
    """A connection set up the way the framework sets up an instance file."""
    conn = apsw.Connection(str(path))
    for _ in conn.execute(
        "PRAGMA synchronous=OFF; PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON"
    ):
        pass  # APSW runs the next statement only once the previous one's rows are read
    return conn


MEMOS_SCHEMA = (
    "CREATE TABLE memos (id INTEGER PRIMARY KEY, gist TEXT NOT NULL, tag TEXT NOT NULL) STRICT;"
    "CREATE INDEX memos_by_tag ON memos (tag);"
)


def _memo_world(work_dir: Path) -> seahaven.World:
    """One table of tagged memos, with a one-row write tool and a one-row indexed read."""
    world = seahaven.World(
        name="bench_memos",
        version="1.0.0",
        schema=MEMOS_SCHEMA,
        state_format="seahaven.state/1",
        work_dir=work_dir,
    )

    @world.tool
    def file_memo(ctx: seahaven.Ctx, memo_id: int, gist: str, tag: str) -> dict[str, object]:
        """Insert a single tagged memo."""
        ctx.db.execute("INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)", memo_id, gist, tag)
        return {"id": memo_id}

    @world.tool
    def find_memo(ctx: seahaven.Ctx, tag: str) -> dict[str, object] | None:
        """Look a memo up through the tag index."""
        return ctx.db.one("SELECT id, gist FROM memos WHERE tag = ?", tag)

    return world


def case_write(count: int, rounds: int) -> Result:
    """A one-row write tool call against BEGIN; INSERT; COMMIT plus a session changeset."""
    with _scratch() as scratch:
        world = _memo_world(scratch)
        with world.instance(now=NOW, clock_mode="fixed") as inst:
            bare = _bare_connection(scratch / "bare.sqlite")
            bare.execute(MEMOS_SCHEMA)
            counter = iter(range(1, 10**9))
            bare_counter = iter(range(1, 10**9))

            def framework(_: int) -> object:
                key = next(counter)
                return inst.call("file_memo", memo_id=key, gist="a short memo", tag=f"t{key}")

            def bare_write(_: int) -> object:
                key = next(bare_counter)
                session = apsw.Session(bare, "main")
                session.attach()
                bare.execute("BEGIN")
                bare.execute(
                    "INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)",
                    (key, "a short memo", f"t{key}"),
                )
                bare.execute("COMMIT")
                changeset = session.changeset()
                session.close()
                return changeset

            framework_us, bare_us = _alternate(framework, bare_write, count=count, rounds=rounds)
            bare.close()
    return Result("write call (one row)", framework_us, bare_us, ">= 0.66")


def case_read(count: int, rounds: int) -> Result:
    """A one-row indexed read tool call against the bare indexed SELECT."""
    with _scratch() as scratch:
        world = _memo_world(scratch)
        with world.instance(now=NOW, clock_mode="fixed") as inst:
            with inst.bulk() as loading:
                loading.db.executemany(
                    "INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)",
                    [(key, f"memo {key}", f"t{key}") for key in range(1, 10_001)],
                )
            bare = _bare_connection(scratch / "bare.sqlite")
            bare.execute(MEMOS_SCHEMA)
            bare.execute("BEGIN")
            bare.executemany(
                "INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)",
                [(key, f"memo {key}", f"t{key}") for key in range(1, 10_001)],
            )
            bare.execute("COMMIT")

            def framework(index: int) -> object:
                return inst.call("find_memo", tag=f"t{index % 10_000 + 1}")

            def bare_read(index: int) -> object:
                for row in bare.execute(
                    "SELECT id, gist FROM memos WHERE tag = ?", (f"t{index % 10_000 + 1}",)
                ):
                    return row
                return None

            framework_us, bare_us = _alternate(framework, bare_read, count=count, rounds=rounds)
            bare.close()
    return Result("read call (one indexed row)", framework_us, bare_us, ">= 0.20")


def _bare_blank_pair(scratch: Path) -> Callable[[int], object]:
    """What a blank two-store instance is, done by hand: a directory, two built files, removed."""
    schemas = (
        ("orders.sqlite", "CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER) STRICT"),
        ("entries.sqlite", "CREATE TABLE entries (id INTEGER PRIMARY KEY, amount INTEGER) STRICT"),
    )

    def bare_blank(index: int) -> object:
        directory = scratch / f"bare-{index}-{time.perf_counter_ns()}"
        directory.mkdir()
        for name, schema in schemas:
            conn = _bare_connection(directory / name)
            conn.execute(schema)
            conn.close()
        shutil.rmtree(directory)
        return None

    return bare_blank


def case_blank_instance(count: int, rounds: int) -> Result:
    """A blank two-store instance made and destroyed, against building and removing two files."""
    with _scratch() as scratch:
        host = _composite_worlds(scratch)

        def framework(_: int) -> object:
            inst = host.instance(now=NOW, clock_mode="fixed")
            inst.destroy()
            return inst

        framework_us, bare_us = _alternate(
            framework, _bare_blank_pair(scratch), count=count, rounds=rounds
        )
    return Result("blank 2-store instance create+destroy", framework_us, bare_us, "<= 1.15 ms")


_DISK_WRITER = """
import os, sys
path = sys.argv[1]
block = os.urandom(1 << 20)
with open(path, "wb") as handle:
    while True:
        for _ in range(64):
            handle.write(block)
            handle.flush()
            os.fsync(handle.fileno())
        handle.seek(0)
        handle.truncate()
"""


@contextmanager
def _busy_disk(scratch: Path) -> Iterator[None]:
    """Another process writing 1 MiB and syncing it, over and over, on the same disk."""
    writer = subprocess.Popen([sys.executable, "-c", _DISK_WRITER, str(scratch / "busy.bin")])
    try:
        time.sleep(0.5)
        yield
    finally:
        writer.terminate()
        writer.wait()


def case_blank_busy_disk(count: int, rounds: int) -> Result:
    """``blank`` again while another process keeps the disk busy writing and syncing."""
    with _scratch() as scratch:
        host = _composite_worlds(scratch)

        def framework(_: int) -> object:
            inst = host.instance(now=NOW, clock_mode="fixed")
            inst.destroy()
            return inst

        with _busy_disk(scratch):
            framework_us, bare_us = _alternate(
                framework, _bare_blank_pair(scratch), count=count, rounds=rounds
            )
    return Result("blank 2-store create+destroy, disk busy", framework_us, bare_us, "<= 1.15 ms")


STATE_RECORDS = 2000


def _state_instances(scratch: Path) -> tuple[seahaven.Instance, apsw.Connection]:
    """An instance whose change log holds 2,000 records, and a bare file with the same rows."""
    world = _memo_world(scratch)
    inst = world.instance(now=NOW, clock_mode="fixed")
    for key in range(1, STATE_RECORDS + 1):
        inst.call("file_memo", memo_id=key, gist="a short memo", tag=f"t{key}")
    assert len(inst.change_log()) == STATE_RECORDS
    bare = _bare_connection(scratch / "bare.sqlite")
    bare.execute(MEMOS_SCHEMA)
    bare.execute("BEGIN")
    bare.executemany(
        "INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)",
        [(key, "a short memo", f"t{key}") for key in range(1, STATE_RECORDS + 1)],
    )
    bare.execute("COMMIT")
    return inst, bare


def _bare_rows(bare: apsw.Connection) -> list[dict[str, object]]:
    cursor = bare.execute("SELECT id, gist, tag FROM memos ORDER BY id")
    names = [column[0] for column in cursor.get_description()]
    return [dict(zip(names, row, strict=True)) for row in cursor]


def case_state_document(count: int, rounds: int) -> Result:
    """``inst.state()`` over 2,000 records, against reading the same rows out as dicts."""
    with _scratch() as scratch:
        inst, bare = _state_instances(scratch)
        framework_us, bare_us = _alternate(
            lambda _: inst.state(), lambda _: _bare_rows(bare), count=count, rounds=rounds
        )
        inst.destroy()
        bare.close()
    return Result("state() over 2,000 records", framework_us, bare_us, "<= 1.0 ms")


def case_state_json(count: int, rounds: int) -> Result:
    """``inst.state_json()`` over 2,000 records, against reading the rows and encoding them."""
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    with _scratch() as scratch:
        inst, bare = _state_instances(scratch)
        framework_us, bare_us = _alternate(
            lambda _: inst.state_json(),
            lambda _: encode(_bare_rows(bare)),
            count=count,
            rounds=rounds,
        )
        inst.destroy()
        bare.close()
    return Result("state_json() over 2,000 records", framework_us, bare_us, "<= 1.0 ms")


def _fresh_episode(scratch: Path, records: int) -> seahaven.Instance:
    """A new instance whose change log holds ``records`` records, one call each."""
    world = _memo_world(scratch)
    inst = world.instance(now=NOW, clock_mode="fixed")
    for key in range(1, records + 1):
        inst.call("file_memo", memo_id=key, gist="a short memo", tag=f"t{key}")
    return inst


def _fresh_bare(scratch: Path, index: int) -> apsw.Connection:
    bare = _bare_connection(scratch / f"bare-{index}.sqlite")
    bare.execute(MEMOS_SCHEMA)
    for key in range(1, STATE_RECORDS + 1):
        bare.execute("BEGIN")
        bare.execute(
            "INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)", (key, "a short memo", f"t{key}")
        )
        bare.execute("COMMIT")
    return bare


def _first_read(
    read: Callable[[seahaven.Instance], object], count: int, rounds: int
) -> tuple[float, float]:
    """Median of the first ``read`` of fresh 2,000-record episodes, and of the first bare read.

    The collector stays on, as in a harness: the first read of an episode is
    the one a harness makes, and what it allocates is what the collector walks.
    """
    framework_times: list[float] = []
    bare_times: list[float] = []
    with _scratch() as scratch:
        for index in range(max(count, rounds)):
            inst = _fresh_episode(scratch, STATE_RECORDS)
            start = time.perf_counter()
            read(inst)
            framework_times.append((time.perf_counter() - start) * 1e6)
            inst.destroy()
            bare = _fresh_bare(scratch, index)
            start = time.perf_counter()
            _bare_rows(bare)
            bare_times.append((time.perf_counter() - start) * 1e6)
            bare.close()
    return statistics.median(framework_times), statistics.median(bare_times)


def case_first_state(count: int, rounds: int) -> Result:
    """The first ``state()`` of fresh 2,000-record episodes, against reading the rows as dicts."""
    framework_us, bare_us = _first_read(lambda inst: inst.state(), count, rounds)
    return Result("first state() of a 2,000-record episode", framework_us, bare_us, ">= 1.0")


def case_first_state_json(count: int, rounds: int) -> Result:
    """The first ``state_json()`` of fresh 2,000-record episodes, against the rows as dicts."""
    framework_us, bare_us = _first_read(lambda inst: inst.state_json(), count, rounds)
    return Result("first state_json() of a 2,000-record episode", framework_us, bare_us, ">= 4.0")


LAST_STEP = "seahaven.state+last_step/1"


def case_last_step(count: int, rounds: int) -> Result:
    """``state_json`` and ``state`` in the last-step format: 10,000 records against 10.

    The "bare" column is the 10-record log, so the ratio is 1.0 when the read
    costs the same whatever the log's length.
    """
    with _scratch() as scratch:
        long_log = _fresh_episode(scratch, 10_000)
        short_log = _fresh_episode(scratch, 10)

        def read(inst: seahaven.Instance) -> Callable[[int], object]:
            return lambda _: (inst.state_json(LAST_STEP), inst.state(LAST_STEP))

        framework_us, bare_us = _alternate(
            read(long_log), read(short_log), count=count, rounds=rounds
        )
        long_log.destroy()
        short_log.destroy()
    return Result(
        "state+last_step: 10,000 records (bare: 10)",
        framework_us,
        bare_us,
        "~1.0 (flat)",
    )


def _composite_worlds(work_dir: Path) -> seahaven.World:
    ledger = seahaven.World(
        name="bench_ledger",
        version="1.0.0",
        schema="CREATE TABLE entries (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )
    host = seahaven.World(
        name="bench_host",
        version="1.0.0",
        schema="CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
        work_dir=work_dir,
    )
    host.add_world(ledger, name="ledger")

    @host.tool
    def place_order(ctx: seahaven.Ctx, order_id: int, total: int) -> dict[str, int]:
        """Write the order here and its ledger entry in the added store."""
        ctx.db.execute("INSERT INTO orders (id, total) VALUES (?, ?)", order_id, total)
        ctx.worlds.ledger.db.execute(
            "INSERT INTO entries (id, amount) VALUES (?, ?)", order_id, total
        )
        return {"id": order_id}

    return host


def case_composite_write(count: int, rounds: int) -> Result:
    """A host tool writing its own store and an added store through a handle."""
    with _scratch() as scratch:
        host = _composite_worlds(scratch)
        with host.instance(now=NOW, clock_mode="fixed") as inst:
            orders = _bare_connection(scratch / "orders.sqlite")
            orders.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER) STRICT")
            entries = _bare_connection(scratch / "entries.sqlite")
            entries.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, amount INTEGER) STRICT")
            counter = iter(range(1, 10**9))
            bare_counter = iter(range(1, 10**9))

            def framework(_: int) -> object:
                return inst.call("place_order", order_id=next(counter), total=500)

            def bare_pair(_: int) -> object:
                key = next(bare_counter)
                changesets = []
                for conn, sql in (
                    (orders, "INSERT INTO orders (id, total) VALUES (?, ?)"),
                    (entries, "INSERT INTO entries (id, amount) VALUES (?, ?)"),
                ):
                    session = apsw.Session(conn, "main")
                    session.attach()
                    conn.execute("BEGIN")
                    conn.execute(sql, (key, 500))
                    conn.execute("COMMIT")
                    changesets.append(session.changeset())
                    session.close()
                return changesets

            framework_us, bare_us = _alternate(framework, bare_pair, count=count, rounds=rounds)
            orders.close()
            entries.close()
    return Result("composite write (two stores)", framework_us, bare_us, ">= 0.71")


def case_composite_fixture(count: int, rounds: int) -> Result:
    """Creating an instance of a two-store fixture of 10,000 rows a store, against the copy."""
    row_schema = "CREATE TABLE {t} (id INTEGER PRIMARY KEY, payload TEXT NOT NULL) STRICT;"
    with _scratch() as scratch:
        leaves = [
            seahaven.World(
                name=f"bench_leaf_{index}",
                version="1.0.0",
                schema=row_schema.format(t="rows"),
                state_format="seahaven.state/1",
            )
            for index in (1,)
        ]
        root = seahaven.World(
            name="bench_root",
            version="1.0.0",
            schema=row_schema.format(t="rows"),
            state_format="seahaven.state/1",
            fixtures_dir=scratch / "fixtures",
            work_dir=scratch / "work",
        )
        for index, leaf in enumerate(leaves, start=1):
            root.add_world(leaf, name=f"leaf_{index}")
        rows = [(key, f"payload {key:08d} " + "x" * 40) for key in range(1, 10_001)]
        with root.instance(now=NOW, clock_mode="fixed") as inst:
            with inst.bulk() as loading:
                loading.db.executemany("INSERT INTO rows (id, payload) VALUES (?, ?)", rows)
                for name in ("leaf_1",):
                    loading.worlds[name].db.executemany(
                        "INSERT INTO rows (id, payload) VALUES (?, ?)", rows
                    )
            fixture = inst.freeze("big", "Two stores of 10,000 rows each.")
        files = [path for path, _ in fixture.files().values()]
        size = sum(path.stat().st_size for path in files)
        root.instance("big").destroy()  # the first create verifies the hashes, once per process

        created: list[seahaven.Instance] = []

        def framework(_: int) -> object:
            inst = root.instance("big", clock_mode="fixed")
            created.append(inst)
            return inst

        def bare_copy(index: int) -> object:
            target = scratch / f"copy-{index}-{time.perf_counter_ns()}"
            target.mkdir()
            for path in files:
                shutil.copyfile(path, target / path.name)
            return target

        framework_times: list[float] = []
        bare_times: list[float] = []
        for _ in range(rounds):
            framework_times.append(_per_op(framework, count))
            for inst in created:
                inst.destroy()
            created.clear()
            bare_times.append(_per_op(bare_copy, count))
            for leftover in scratch.glob("copy-*"):
                shutil.rmtree(leftover)
    framework_us = statistics.median(framework_times)
    bare_us = statistics.median(bare_times)
    return Result(
        "create from a 2-store fixture (2 x 10,000 rows)",
        framework_us,
        bare_us,
        ">= 0.5 (at most 2x the copy)",
        note=f"files {size / 1e6:.1f} MB",
    )


def _resident_kib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


def _held_kib() -> float:
    """What the process holds: Python's allocations and SQLite's, in KiB."""
    gc.collect()
    return (tracemalloc.get_traced_memory()[0] + apsw.memory_used()) / 1024


def _memory_case(label: str, world: seahaven.World, fixture: str, count: int) -> Result:
    """KiB one idle instance holds (made from ``fixture``, startup run), against bare apsw.

    The bare side opens the same stores the same way (copies of the fixture's
    files, one connection each, the schema read) and holds them open.
    """
    world.instance(fixture).destroy()  # hashing, the sidecar and imports happen once
    tracemalloc.start()
    try:
        before = _held_kib()
        resident = _resident_kib()
        instances = [world.instance(fixture, seed=index) for index in range(count)]
        framework_kib = (_held_kib() - before) / count
        resident_kib = (_resident_kib() - resident) / count
        for inst in instances:
            inst.destroy()
        del instances
        files = [
            path
            for path, _ in seahaven.fixtures.load_all(world.fixtures_dir)[fixture].files().values()
        ]
        with _scratch() as scratch:
            before = _held_kib()
            conns = []
            for index in range(count):
                directory = scratch / str(index)
                directory.mkdir()
                for path in files:
                    shutil.copyfile(path, directory / path.name)
                    conn = _bare_connection(directory / path.name)
                    conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()
                    conns.append(conn)
            bare_kib = (_held_kib() - before) / count
            for conn in conns:
                conn.close()
    finally:
        tracemalloc.stop()
    return Result(
        label,
        framework_kib,
        bare_kib,
        "1,000 in < 1 GiB",
        note=f"resident {resident_kib:.0f} KiB an instance",
        unit="KiB",
    )


def case_memory_one_store(count: int, rounds: int) -> Result:
    """Memory per idle payments instance (one store, from small_shop)."""
    import payments_world

    return _memory_case(
        "memory per idle instance, 1 store (payments)", payments_world.world, "small_shop", count
    )


def case_memory_four_stores(count: int, rounds: int) -> Result:
    """Memory per idle company instance (four stores, from acme)."""
    import company_world

    return _memory_case(
        "memory per idle instance, 4 stores (company)", company_world.world, "acme", count
    )


CASES: dict[str, tuple[Callable[[int, int], Result], int]] = {
    "write": (case_write, 2000),
    "read": (case_read, 5000),
    "composite": (case_composite_write, 2000),
    "state": (case_state_document, 20),
    "state_json": (case_state_json, 20),
    "first_state": (case_first_state, 15),
    "first_state_json": (case_first_state_json, 15),
    "last_step": (case_last_step, 500),
    "fixture": (case_composite_fixture, 20),
    "blank": (case_blank_instance, 100),
    "blank_busy": (case_blank_busy_disk, 100),
    "memory": (case_memory_one_store, 200),
    "memory4": (case_memory_four_stores, 100),
}


def main(argv: list[str]) -> int:
    """Run the chosen cases (all by default) and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", choices=[*CASES, []], default=[])
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds per case")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every case's count")
    parser.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    arguments = parser.parse_args(argv)
    # The bare baselines here copy and open files, so the instances they are held against are
    # made on disk too unless SEAHAVEN_STORAGE says otherwise; benchmarks/storage.py compares
    # the two storages.
    os.environ.setdefault("SEAHAVEN_STORAGE", "disk")
    chosen = arguments.cases or list(CASES)
    print(
        f"seahaven {seahaven.__version__}, SQLite {apsw.sqlite_lib_version()}, "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; "
        f"medians of {arguments.rounds} rounds",
        flush=True,
    )
    results = []
    for name in chosen:
        case, count = CASES[name]
        result = case(max(1, int(count * arguments.scale)), arguments.rounds)
        results.append(result)
        print(result.line(), flush=True)
    if arguments.markdown:
        print("\n| case | framework | bare apsw | ratio | target |\n|---|---|---|---|---|")
        for result in results:
            bare = result.figure(result.bare_us, True) if result.bare_us is not None else "-"
            ratio = f"{result.ratio:.2f}" if result.ratio is not None else "-"
            print(
                f"| {result.name} | {result.figure(result.framework_us, True)} | {bare} | "
                f"{ratio} | {result.target} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
