"""Over the wire: a reset from a snapshot against a reset from the fixture, and a 4-way fork.

The company world's ``acme`` fixture, served by a real uvicorn server on
127.0.0.1 and driven by ``SeahavenClient``. Every round, in turn:

* **reset from acme**: ``reset(fixture="acme", ...)``, the baseline;
* **reset from_snapshot**: ``reset(from_snapshot=token)`` of a snapshot taken
  three calls into the README's acme script;
* **fork 4**: a ``fork`` frame of 4 branches from the same token (its answer
  only; the branches are then attached to and closed, untimed).

Medians of the rounds are printed, with each case's ratio to the baseline.
Nothing asserts. Run it with

    .venv/bin/python benchmarks/snapshot_frames.py --rounds 20
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from company_world import world

import seahaven
from seahaven.openenv import SeahavenClient, serve

ROOT = Path(__file__).resolve().parent.parent
SCRIPT: list[dict[str, Any]] = json.loads(
    (ROOT / "examples" / "acme_episode.json").read_text(encoding="utf-8")
)
PREFIX = 3
FORK = 4
CASES = ("reset from acme", "reset from_snapshot", f"fork {FORK}")


def main(argv: Iterable[str] | None = None) -> int:
    """Run the rounds and print the medians."""
    parser = argparse.ArgumentParser(description="Snapshot frames against fixture resets.")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(None if argv is None else list(argv))
    times: dict[str, list[float]] = {case: [] for case in CASES}
    with serve.running(world) as server:
        env = SeahavenClient(base_url=server.base_url)
        other = SeahavenClient(base_url=server.base_url)
        with env, other:
            run_rounds(env, other, args.rounds, times)
    base = statistics.median(times[CASES[0]])
    print(f"{'case':<24} {'median ms':>10} {'x baseline':>11}")
    for case in CASES:
        median = statistics.median(times[case])
        print(f"{case:<24} {median * 1e3:>10.2f} {median / base:>11.2f}")
    return 0


def run_rounds(
    env: SeahavenClient, other: SeahavenClient, rounds: int, times: dict[str, list[float]]
) -> None:
    """Snapshot ``env``'s episode, then time each case once a round."""
    env.reset(fixture="acme", seed=1, clock_mode="tick")
    for call in SCRIPT[:PREFIX]:
        with contextlib.suppress(seahaven.ToolError):
            env.call(call["tool"], **call["arguments"])
    token = env.snapshot()
    for round_ in range(rounds + 1):
        started = time.perf_counter()
        other.reset(fixture="acme", seed=round_, clock_mode="tick")
        baseline = time.perf_counter() - started
        started = time.perf_counter()
        other.reset(from_snapshot=token)
        restored = time.perf_counter() - started
        started = time.perf_counter()
        branches = env.fork(FORK, token=token)
        forked = time.perf_counter() - started
        for branch in branches:
            with branch:
                pass
        if round_ == 0:
            continue  # the first round pays for what is built once
        for case, took in zip(CASES, (baseline, restored, forked), strict=True):
            times[case].append(took)


if __name__ == "__main__":
    raise SystemExit(main())
