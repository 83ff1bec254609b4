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
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-06-01T09:00:00.000Z"
CASES = ("write", "composite")


def _load_checkout(checkout: Path) -> None:
    """Import ``seahaven`` from ``checkout`` ahead of the installed (editable) one."""
    package = checkout / "seahaven"
    spec = importlib.util.spec_from_file_location(
        "seahaven", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["seahaven"] = module
    spec.loader.exec_module(module)


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
        _load_checkout(checkout)
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


class _Side:
    """A process timing calls with one checkout's ``seahaven`` first on the path."""

    def __init__(self, name: str, checkout: Path | None, count: int, storage: str) -> None:
        self.name = name
        command = [sys.executable, __file__, "--serve", str(count), "--storage", storage]
        if checkout is not None:
            command += ["--against", str(checkout)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        self.loaded_from = self._read()["seahaven"]

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.name} side stopped")
        result: dict[str, Any] = json.loads(line)
        return result

    def round(self) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


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
    sides = [_Side("this code", None, arguments.count, arguments.storage)]
    if checkout is not None:
        sides.append(_Side(str(checkout), checkout, arguments.count, arguments.storage))
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
