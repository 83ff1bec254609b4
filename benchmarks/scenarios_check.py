"""What ``seahaven scenarios check`` costs on the company pack, against one plain eval of it.

The check attacks each of the pack's 52 graders with the mutant panel (the
solution, doing nothing, wrong answers, prefixes, dropped writes, changed
arguments, collateral and destructive extras found by making every tool after
the solution, the solution twice, extra reads, writes reordered). Each round
times, taking turns:

* **eval**: ``evaluate(company, solution_policy)``, one trial of each scenario's
  reference solution: the cheapest eval of the pack there is, the baseline;
* **check**: ``check_pack(company)``, the whole panel, in the same process.

Each is timed on the clock and in CPU seconds (the process's own, or the child's),
which a busy machine stretches less.

Then the command itself, ``seahaven scenarios check company`` in a fresh process
(the import of the framework and the worlds included), a few times. The figures
are medians; the ratio is the median of each round's check over the same
round's eval. The machine is shared: run it under ``nice``, and read the load
average it prints. Nothing asserts. Run it with

    nice .venv/bin/python benchmarks/scenarios_check.py --markdown
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import apsw

from seahaven.evaluation import check_pack, evaluate, solution_policy
from seahaven.scenarios import load_pack

ROOT = Path(__file__).resolve().parents[1]


def median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """The median of each of (clock seconds, CPU seconds)."""
    return (
        statistics.median(seconds for seconds, _ in runs),
        statistics.median(cpu for _, cpu in runs),
    )


def timed_check(pack_name: str) -> tuple[float, float, dict[str, int]]:
    """Seconds for one ``check_pack`` (on the clock, and of CPU), and what its panel did."""
    pack = load_pack(pack_name)
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    reports = check_pack(pack)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert all(report.ok for report in reports), [r.problems for r in reports if not r.ok]
    totals = {
        "generated": sum(report.mutants.get("generated", 0) for report in reports),
        "run": sum(report.mutants.get("run", 0) for report in reports),
        "benign": sum(report.mutants.get("benign_run", 0) for report in reports),
    }
    return seconds, cpu, totals


def timed_eval(pack_name: str) -> tuple[float, float]:
    """Seconds for one trial of every scenario, played by its reference solution."""
    pack = load_pack(pack_name)
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    summary, _ = evaluate(pack, solution_policy)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert summary.mean == 1.0, summary
    return seconds, cpu


def timed_command(pack_name: str) -> tuple[float, float]:
    """Seconds for ``seahaven scenarios check PACK`` in a fresh process, start to exit."""
    command = [sys.executable, "-m", "seahaven.cli", "scenarios", "check", pack_name]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stdout + done.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pack", default="company")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--commands", type=int, default=3, help="runs of the command itself")
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args(argv)

    timed_eval(options.pack)  # worlds imported, fixtures verified once, as in any process
    evals: list[tuple[float, float]] = []
    checks: list[tuple[float, float]] = []
    totals: dict[str, int] = {}
    for _ in range(options.rounds):
        evals.append(timed_eval(options.pack))
        seconds, cpu, totals = timed_check(options.pack)
        checks.append((seconds, cpu))
    ratio = statistics.median(c[0] / e[0] for c, e in zip(checks, evals, strict=True))
    commands = [timed_command(options.pack) for _ in range(options.commands)]
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    machine = (
        f"Python {platform.python_version()}, SQLite {apsw.sqlite_lib_version()}, "
        f"{os.cpu_count()} cores, load average {load}"
    )
    scenarios = len(load_pack(options.pack))
    panel = (
        f"{totals['generated']} mutants generated, {totals['run']} run, "
        f"{totals['benign']} right variants"
    )
    rows = [
        (f"`evaluate`, {scenarios} scenarios x 1, solution policy", median(evals), "-"),
        (f"`check_pack` ({panel})", median(checks), f"{ratio:.1f}"),
        ("`seahaven scenarios check` in a fresh process", median(commands), "-"),
    ]
    if options.markdown:
        print(f"{machine}; {options.rounds} rounds, {options.commands} runs of the command\n")
        print("| case | seconds | CPU seconds | vs the eval |")
        print("|---|---|---|---|")
        for name, (seconds, cpu), against in rows:
            print(f"| {name} | {seconds:.2f} | {cpu:.2f} | {against} |")
        runs = ", ".join(f"{seconds:.1f} s" for seconds, _ in commands)
        print(f"\nthe command, each run: {runs}")
    else:
        print(machine)
        for name, (seconds, cpu), against in rows:
            label = name.replace("`", "")
            print(f"{label:<78} {seconds:7.2f} s ({cpu:.2f} s CPU)  x{against}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
