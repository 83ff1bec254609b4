"""Serving throughput and latency, beside the in-process rate of the same work in the same run.

The load is ``serving_load``'s: N sessions open at once, each a reset from the
``small_shop`` fixture, ten calls (writes, reads, one refused), a state
document and a close. The server is ``seahaven serve`` in its own process; the
clients are raw WebSockets in this one. The baseline does the same episode in
process, on one thread, with ``world.instance(...)`` and ``inst.call(...)``:
what the frames would cost with no server in the way. Rounds alternate
between the cases and medians are printed, with the CPU the server process
spent a session (from /proc, so Linux only): the figure a shared machine's
noise moves least.

    .venv/bin/python benchmarks/serving.py --markdown
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import payments_world
from serving_load import CALLS_PER_SESSION, LoadResult, run_load, start_server

import seahaven

FRAMES_PER_SESSION = CALLS_PER_SESSION + 2


def in_process_episode(world: seahaven.World, index: int) -> int:
    """The load's episode, in process; answers how many frames it stands for."""
    with world.instance("small_shop", seed=index) as inst:
        created = [
            inst.call("create_customer", email=f"load{index}.{n}@example.com", name=f"S{index}")
            for n in range(2)
        ]
        inst.call("update_customer", customer_id=created[0].id, name=f"U{index}")
        for customer in (created[0], created[1], created[0]):
            inst.call("get_customer", customer_id=customer.id)
        inst.call("list_customers", email=f"load{index}.1@example.com")
        inst.call("get_balance")
        with contextlib.suppress(seahaven.ToolError):
            inst.call("get_customer", customer_id="cus_doesnotexist")
        inst.call("update_customer", customer_id=created[1].id, name=f"V{index}")
        inst.state()
    return FRAMES_PER_SESSION


def in_process_rate(episodes: int) -> float:
    """Frames' worth of work per second, in process, one thread."""
    world = payments_world.world
    started = time.perf_counter()
    frames = sum(in_process_episode(world, index) for index in range(episodes))
    return frames / (time.perf_counter() - started)


def process_cpu_seconds(pid: int) -> float:
    """User and system CPU a process has used so far, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sessions", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)

    results: dict[int, list[LoadResult]] = {n: [] for n in args.sessions}
    server_cpu: dict[int, list[float]] = {n: [] for n in args.sessions}
    baseline: list[float] = []
    with (
        tempfile.TemporaryDirectory() as scratch,
        start_server(Path(scratch), extra=("--max_concurrent_envs", "1000")) as server,
    ):
        run_load(server.ws_url, 50)  # warm the server: imports, caches, the first fixture
        in_process_rate(20)
        for round_number in range(args.rounds):
            for sessions in args.sessions:
                cpu = process_cpu_seconds(server.process.pid)
                result = run_load(server.ws_url, sessions)
                cpu = process_cpu_seconds(server.process.pid) - cpu
                server_cpu[sessions].append(cpu / sessions * 1000)
                if result.problems:
                    print("\n".join(result.problems[:5]), file=sys.stderr)
                    return 1
                results[sessions].append(result)
            baseline.append(in_process_rate(200))
            print(f"round {round_number + 1}/{args.rounds} done", file=sys.stderr)

    in_process = statistics.median(baseline)
    rows = []
    for sessions, runs in results.items():
        fps = statistics.median(r.frames_per_second for r in runs)
        p50 = statistics.median(r.p50 for r in runs)
        p99 = statistics.median(r.p99 for r in runs)
        rows.append((sessions, fps, p50, p99, statistics.median(server_cpu[sessions])))
    if args.markdown:
        print(
            "| sessions at once | frames/s | p50 frame latency | p99 frame latency | "
            "in-process frames/s (same work, one thread) | served / in process | "
            "server CPU a session |"
        )
        print("|---|---|---|---|---|---|---|")
        for sessions, fps, p50, p99, cpu in rows:
            print(
                f"| {sessions} | {fps:,.0f} | {p50 * 1000:.0f} ms | {p99 * 1000:.0f} ms | "
                f"{in_process:,.0f} | {fps / in_process:.2f} | {cpu:.2f} ms |"
            )
    else:
        for sessions, fps, p50, p99, cpu in rows:
            print(
                f"{sessions} sessions: {fps:.0f} frames/s, p50 {p50 * 1000:.1f} ms, "
                f"p99 {p99 * 1000:.1f} ms, server CPU {cpu:.2f} ms a session; "
                f"in process {in_process:.0f} frames/s"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
