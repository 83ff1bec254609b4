"""What spreading an eval's trials over worker processes buys, against one process, in one run.

The company pack played by its reference solutions (``solution_policy``: no model, so a
trial is all the harness's and the world's CPU: making the instance, the calls, the grading,
the results file), ``--trials N`` each, run by ``evaluate(..., workers=W)``, the runner
``seahaven eval --workers W`` uses, with W = 1 (this process) and W = 2 (two worker
processes, one trial at a time each), in alternating rounds, reported as medians of trials a
second and of the rounds' ratios. A worker's start (the interpreter, ``import seahaven``, the
pack unpickled, the world's first instance) is inside the time, as it is in a user's run.

Every round checks that the two runs wrote the same result lines, but for their timings and
the hash of the company world's state, which its wall clock stamps. Target (issue 44,
item 5): at least 1.7x on 2 cores. It also reports the CPU time of the parent and of the
workers per trial, and the load average, since the workers need cores nobody else is using.
Nothing asserts. Run it with

    .venv/bin/python benchmarks/eval_processes.py --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from seahaven.evaluation import evaluate, solution_policy
from seahaven.scenarios import load_pack

PACK = "company"
VARIES = {"seconds", "episode_seconds", "grade_seconds", "state_sha256"}


def comparable(path: Path) -> list[dict[str, Any]]:
    """A results file's lines without what varies from run to run, in the plan's order."""
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    kept = [{k: v for k, v in line.items() if k not in VARIES} for line in lines]
    return sorted(kept, key=lambda line: (line["scenario"], line["trial"]))


def cpu() -> tuple[float, float]:
    """CPU seconds so far of this process and of its children that have ended."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--trials", type=int, default=10, help="trials of each scenario")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args(argv)
    pack = load_pack(PACK)
    folder = Path(tempfile.mkdtemp(prefix="seahaven-bench-processes-"))
    ways = {"one process": 1, f"{options.workers} workers": options.workers}
    rates: dict[str, list[float]] = {}
    costs: dict[str, list[tuple[float, float]]] = {}
    ratios: list[float] = []
    loads: list[float] = []
    evaluate(pack, solution_policy, trials=1)  # warm: imports, the fixture's image, replays
    for number in range(options.rounds):
        loads.append(os.getloadavg()[0])
        walls = {}
        for name, workers in ways.items():
            out = folder / f"{workers}-{number}.jsonl"
            own, children = cpu()
            started = time.perf_counter()
            summary, results = evaluate(
                pack, solution_policy, trials=options.trials, out=out, workers=workers
            )
            wall = time.perf_counter() - started
            own_after, children_after = cpu()
            assert summary.mean == 1.0, summary.render()
            walls[name] = wall
            rates.setdefault(name, []).append(len(results) / wall)
            costs.setdefault(name, []).append(
                ((own_after - own) / len(results), (children_after - children) / len(results))
            )
        first, second = (folder / f"{workers}-{number}.jsonl" for workers in ways.values())
        if comparable(first) != comparable(second):
            print(f"round {number}: the runs' results differ", file=sys.stderr)
            return 1
        one, many = walls.values()
        ratios.append(one / many)
    trials = options.trials * len(pack)
    machine = (
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average at the "
        f"rounds' starts {min(loads):.1f} to {max(loads):.1f}; {trials} trials a run, "
        f"{options.rounds} rounds; results identical in every round"
    )
    median = {name: statistics.median(values) for name, values in rates.items()}
    cost = {
        name: (
            statistics.median(own for own, _ in rows) * 1000,
            statistics.median(theirs for _, theirs in rows) * 1000,
        )
        for name, rows in costs.items()
    }
    ratio = statistics.median(ratios)
    if options.markdown:
        print(machine + "\n")
        print("| run | trials/s | CPU a trial, parent | CPU a trial, workers | vs one process |")
        print("|---|---|---|---|---|")
        for name, value in median.items():
            own_ms, theirs_ms = cost[name]
            shown = f"{ratio:.2f}x" if name != "one process" else "1x"
            print(f"| {name} | {value:.0f} | {own_ms:.1f} ms | {theirs_ms:.1f} ms | {shown} |")
    else:
        print(machine)
        for name, value in median.items():
            own_ms, theirs_ms = cost[name]
            print(
                f"{name:<12} {value:7.0f} trials/s  CPU a trial: parent {own_ms:.1f} ms, "
                f"workers {theirs_ms:.1f} ms"
            )
        print(f"{options.workers} workers / one process: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
