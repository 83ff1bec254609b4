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
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
from harness import (
    MEMOS_SCHEMA,
    NOW,
    Result,
    alternate,
    bare_connection,
    memo_world,
    per_op,
    scratch_directory,
)
from memory_cases import case_memory_four_stores, case_memory_one_store
from state_cases import (
    STATE_RECORDS,
    case_first_state,
    case_first_state_json,
    case_last_step,
    case_state_document,
    case_state_json,
)

import seahaven
import seahaven.fixtures


def case_write(count: int, rounds: int) -> Result:
    """A one-row write tool call against BEGIN; INSERT; COMMIT plus a session changeset."""
    with scratch_directory() as scratch:
        world = memo_world(scratch)
        with world.instance(now=NOW, clock_mode="fixed") as inst:
            bare = bare_connection(scratch / "bare.sqlite")
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

            framework_us, bare_us = alternate(framework, bare_write, count=count, rounds=rounds)
            bare.close()
    return Result("write call (one row)", framework_us, bare_us, ">= 0.66")


def case_read(count: int, rounds: int) -> Result:
    """A one-row indexed read tool call against the bare indexed SELECT."""
    with scratch_directory() as scratch:
        world = memo_world(scratch)
        with world.instance(now=NOW, clock_mode="fixed") as inst:
            with inst.bulk() as loading:
                loading.db.executemany(
                    "INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)",
                    [(key, f"memo {key}", f"t{key}") for key in range(1, 10_001)],
                )
            bare = bare_connection(scratch / "bare.sqlite")
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

            framework_us, bare_us = alternate(framework, bare_read, count=count, rounds=rounds)
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
            conn = bare_connection(directory / name)
            conn.execute(schema)
            conn.close()
        shutil.rmtree(directory)
        return None

    return bare_blank


def case_blank_instance(count: int, rounds: int) -> Result:
    """A blank two-store instance made and destroyed, against building and removing two files."""
    with scratch_directory() as scratch:
        host = _composite_worlds(scratch)

        def framework(_: int) -> object:
            inst = host.instance(now=NOW, clock_mode="fixed")
            inst.destroy()
            return inst

        framework_us, bare_us = alternate(
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
    with scratch_directory() as scratch:
        host = _composite_worlds(scratch)

        def framework(_: int) -> object:
            inst = host.instance(now=NOW, clock_mode="fixed")
            inst.destroy()
            return inst

        with _busy_disk(scratch):
            framework_us, bare_us = alternate(
                framework, _bare_blank_pair(scratch), count=count, rounds=rounds
            )
    return Result("blank 2-store create+destroy, disk busy", framework_us, bare_us, "<= 1.15 ms")


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
    with scratch_directory() as scratch:
        host = _composite_worlds(scratch)
        with host.instance(now=NOW, clock_mode="fixed") as inst:
            orders = bare_connection(scratch / "orders.sqlite")
            orders.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER) STRICT")
            entries = bare_connection(scratch / "entries.sqlite")
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

            framework_us, bare_us = alternate(framework, bare_pair, count=count, rounds=rounds)
            orders.close()
            entries.close()
    return Result("composite write (two stores)", framework_us, bare_us, ">= 0.71")


def case_composite_fixture(count: int, rounds: int) -> Result:
    """Creating an instance of a two-store fixture of 10,000 rows a store, against the copy."""
    row_schema = "CREATE TABLE {t} (id INTEGER PRIMARY KEY, payload TEXT NOT NULL) STRICT;"
    with scratch_directory() as scratch:
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
            framework_times.append(per_op(framework, count))
            for inst in created:
                inst.destroy()
            created.clear()
            bare_times.append(per_op(bare_copy, count))
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


def _composite_episode(host: seahaven.World, calls: int) -> seahaven.Instance:
    """A new in-memory instance of the two-store world after ``calls`` composite calls."""
    inst = host.instance(now=NOW, clock_mode="fixed", storage="memory")
    for key in range(1, calls + 1):
        inst.call("place_order", order_id=key, total=500)
    return inst


def _bare_composite(calls: int) -> tuple[apsw.Connection, apsw.Connection]:
    """The two stores' rows, written one pair a transaction, in memory as the instance is."""
    orders, entries = apsw.Connection(":memory:"), apsw.Connection(":memory:")
    orders.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL) STRICT")
    entries.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL) STRICT")
    for key in range(1, calls + 1):
        for conn, sql in (
            (orders, "INSERT INTO orders (id, total) VALUES (?, ?)"),
            (entries, "INSERT INTO entries (id, amount) VALUES (?, ?)"),
        ):
            conn.execute("BEGIN")
            conn.execute(sql, (key, 500))
            conn.execute("COMMIT")
    return orders, entries


def _bare_composite_rows(stores: tuple[apsw.Connection, apsw.Connection]) -> list[dict[str, int]]:
    orders, entries = stores
    rows = [{"id": key, "total": total} for key, total in orders.execute("SELECT * FROM orders")]
    rows += [
        {"id": key, "amount": amount} for key, amount in entries.execute("SELECT * FROM entries")
    ]
    return rows


def case_first_state_composite(count: int, rounds: int) -> Result:
    """The first ``state()`` of fresh in-memory episodes of 1,000 composite calls (2,000 records).

    Issue 44's case: every sample is a new episode read once, with the
    collector on, as a harness reads it; the document is freed after the
    timing, as a harness keeps it to grade from (``first_state`` frees it
    inside). The bare side reads the same 2,000 rows out of two fresh
    in-memory databases as dicts.
    """
    calls = STATE_RECORDS // 2
    framework_times: list[float] = []
    bare_times: list[float] = []
    with scratch_directory() as scratch:
        host = _composite_worlds(scratch)
        _composite_episode(host, 1).destroy()  # the first instance pays for the imports
        for _ in range(max(count, rounds)):
            inst = _composite_episode(host, calls)
            start = time.perf_counter()
            document = inst.state()
            framework_times.append((time.perf_counter() - start) * 1e6)
            # Freed outside the timing, as a harness keeps the document to grade from.
            del document
            inst.destroy()
            stores = _bare_composite(calls)
            start = time.perf_counter()
            rows = _bare_composite_rows(stores)
            bare_times.append((time.perf_counter() - start) * 1e6)
            del rows
            for conn in stores:
                conn.close()
    return Result(
        "first state(), 1,000 composite calls, memory",
        statistics.median(framework_times),
        statistics.median(bare_times),
        "< 1.5 ms",
    )


CASES: dict[str, tuple[Callable[[int, int], Result], int]] = {
    "write": (case_write, 2000),
    "read": (case_read, 5000),
    "composite": (case_composite_write, 2000),
    "state": (case_state_document, 20),
    "state_json": (case_state_json, 20),
    "first_state": (case_first_state, 15),
    "first_state_json": (case_first_state_json, 15),
    "first_state_composite": (case_first_state_composite, 15),
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
