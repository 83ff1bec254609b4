"""Snapshot and restore against a create from the fixture, and a 16-way fork against one restore.

The company world's ``acme`` fixture (four stores). Every round, in turn, so
all see the same machine noise:

* **create**: ``world.instance("acme", ...)``, the baseline;
* **snapshot + restore**: an instance three calls into the README's acme
  script (``examples/acme_episode.json``) is snapshotted and restored;
* **restore**: the same snapshot restored again, alone;
* **fork 16**: the same snapshot restored 16 times with ``restore_many(16)``;
* **16 restores in turn**: 16 restores, each destroyed before the next (timed
  with its destroy), which tells the fork's own cost from the filesystem's:
  a fork creates 64 new files at once, a lone restore reuses what the last
  destroy freed.

Destroying what a case made is not timed. Medians of the rounds are printed,
in wall time and in this process's CPU time (which a machine busy with other
work does not stretch, as it does wall time by preempting a long case),
with the issue's targets as ratios: snapshot + restore at most 2x a create,
a 16-way fork at most 16x one restore. Nothing asserts. Run it with

    .venv/bin/python benchmarks/snapshots.py --rounds 40 --markdown
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import statistics
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from company_world import world

import seahaven
from seahaven.stores.storage import runner_storage

ROOT = Path(__file__).resolve().parent.parent
SCRIPT: list[dict[str, Any]] = json.loads(
    (ROOT / "examples" / "acme_episode.json").read_text(encoding="utf-8")
)
PREFIX = 3
FORK = 16
CREATE = "create from acme"
SNAP = "snapshot + restore, mid-episode"
RESTORE = "restore"
FORKED = f"fork {FORK} (restore_many)"
IN_TURN = f"{FORK} restores in turn, each destroyed"


def mid_episode(seed: int) -> seahaven.Instance:
    """An acme instance a few calls into the script, as a snapshot finds one."""
    # Where a runner keeps an instance (memory unless SEAHAVEN_STORAGE says otherwise), so the
    # figures compare with the trials and sessions that snapshot and restore.
    instance = world.instance("acme", seed=seed, clock_mode="tick", storage=runner_storage())
    for call in SCRIPT[:PREFIX]:
        with contextlib.suppress(seahaven.ToolError):
            instance.call(call["tool"], **call["arguments"])
    return instance


CPU: dict[str, list[float]] = {}


def timed(work: Callable[[], Any], case: str) -> tuple[float, Any]:
    """Wall microseconds ``work()`` took, and what it returned; its CPU time goes to ``CPU``."""
    started, cpu = time.perf_counter(), time.process_time()
    made = work()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    CPU.setdefault(case, []).append(cpu * 1e6)
    return elapsed * 1e6, made


def snapshot_and_restore(
    source: seahaven.Instance,
) -> tuple[seahaven.Snapshot, seahaven.Instance]:
    """The case timed against a create: a snapshot of ``source``, restored."""
    snapshot = source.snapshot()
    return snapshot, snapshot.restore()


def one_after_another(snapshot: seahaven.Snapshot) -> None:
    """``FORK`` restores, each destroyed before the next."""
    for _ in range(FORK):
        snapshot.restore().destroy()


def destroy(made: Any) -> None:
    for instance in made if isinstance(made, list) else [made]:
        instance.destroy()


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args(list(argv) if argv is not None else None)

    # Warm the fixture cache, the composition and the routes, as a running harness has them.
    destroy(world.instance("acme", seed=0, clock_mode="tick", storage=runner_storage()))
    source = mid_episode(0)
    destroy(source.snapshot().restore_many(2))

    create: list[float] = []
    snap_restore: list[float] = []
    restore: list[float] = []
    fork: list[float] = []
    in_turn: list[float] = []
    nbytes = 0
    for round_ in range(options.rounds):
        elapsed, made = timed(
            partial(world.instance, "acme", seed=round_, clock_mode="tick"), CREATE
        )
        create.append(elapsed)
        destroy(made)

        elapsed, (snapshot, made) = timed(partial(snapshot_and_restore, source), SNAP)
        snap_restore.append(elapsed)
        nbytes = snapshot.nbytes
        destroy(made)

        elapsed, made = timed(snapshot.restore, RESTORE)
        restore.append(elapsed)
        destroy(made)

        elapsed, made = timed(partial(snapshot.restore_many, FORK), FORKED)
        fork.append(elapsed)
        destroy(made)

        elapsed, _ = timed(partial(one_after_another, snapshot), IN_TURN)
        in_turn.append(elapsed)
    source.destroy()

    medians = {
        CREATE: statistics.median(create),
        SNAP: statistics.median(snap_restore),
        RESTORE: statistics.median(restore),
        FORKED: statistics.median(fork),
        IN_TURN: statistics.median(in_turn),
    }
    cpu = {case: statistics.median(values) for case, values in CPU.items()}
    ratios = [
        ("snapshot + restore / create", SNAP, CREATE, "<= 2.0"),
        (f"fork {FORK} / restore", FORKED, RESTORE, f"<= {FORK}.0"),
        (f"fork {FORK} / {FORK} restores in turn", FORKED, IN_TURN, "(none)"),
    ]
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"{options.rounds} rounds, snapshot {nbytes / 1024:.0f} KiB, medians"
    )
    if options.markdown:
        print("| Case | Median wall | Median CPU |")
        print("|---|---:|---:|")
        for name, value in medians.items():
            print(f"| {name} | {value / 1000:.2f} ms | {cpu[name] / 1000:.2f} ms |")
        print()
        print("| Ratio | Wall | CPU | Target |")
        print("|---|---:|---:|---:|")
        for name, top, bottom, target in ratios:
            wall_ratio, cpu_ratio = medians[top] / medians[bottom], cpu[top] / cpu[bottom]
            print(f"| {name} | {wall_ratio:.2f} | {cpu_ratio:.2f} | {target} |")
    else:
        for name, value in medians.items():
            print(f"{name:40} {value / 1000:9.2f} ms wall {cpu[name] / 1000:9.2f} ms CPU")
        for name, top, bottom, target in ratios:
            wall_ratio, cpu_ratio = medians[top] / medians[bottom], cpu[top] / cpu[bottom]
            print(f"{name:40} {wall_ratio:9.2f} wall    {cpu_ratio:9.2f} CPU    target {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
