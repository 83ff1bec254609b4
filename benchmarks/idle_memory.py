"""Memory per idle instance, this checkout against another (``main``), in the same run.

Each measurement is a fresh process of the checkout's own interpreter (its
``.venv``), which imports that checkout's seahaven and worlds: it makes one
instance to warm up (hashing, imports), then ``--count`` more, each from the
fixture with its startup run, holds them all, and reports per instance what
SQLite holds (``apsw.memory_used()``), what Python allocated (``tracemalloc``)
and how much the resident set grew. Rounds alternate the checkouts; the
figures are medians.

    .venv/bin/python benchmarks/idle_memory.py --baseline /work/main --rounds 5 --markdown
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The loads: a world, one of its fixtures, and how its stores are kept.
WORLDS = {
    "payments": ("payments_world", "small_shop"),
    "company": ("company_world", "acme"),
}


def _resident_kib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


def measure(world_name: str, storage: str, count: int) -> dict[str, float]:
    """KiB one idle instance holds in this process: SQLite's, Python's, and resident growth."""
    import importlib

    import apsw

    module_name, fixture = WORLDS[world_name]
    world = importlib.import_module(module_name).world
    world.instance(fixture, storage=storage).destroy()
    gc.collect()
    tracemalloc.start()
    sqlite_before = apsw.memory_used()
    python_before = tracemalloc.get_traced_memory()[0]
    resident_before = _resident_kib()
    instances = [world.instance(fixture, seed=index, storage=storage) for index in range(count)]
    gc.collect()
    figures = {
        "sqlite": (apsw.memory_used() - sqlite_before) / count / 1024,
        "python": (tracemalloc.get_traced_memory()[0] - python_before) / count / 1024,
        "resident": (_resident_kib() - resident_before) / count,
    }
    tracemalloc.stop()
    for instance in instances:
        instance.destroy()
    return figures


def _child(checkout: Path, world: str, storage: str, count: int) -> dict[str, float]:
    python = checkout / ".venv" / "bin" / "python"
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [str(python), str(HERE / "idle_memory.py"), "--child", world, storage, str(count)],
            capture_output=True,
            text=True,
            check=True,
            cwd=checkout,
            env={**os.environ, "TMPDIR": scratch, "PYTHONDONTWRITEBYTECODE": "1"},
            timeout=600,
        )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Measure both checkouts in alternating rounds and print the medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, default=Path("/work/main"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--storage", choices=("disk", "memory"), nargs="+", default=["disk"])
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        world, storage, count = args.child
        print(json.dumps(measure(world, storage, int(count))))
        return
    ours = HERE.parent
    rows: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = []
    for storage in args.storage:
        for world in WORLDS:
            samples: dict[str, list[dict[str, float]]] = {"ours": [], "base": []}
            for _ in range(args.rounds):
                samples["base"].append(_child(args.baseline, world, storage, args.count))
                samples["ours"].append(_child(ours, world, storage, args.count))
            medians = {
                side: {
                    key: statistics.median(sample[key] for sample in runs)
                    for key in ("sqlite", "python", "resident")
                }
                for side, runs in samples.items()
            }
            rows.append((world, storage, medians["base"], medians["ours"]))
            base, new = medians["base"], medians["ours"]
            print(
                f"{world:<9} {storage:<6} held {base['sqlite'] + base['python']:7.1f} -> "
                f"{new['sqlite'] + new['python']:7.1f} KiB "
                f"({(new['sqlite'] + new['python']) / (base['sqlite'] + base['python']):.2f})  "
                f"sqlite {base['sqlite']:.1f} -> {new['sqlite']:.1f}  "
                f"python {base['python']:.1f} -> {new['python']:.1f}  "
                f"resident {base['resident']:.1f} -> {new['resident']:.1f} KiB "
                f"({new['resident'] / base['resident']:.2f})",
                flush=True,
            )
    if args.markdown:
        print(
            "\n| idle instance | storage | held, baseline | held, this checkout | ratio "
            "| resident, baseline | resident, this checkout | ratio |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for world, storage, base, new in rows:
            held_base, held_new = base["sqlite"] + base["python"], new["sqlite"] + new["python"]
            print(
                f"| {world} | {storage} | {held_base:.0f} KiB | {held_new:.0f} KiB "
                f"| {held_new / held_base:.2f} | {base['resident']:.0f} KiB "
                f"| {new['resident']:.0f} KiB | {new['resident'] / base['resident']:.2f} |"
            )


if __name__ == "__main__":
    sys.exit(main())
