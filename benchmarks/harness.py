"""What every benchmark case of ``run.py`` shares: ``Result`` (a case's figures and how they
print), timing in alternating rounds (``per_op``, ``alternate``), a scratch directory, a bare
apsw connection set up the way the framework sets up an instance's file, and the memo world.
"""

from __future__ import annotations

import gc
import shutil
import statistics
import tempfile
import time
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


def per_op(operation: Callable[[int], object], count: int) -> float:
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


def alternate(
    framework: Callable[[int], object],
    bare: Callable[[int], object] | None,
    *,
    count: int,
    rounds: int,
) -> tuple[float, float | None]:
    """Median microseconds per call of ``framework`` and ``bare``, timed in alternating rounds."""
    framework_times: list[float] = []
    bare_times: list[float] = []
    for _ in range(rounds):
        framework_times.append(per_op(framework, count))
        if bare is not None:
            bare_times.append(per_op(bare, count))
    return (
        statistics.median(framework_times),
        statistics.median(bare_times) if bare is not None else None,
    )


@contextmanager
def scratch_directory() -> Iterator[Path]:
    """A temporary directory for one case, removed after it."""
    directory = Path(tempfile.mkdtemp(prefix="seahaven-bench-"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def bare_connection(path: Path) -> apsw.Connection:
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


def memo_world(work_dir: Path) -> seahaven.World:
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
