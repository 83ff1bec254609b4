"""Write and composite-write calls against another checkout of Seahaven, in the same run.

``run.py``'s ``write`` and ``composite`` cases measure a call against bare
SQLite; this measures the same two calls through the public API against the
code of another checkout (such as a ``git worktree`` of an older commit), so a
change to the call path is a ratio between two versions of it. Each side runs
in a process of its own with its checkout's ``seahaven`` first on the path; the
rounds alternate between the two, so both see the same machine noise, and the
figure is each side's median microseconds a call. Nothing asserts. Run it with

    git worktree add --detach /tmp/old 3641c8b
    .venv/bin/python benchmarks/calls_against.py --against /tmp/old --rounds 9
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from against import Side, load_checkout

NOW = "2026-06-01T09:00:00.000Z"
CASES = ("write", "composite")


def _worlds(work_dir: Path) -> Any:
    """One world with ``run.py``'s two calls: a one-row write, and a write to two stores."""
    import seahaven

    ledger = seahaven.World(
        name="bench_ledger",
        version="1.0.0",
        schema="CREATE TABLE entries (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL) STRICT;",
        state_format="seahaven.state/1",
    )
    host = seahaven.World(
        name="bench_host",
        version="1.0.0",
        schema=(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, total INTEGER NOT NULL) STRICT;"
            "CREATE TABLE memos (id INTEGER PRIMARY KEY, gist TEXT NOT NULL, tag TEXT) STRICT;"
        ),
        state_format="seahaven.state/1",
        work_dir=work_dir,
    )
    host.add_world(ledger, name="ledger")

    @host.tool
    def file_memo(ctx: seahaven.Ctx, memo_id: int, gist: str, tag: str) -> dict[str, int]:
        """File one memo: one row in this store."""
        ctx.db.execute("INSERT INTO memos (id, gist, tag) VALUES (?, ?, ?)", memo_id, gist, tag)
        return {"id": memo_id}

    @host.tool
    def place_order(ctx: seahaven.Ctx, order_id: int, total: int) -> dict[str, int]:
        """Write the order here and its ledger entry in the added store."""
        ctx.db.execute("INSERT INTO orders (id, total) VALUES (?, ?)", order_id, total)
        ctx.worlds.ledger.db.execute(
            "INSERT INTO entries (id, amount) VALUES (?, ?)", order_id, total
        )
        return {"id": order_id}

    return host


def serve_rounds(count: int, checkout: Path | None, storage: str) -> None:
    """The child's side: on each line from stdin, ``count`` calls of each case on a new instance."""
    if checkout is not None:
        load_checkout(checkout)
    import seahaven

    with tempfile.TemporaryDirectory(prefix="seahaven-calls-") as scratch:
        world = _worlds(Path(scratch))
        print(json.dumps({"ready": True, "seahaven": seahaven.__file__}), flush=True)
        for _ in sys.stdin:
            figures: dict[str, float] = {}
            with world.instance(now=NOW, clock_mode="fixed", storage=storage) as inst:
                for key in range(1, 101):  # warm: routes, statement cache, pages
                    inst.call("file_memo", memo_id=-key, gist="a short memo", tag="warm")
                    inst.call("place_order", order_id=-key, total=500)
                started = time.perf_counter()
                for key in range(1, count + 1):
                    inst.call("file_memo", memo_id=key, gist="a short memo", tag=f"t{key}")
                figures["write"] = (time.perf_counter() - started) / count * 1e6
                started = time.perf_counter()
                for key in range(1, count + 1):
                    inst.call("place_order", order_id=key, total=500)
                figures["composite"] = (time.perf_counter() - started) / count * 1e6
            print(json.dumps(figures), flush=True)


def main(argv: list[str]) -> int:
    """Alternate the rounds of each side; print medians and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--count", type=int, default=2000, help="calls of each case a round")
    parser.add_argument("--against", type=Path, help="a checkout whose seahaven to compare with")
    parser.add_argument(
        "--storage",
        choices=("memory", "disk"),
        default="memory",
        help="where the instances keep their stores (named, so both sides use the same)",
    )
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    checkout = arguments.against.resolve() if arguments.against is not None else None
    if arguments.serve is not None:
        serve_rounds(arguments.serve, checkout, arguments.storage)
        return 0
    serving = ["--serve", str(arguments.count), "--storage", arguments.storage]
    sides = [Side("this code", __file__, serving, None)]
    if checkout is not None:
        sides.append(Side(str(checkout), __file__, serving, checkout))
    for side in sides:
        print(f"{side.name}: seahaven from {side.loaded_from}", flush=True)
    figures: dict[str, dict[str, list[float]]] = {
        side.name: {case: [] for case in CASES} for side in sides
    }
    for _ in range(arguments.rounds):
        for side in sides:
            for case, value in side.round().items():
                figures[side.name][case].append(value)
    for side in sides:
        side.close()
    print(
        f"calls ({arguments.storage}): {arguments.count} of each a round, "
        f"medians of {arguments.rounds} rounds; load average {os.getloadavg()[0]:.2f}"
    )
    medians = {
        name: {case: statistics.median(values) for case, values in cases.items()}
        for name, cases in figures.items()
    }
    for case in CASES:
        line = "  ".join(f"{name}: {medians[name][case]:7.1f} us" for name in medians)
        print(f"  {case:<10} {line}")
        if len(sides) == 2:
            this, other = (medians[side.name][case] for side in sides)
            print(f"  {'':<10} ratio (the other's time over this code's): {other / this:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
