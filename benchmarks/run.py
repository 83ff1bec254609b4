"""Measure the framework against bare SQLite (apsw) doing the same work, in the same run.

Every case times the framework and its bare counterpart in alternating rounds,
so both see the same machine noise, and reports the median of the rounds. A
ratio is bare time divided by framework time: 1.0 would be as fast as bare
SQLite, 0.5 half as fast. Run it with

    .venv/bin/python benchmarks/run.py            # every case
    .venv/bin/python benchmarks/run.py write read  # some cases

It prints one line per case and, with ``--markdown``, a table for the README.
Nothing here asserts: the machines are shared and noisy, so targets are
checked by reading the figures, never by a test.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import apsw

import seahaven

NOW = "2031-03-14T08:30:00.000Z"


@dataclass
class Result:
    """One case's figures."""

    name: str
    framework_us: float
    bare_us: float | None
    target: str
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.bare_us is None:
            return None
        return self.bare_us / self.framework_us

    def line(self) -> str:
        bare = f"{self.bare_us:9.1f} us" if self.bare_us is not None else "        -   "
        ratio = f"{self.ratio:5.2f}" if self.ratio is not None else "    -"
        return (
            f"{self.name:<34} framework {self.framework_us:9.1f} us   bare {bare}   "
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
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA foreign_keys=ON"
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
    return Result("write call (one row)", framework_us, bare_us, ">= 0.55")


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
    return Result("read call (one indexed row)", framework_us, bare_us, ">= 0.12")


def case_blank_instance(count: int, rounds: int) -> Result:
    """A blank instance made and destroyed, against creating, building and removing a file."""
    with _scratch() as scratch:
        world = _memo_world(scratch)

        def framework(_: int) -> object:
            inst = world.instance(now=NOW, clock_mode="fixed")
            inst.destroy()
            return inst

        def bare_blank(index: int) -> object:
            directory = scratch / f"bare-{index}-{time.perf_counter_ns()}"
            directory.mkdir()
            conn = _bare_connection(directory / "state.sqlite")
            conn.execute(MEMOS_SCHEMA)
            conn.close()
            shutil.rmtree(directory)
            return None

        framework_us, bare_us = _alternate(framework, bare_blank, count=count, rounds=rounds)
    return Result("blank instance create+destroy", framework_us, bare_us, "(measured)")


def case_state_document(count: int, rounds: int) -> Result:
    """``inst.state()`` over 10,000 change-log records."""
    with _scratch() as scratch:
        world = _memo_world(scratch)
        with world.instance(now=NOW, clock_mode="fixed") as inst:
            for key in range(1, 10_001):
                inst.call("file_memo", memo_id=key, gist="a short memo", tag=f"t{key}")
            assert len(inst.change_log()) == 10_000
            framework_us, _ = _alternate(
                lambda _: inst.state(), None, count=max(1, count // 1000), rounds=rounds
            )
    return Result(
        "state() over 10,000 records",
        framework_us,
        None,
        "< 20 ms",
        note=f"= {framework_us / 1000:.1f} ms",
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
    return Result("composite write (two stores)", framework_us, bare_us, ">= 0.45")


def case_composite_fixture(count: int, rounds: int) -> Result:
    """Creating an instance of a three-node fixture of 10,000 rows a node, against the copy."""
    row_schema = "CREATE TABLE {t} (id INTEGER PRIMARY KEY, payload TEXT NOT NULL) STRICT;"
    with _scratch() as scratch:
        leaves = [
            seahaven.World(
                name=f"bench_leaf_{index}",
                version="1.0.0",
                schema=row_schema.format(t="rows"),
                state_format="seahaven.state/1",
            )
            for index in (1, 2)
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
                for name in ("leaf_1", "leaf_2"):
                    loading.worlds[name].db.executemany(
                        "INSERT INTO rows (id, payload) VALUES (?, ?)", rows
                    )
            fixture = inst.freeze("big", "Three stores of 10,000 rows each.")
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
        "create from 3-node fixture (30k rows)",
        framework_us,
        bare_us,
        "framework <= 2x copy (ratio >= 0.5)",
        note=f"files {size / 1e6:.1f} MB",
    )


CASES: dict[str, tuple[Callable[[int, int], Result], int]] = {
    "write": (case_write, 2000),
    "read": (case_read, 5000),
    "blank": (case_blank_instance, 100),
    "state": (case_state_document, 5000),
    "composite": (case_composite_write, 2000),
    "fixture": (case_composite_fixture, 20),
}


def main(argv: list[str]) -> int:
    """Run the chosen cases (all by default) and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", choices=[*CASES, []], default=[])
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds per case")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every case's count")
    parser.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    arguments = parser.parse_args(argv)
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
            bare = f"{result.bare_us:.1f} µs" if result.bare_us is not None else "-"
            ratio = f"{result.ratio:.2f}" if result.ratio is not None else result.note.strip("= ")
            print(
                f"| {result.name} | {result.framework_us:.1f} µs | {bare} | {ratio} | "
                f"{result.target} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
