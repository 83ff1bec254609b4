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

It also compares ``seahaven serve --workers 1`` and ``--workers 2`` in the same
run (``--workers``): both servers are up for the whole run, and each round
loads one, then the other. Its clients share the machine's CPUs with the
server, so every millisecond of client CPU is taken from what is measured. By
default they are ``wsload`` (``native_client``: C, one process, 0.3-0.5 ms
of CPU a session, nearly all of it the kernel's TCP), whose answers the same
session scripts check after the run; ``--client protocol`` (or ``lean``,
``websockets``) runs Python clients instead, in ``--client-processes``
processes of their own (the sessions split evenly, all starting at one
instant), since one Python process cannot keep two server processes busy. The comparison
runs each ``--load`` in turn: ``payments`` (the load above: light calls, so the
clients' own CPU is a large share of the machine's) and ``company`` (``acme``,
``company_episode``'s ten calls on real rows across four stores, then its state
document), each against servers of its own world. Each round also measures
the machine's own ceiling: how much more pure-Python work two processes do at
once than one alone.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import payments_world
from serving_load import (
    CALLS_PER_SESSION,
    SESSIONS,
    LoadResult,
    Server,
    run_load,
    start_server,
)

import seahaven
from seahaven.stores.storage import runner_storage

FRAMES_PER_SESSION = CALLS_PER_SESSION + 2


def in_process_episode(world: seahaven.World, index: int) -> int:
    """The load's episode, in process; answers how many frames it stands for."""
    # Stored where a served session's instance is, so the two compare like for like.
    with world.instance("small_shop", seed=index, storage=runner_storage()) as inst:
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


def _client_share(
    url: str, sessions: int, start_at: float, loop: str, client: str, load: str
) -> tuple[LoadResult, float, float]:
    """One client process's share of a load: its result, when it finished, the CPU it used."""
    time.sleep(max(0.0, start_at - time.monotonic()))
    used = time.process_time()
    result = run_load(url, sessions, loop=loop, client=client, load=load)
    return result, time.monotonic(), time.process_time() - used


def split_load(
    clients: ProcessPoolExecutor,
    processes: int,
    url: str,
    sessions: int,
    loop: str,
    client: str = "websockets",
    load: str = "payments",
) -> tuple[LoadResult, float]:
    """``sessions`` sessions against ``url`` from ``processes`` client processes at once.

    The processes' clocks agree (``CLOCK_MONOTONIC`` is the machine's), so the
    load's wall time runs from the common start to the last process's finish.
    Answers the combined result and the CPU seconds the client processes used.
    """
    shares = [
        sessions // processes + (1 if n < sessions % processes else 0) for n in range(processes)
    ]
    start_at = time.monotonic() + 0.5
    futures = [
        clients.submit(_client_share, url, share, start_at, loop, client, load)
        for share in shares
        if share
    ]
    outcomes = [future.result(timeout=600) for future in futures]
    seconds = max(finished for _, finished, _ in outcomes) - start_at
    latencies = [latency for result, _, _ in outcomes for latency in result.latencies]
    kinds = [kind for result, _, _ in outcomes for kind in result.kinds]
    problems = [problem for result, _, _ in outcomes for problem in result.problems]
    client_cpu = sum(used for _, _, used in outcomes)
    combined = LoadResult(sessions, len(latencies), seconds, latencies, kinds, problems)
    return combined, client_cpu


def server_cpu_seconds(server_pid: int) -> float:
    """CPU a server has used: the process and every worker it forked (Linux)."""
    total = process_cpu_seconds(server_pid)
    with contextlib.suppress(OSError):
        children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
        total += sum(process_cpu_seconds(int(child)) for child in children)
    return total


def spin(iterations: int) -> float:
    """Pure-Python work on one CPU; answers the wall seconds it took."""
    started = time.perf_counter()
    total = 0
    for number in range(iterations):
        total += number
    return time.perf_counter() - started


def two_process_ceiling(pool: ProcessPoolExecutor, iterations: int = 5_000_000) -> float:
    """How much more CPU work two processes get done at once than one alone, on this machine.

    Two workers can gain no more than this over one, whatever the server does: two
    CPUs of a shared or virtual machine are often not two whole CPUs.
    """
    alone: list[float] = []
    together: list[float] = []
    for _ in range(3):
        alone.append(pool.submit(spin, iterations).result())
        pair = [pool.submit(spin, iterations) for _ in range(2)]
        together.append(max(future.result() for future in pair))
    return 2 * statistics.median(alone) / statistics.median(together)


def compare_workers(args: argparse.Namespace, load: str) -> tuple[list[tuple[float, ...]], float]:
    """For each ``--workers`` count in one run: frames/s against the first count (the median of
    the rounds' own ratios), frames/s, p50, p99, and the server's, front's and clients' CPU a
    session.

    Also answers the median of each round's ``two_process_ceiling``.
    """
    counts: list[int] = args.workers
    results: dict[int, list[LoadResult]] = {n: [] for n in counts}
    cpu: dict[int, list[float]] = {n: [] for n in counts}
    fronts: dict[int, list[float]] = {n: [] for n in counts}
    client: dict[int, list[float]] = {n: [] for n in counts}
    ceilings: list[float] = []
    sessions = args.worker_sessions
    context = multiprocessing.get_context("fork")
    with contextlib.ExitStack() as stack:
        servers = {}
        for count in counts:
            scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            extra = (
                "--max_concurrent_envs",
                "2000",
                "--workers",
                str(count),
                "--log-level",
                args.server_log_level,
            )
            servers[count] = stack.enter_context(start_server(scratch, world=load, extra=extra))
            if args.server_log_level != "warning":
                stack.callback(print_placements, load, count, scratch / "serve.log")
        clients = stack.enter_context(
            ProcessPoolExecutor(args.client_processes, mp_context=context)
        )

        def load_once(server: Server) -> tuple[LoadResult, float]:
            if args.client == "native":
                # One wsload process drives every session; it reports its own CPU.
                result = run_load(server.ws_url, sessions, client="native", load=load)
                return result, result.client_cpu or 0.0
            return split_load(
                clients,
                args.client_processes,
                server.ws_url,
                sessions,
                args.client_loop,
                args.client,
                load,
            )

        for server in servers.values():
            # Warm every worker with a whole round: imports, caches, the allocator's arenas.
            load_once(server)
        for round_number in range(args.rounds):
            ceilings.append(two_process_ceiling(clients))
            for count, server in servers.items():
                used = server_cpu_seconds(server.process.pid)
                front = process_cpu_seconds(server.process.pid)
                result, client_cpu = load_once(server)
                used = server_cpu_seconds(server.process.pid) - used
                front = process_cpu_seconds(server.process.pid) - front
                if result.problems:
                    raise SystemExit("\n".join(result.problems[:5]))
                results[count].append(result)
                cpu[count].append(used / sessions * 1000)
                fronts[count].append(front / sessions * 1000 if count > 1 else 0.0)
                client[count].append(client_cpu / sessions * 1000)
                print(
                    f"  {load}, {count} worker(s): {result.frames_per_second:,.0f} frames/s",
                    file=sys.stderr,
                )
            print(f"workers round {round_number + 1}/{args.rounds} ({load}) done", file=sys.stderr)
    rows: list[tuple[float, ...]] = []
    one = results[counts[0]]
    for count, runs in results.items():
        # Against the first count, round by round (the two loads of a round ran back to back).
        ratio = statistics.median(
            run.frames_per_second / base.frames_per_second
            for run, base in zip(runs, one, strict=True)
        )
        rows.append(
            (
                count,
                ratio,
                statistics.median(r.frames_per_second for r in runs),
                statistics.median(r.p50 for r in runs),
                statistics.median(r.p99 for r in runs),
                statistics.median(cpu[count]),
                statistics.median(fronts[count]),
                statistics.median(client[count]),
            )
        )
    return rows, statistics.median(ceilings)


def print_placements(load: str, count: int, log_path: Path) -> None:
    """Say what a server moved to worker threads and back, from its log (``info``)."""
    lines = log_path.read_text().splitlines()
    moves = [line for line in lines if "on a worker thread from now on" in line]
    returns = [line for line in lines if "on the event loop again" in line]
    print(
        f"{load}, {count} worker(s) moved {len(moves)} kind(s) of work to threads, "
        f"{len(returns)} back:",
        file=sys.stderr,
    )
    for line in moves + returns:
        print("  " + line, file=sys.stderr)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sessions", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument(
        "--workers",
        type=int,
        nargs="*",
        default=[1, 2],
        help="worker counts to compare in the same run (none: skip the comparison)",
    )
    parser.add_argument("--worker-sessions", type=int, default=400)
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument(
        "--server-log-level",
        choices=("warning", "info"),
        default="warning",
        help="the servers' log level; at info, which kinds of work each moved to a thread",
    )
    parser.add_argument(
        "--client-loop",
        choices=("asyncio", "uvloop"),
        default="uvloop",
        help="the event loop the workers comparison's clients run on",
    )
    parser.add_argument(
        "--client",
        choices=("websockets", "lean", "protocol", "native"),
        default="native",
        help="the workers comparison's client: the websockets library's, lean_client's "
        "streams, lean_client.play's callbacks, or wsload (C, one process, the least client "
        "CPU; needs a C compiler)",
    )
    parser.add_argument(
        "--load",
        nargs="+",
        choices=sorted(SESSIONS),
        default=["payments", "company"],
        help="the workers comparison's episodes: payments (small_shop, light calls) or company "
        "(acme, calls on its rows across four stores); each is compared on its own",
    )
    parser.add_argument(
        "--only-workers", action="store_true", help="run the worker comparison alone"
    )
    args = parser.parse_args(argv)
    if args.only_workers:
        args.sessions = []

    for load in args.load if args.workers else []:
        worker_rows, ceiling = compare_workers(args, load)
        print_worker_rows(load, worker_rows, markdown=args.markdown)
        print(
            f"Two CPU-bound processes at once did {ceiling:.2f}x the work of one alone "
            "(median of the rounds): the most two workers can gain on this machine.\n"
        )
    if not args.sessions:
        return 0
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
    rows: list[tuple[float, ...]] = []
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


def print_worker_rows(load: str, rows: list[tuple[float, ...]], *, markdown: bool) -> None:
    """The worker comparison: each count's medians, and its frames/s against one worker's."""
    if markdown:
        print(f"The {load} load:\n")
        print(
            "| workers | frames/s | against 1 worker (median of rounds) | p50 frame latency | "
            "p99 frame latency | server CPU a session (all processes) | of it, the front "
            "process | client CPU a session |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for count, ratio, fps, p50, p99, cpu, front, client in rows:
            print(
                f"| {count:.0f} | {fps:,.0f} | {ratio:.2f}x | {p50 * 1000:.0f} ms | "
                f"{p99 * 1000:.0f} ms | {cpu:.2f} ms | {front:.2f} ms | {client:.2f} ms |"
            )
        print()
        return
    for count, ratio, fps, p50, p99, cpu, front, client in rows:
        print(
            f"{load}, {count:.0f} worker(s): {fps:.0f} frames/s ({ratio:.2f}x one worker), "
            f"p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, server CPU {cpu:.2f} ms a "
            f"session (front {front:.2f} ms), client CPU {client:.2f} ms a session"
        )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
