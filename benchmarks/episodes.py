"""Episodes per second: in process (one thread) against Ray with 1 and 2 workers, on this machine.

Every round runs the same batch of company-world episodes (the README's acme
script: eight calls across three stores, from the ``acme`` fixture) three
ways, in turn, so all three see the same machine noise:

* in process: ``seahaven_ray.run_in_process``, one thread;
* Ray, 1 worker and 2 workers: ``seahaven_ray.run_episodes`` on a local
  cluster started once, before the rounds (its start is reported apart).

Each way is timed twice per round: a batch of one episode (the fixed cost of a
run: for Ray, starting the actors and loading the world in them) and a batch
of ``--episodes``. The CPU time of this process (the caller: for Ray, the
driver) is measured too, per episode. The marginal rate is ``(N - 1) / (T(N) - T(1))``, the
throughput once the pool is up; the overall rate is ``N / T(N)``. Medians of
the rounds are printed; nothing asserts. Run it with

    .venv/bin/python benchmarks/episodes.py --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import ray
from seahaven_ray import Episode, EpisodeResult, ToolCall, run_episodes, run_in_process

import seahaven

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = json.loads((ROOT / "examples" / "acme_episode.json").read_text(encoding="utf-8"))


def episodes(count: int, start: int) -> list[Episode]:
    """``count`` scripted acme episodes with distinct ids and seeds."""
    calls = [ToolCall.model_validate(call) for call in SCRIPT]
    return [
        Episode(
            episode_id=f"bench-{start + n}",
            world="company",
            fixture="acme",
            seed=start + n,
            clock_mode="tick",
            calls=calls,
        )
        for n in range(count)
    ]


Runner = Callable[[list[Episode]], Iterator[EpisodeResult]]


def runners() -> dict[str, Runner]:
    return {
        "in process, 1 thread": lambda batch: run_in_process(batch),
        "Ray, 1 worker": lambda batch: run_episodes(batch, workers=1),
        "Ray, 2 workers": lambda batch: run_episodes(batch, workers=2),
    }


def timed(run: Runner, batch: list[Episode]) -> tuple[float, float, list[EpisodeResult]]:
    """Wall seconds, this process's CPU seconds, and the results of one run."""
    started, cpu = time.perf_counter(), time.process_time()
    results = list(run(batch))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if len(results) != len(batch) or not all(result.ok for result in results):
        raise SystemExit(f"a run lost or failed episodes: {len(results)} of {len(batch)}")
    return elapsed, cpu, results


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200, help="episodes per batch")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    parser.add_argument("--markdown", action="store_true", help="also print a markdown table")
    args = parser.parse_args(list(argv) if argv is not None else None)

    print(
        f"seahaven {seahaven.__version__}, ray {ray.__version__}, Python "
        f"{platform.python_version()}, {os.cpu_count()} CPUs; {args.episodes} episodes a batch, "
        f"{args.rounds} rounds"
    )
    cluster_started = time.perf_counter()
    ray.init(
        address="local",  # a cluster of the run's own, never one started with ``ray start``
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
    )
    cluster_seconds = time.perf_counter() - cluster_started
    try:
        ways = runners()
        one: dict[str, list[float]] = {name: [] for name in ways}
        many: dict[str, list[float]] = {name: [] for name in ways}
        driver: dict[str, list[float]] = {name: [] for name in ways}
        sizes: list[int] = []
        counter = 0
        for _ in range(args.rounds):
            for name, run in ways.items():
                elapsed, _, _ = timed(run, episodes(1, counter))
                counter += 1
                one[name].append(elapsed)
                elapsed, cpu, results = timed(run, episodes(args.episodes, counter))
                counter += args.episodes
                many[name].append(elapsed)
                driver[name].append(cpu / args.episodes)
                sizes.extend(len(result.model_dump_json()) for result in results[:5])
    finally:
        ray.shutdown()

    print(f"local cluster start (ray.init, 2 CPUs): {cluster_seconds:.2f} s")
    print(f"a result line (JSON): median {statistics.median(sizes) / 1024:.1f} KiB")
    rows = []
    for name in ways:
        fixed = statistics.median(one[name])
        total = statistics.median(many[name])
        marginal = (args.episodes - 1) / max(total - fixed, 1e-9)
        overall = args.episodes / total
        calling = statistics.median(driver[name]) * 1000
        rows.append((name, fixed, total, marginal, overall, calling))
        print(
            f"{name:<22} 1 episode {fixed * 1000:8.1f} ms   {args.episodes} episodes "
            f"{total:7.2f} s   marginal {marginal:7.1f}/s   overall {overall:7.1f}/s   "
            f"this process's CPU {calling:5.2f} ms an episode"
        )
    if args.markdown:
        base = rows[0][3]
        print()
        print(
            f"| way | a run of 1 episode | a run of {args.episodes} | marginal episodes/s | "
            "overall episodes/s | marginal vs in process | caller's CPU an episode |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, fixed, total, marginal, overall, calling in rows:
            print(
                f"| {name} | {fixed * 1000:.0f} ms | {total:.2f} s | {marginal:.1f} | "
                f"{overall:.1f} | {marginal / base:.2f}x | {calling:.2f} ms |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
