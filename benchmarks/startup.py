"""How long a process takes to import what ``seahaven eval --url``, the client and a server need.

Each case is a fresh interpreter importing one thing (``python -c "..."``), run
in alternating rounds with the others so every case sees the same machine
noise; the figure is the median wall time of the rounds. Two baselines run in
the same rounds: ``python -c pass`` (the interpreter alone) and ``import
openenv.core`` (OpenEnv in full, with its HTTP server, fastmcp and gradio: what
importing the client cost before it imported OpenEnv's client modules alone).
Each line prints the case's own time (its median less the interpreter's), and
two ratios: to the interpreter alone, and to OpenEnv in full. Nothing asserts:
the figures are read, and docs/performance.md#start-up records them.

    .venv/bin/python benchmarks/startup.py              # 7 rounds
    .venv/bin/python benchmarks/startup.py --rounds 15 --markdown
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

# (name, the code a fresh interpreter runs); the code prints which heavy packages it loaded.
HEAVY = ("gradio", "fastapi", "uvicorn", "fastmcp")
CASES: list[tuple[str, str]] = [
    ("python -c pass", "pass"),
    ("import seahaven", "import seahaven"),
    ("import seahaven.openenv", "import seahaven.openenv"),
    ("SeahavenClient", "from seahaven.openenv import SeahavenClient"),
    ("SeahavenClient + models", "from seahaven.openenv import SeahavenClient, SeahavenState"),
    ("trial_runner (eval --url)", "from seahaven.openenv import trial_runner"),
    ("app (a server; openenv validate)", "from seahaven.openenv import app"),
    ("import openenv.core (in full)", "import openenv.core"),
]
BASELINE = "python -c pass"
FULL = "import openenv.core (in full)"


def _code(body: str) -> str:
    return (
        f"{body}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )


def _run(body: str) -> tuple[float, list[str]]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _code(body)], capture_output=True, text=True, check=True
    )
    seconds = time.perf_counter() - start
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return seconds, loaded


def main() -> None:
    """Run every case in alternating rounds; print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table too")
    options = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name, _ in CASES}
    loaded: dict[str, list[str]] = {}
    for body in (body for _, body in CASES):  # one warm-up of each: the file cache, .pyc files
        _run(body)
    for _ in range(options.rounds):
        for name, body in CASES:
            seconds, heavy = _run(body)
            times[name].append(seconds)
            loaded[name] = heavy
    medians = {name: statistics.median(values) for name, values in times.items()}
    baseline, full = medians[BASELINE], medians[FULL]
    rows = []
    for name, _ in CASES:
        own = medians[name] - baseline
        rows.append(
            (
                name,
                medians[name],
                own,
                medians[name] / baseline,
                medians[name] / full,
                ", ".join(loaded[name]) or "-",
            )
        )
        print(
            f"{name:<34} {medians[name]:6.2f} s   own {own:6.2f} s   "
            f"x python {medians[name] / baseline:5.1f}   x openenv.core {medians[name] / full:5.2f}"
            f"   loads {rows[-1][5]}"
        )
    if options.markdown:
        print()
        print("| Import | Median | Its own time | x `python -c pass` | x `openenv.core` | Loads |")
        print("|---|---|---|---|---|---|")
        for name, median, own, to_python, to_full, heavy in rows:
            print(
                f"| {name} | {median:.2f} s | {own:.2f} s | {to_python:.1f} | {to_full:.2f} "
                f"| {heavy} |"
            )


if __name__ == "__main__":
    main()
