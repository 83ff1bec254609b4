"""Storage in memory against storage on disk: a realistic episode, both ways, in the same run.

The world is ``projecttracker`` and the fixture ``agency`` (a 2.4 MB file over
nine tables and an FTS5 index: six hundred issues, fifteen hundred comments,
an audit trail). An episode makes an instance from the fixture, reads an issue
by key, updates it, comments on it, reads the state document once and ends the
instance. Each case runs both storages in alternating rounds, so both see the
same machine noise, and prints medians with the ratio memory / disk:

* create + destroy: the instance alone, no call; again for a ledger world
  whose fixture, frozen by the benchmark into a temporary directory, is at
  least 3 MB;
* episode in process: ``world.instance(...)``, three ``inst.call``, one
  ``inst.state_json()``, ``destroy()``;
* episode over the wire: the same over one WebSocket of ``seahaven serve``
  (reset with ``storage``, three steps, a ``state`` frame), the server in its
  own process;
* memory per idle instance: RSS growth for N idle ``company``/``acme``
  instances of each storage, and what 1,000 would take.

    .venv/bin/python benchmarks/storage.py --markdown
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import projecttracker
from serving_load import start_server
from websockets.asyncio.client import connect

import seahaven
from seahaven.stores.storage import cached_image_bytes

FIXTURE = "agency"
STORAGES = ("memory", "disk")


def _open_issue_keys() -> list[str]:
    """Keys of issues an episode may update: not archived."""
    with projecttracker.world.instance(FIXTURE, storage="disk") as inst:
        rows = inst.inspect().rows(
            "SELECT key FROM issues WHERE archived_at IS NULL ORDER BY key LIMIT 40"
        )
    return [str(row["key"]) for row in rows]


KEYS = _open_issue_keys()


def _median_rounds(
    work: dict[str, Callable[[int], None]], count: int, rounds: int
) -> dict[str, float]:
    """Wall and CPU milliseconds per operation of each storage's ``work``: medians of rounds.

    Keys are the storage (wall time) and the storage with " cpu" (this process's
    CPU time), which a machine shared with other work moves far less.
    """
    times: dict[str, list[float]] = {}
    for _ in range(rounds):
        for name, operation in work.items():
            gc.collect()
            started, cpu = time.perf_counter(), time.process_time()
            for index in range(count):
                operation(index)
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            times.setdefault(name, []).append(wall / count * 1000)
            times.setdefault(f"{name} cpu", []).append(cpu / count * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def case_create(count: int, rounds: int) -> dict[str, float]:
    """Making and destroying an instance of the fixture, nothing else."""
    world = projecttracker.world

    def make(storage: str) -> Callable[[int], None]:
        def create(index: int) -> None:
            world.instance(FIXTURE, seed=index, storage=storage).destroy()  # type: ignore[arg-type]

        return create

    return _median_rounds({storage: make(storage) for storage in STORAGES}, count, rounds)


def in_process_episode(world: seahaven.World, storage: str, index: int) -> None:
    """The episode: read an issue, update it, comment on it, one state document."""
    with world.instance(FIXTURE, seed=index, storage=storage) as inst:  # type: ignore[arg-type]
        issue = inst.call("get_issue", key=KEYS[index % len(KEYS)])
        inst.call("update_issue", issue_id=issue["id"], priority=1 + index % 4)
        inst.call("add_comment", issue_id=issue["id"], body=f"Looked at this in episode {index}.")
        inst.state_json()


def case_episode(count: int, rounds: int) -> dict[str, float]:
    """Whole episodes in process."""
    world = projecttracker.world

    def make(storage: str) -> Callable[[int], None]:
        return lambda index: in_process_episode(world, storage, index)

    return _median_rounds({storage: make(storage) for storage in STORAGES}, count, rounds)


def _step(name: str, /, **arguments: Any) -> str:
    data = {"type": "call_tool", "tool_name": name, "arguments": arguments}
    return json.dumps({"type": "step", "data": data})


async def _wire_episodes(url: str, storage: str, count: int) -> float:
    """Milliseconds per episode over one WebSocket session, ``count`` resets in a row."""
    async with connect(url, compression=None, max_size=None, ping_interval=None) as ws:

        async def exchange(frame: str) -> dict[str, Any]:
            await ws.send(frame)
            reply: dict[str, Any] = json.loads(await ws.recv())
            if reply.get("type") == "error":
                raise SystemExit(f"the server refused a frame: {reply}")
            return reply

        started = time.perf_counter()
        for index in range(count):
            reset = {"fixture": FIXTURE, "seed": index, "storage": storage}
            await exchange(json.dumps({"type": "reset", "data": reset}))
            reply = await exchange(_step("get_issue", key=KEYS[index % len(KEYS)]))
            issue = reply["data"]["observation"]["result"]["id"]
            await exchange(_step("update_issue", issue_id=issue, priority=1 + index % 4))
            await exchange(_step("add_comment", issue_id=issue, body=f"Episode {index}."))
            await exchange(json.dumps({"type": "state"}))
        elapsed = time.perf_counter() - started
        await ws.send(json.dumps({"type": "close"}))
    return elapsed / count * 1000


def _cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def case_wire(count: int, rounds: int) -> dict[str, float]:
    """Whole episodes over the wire, against a ``seahaven serve`` of projecttracker.

    The CPU figure is the server process's, per episode.
    """
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="seahaven-bench-") as tmp:
        server_context = start_server(Path(tmp), world="projecttracker")
        with server_context as server:
            pid = server.process.pid
            for storage in STORAGES:  # warm the server's caches for both
                asyncio.run(_wire_episodes(server.ws_url, storage, 2))
            for _ in range(rounds):
                for storage in STORAGES:
                    cpu = _cpu_seconds(pid)
                    wall = asyncio.run(_wire_episodes(server.ws_url, storage, count))
                    times.setdefault(storage, []).append(wall)
                    spent = (_cpu_seconds(pid) - cpu) / count * 1000
                    times.setdefault(f"{storage} cpu", []).append(spent)
    return {name: statistics.median(values) for name, values in times.items()}


def _resident_kib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1024


def idle_kib(storage: str, count: int) -> float:
    """KiB of RSS per idle company instance of ``storage``, in this (fresh) process."""
    import company_world

    world = company_world.world
    world.instance("acme", storage=storage).destroy()  # type: ignore[arg-type]
    gc.collect()
    before = _resident_kib()
    instances = [
        world.instance("acme", seed=index, storage=storage)  # type: ignore[arg-type]
        for index in range(count)
    ]
    for inst in instances:
        # Idle, but used once: its state document read, as a grader would.
        inst.state_json()
    gc.collect()
    figure = (_resident_kib() - before) / count
    for inst in instances:
        inst.destroy()
    return figure


def case_idle_memory(count: int, rounds: int) -> dict[str, float]:
    """KiB of resident memory per idle company instance (acme, four stores), each storage.

    Each storage is measured in a process of its own, so neither reuses what the
    other freed. A disk instance's files are not in the figure: they are in the
    page cache (or tmpfs), outside the process.
    """
    figures: dict[str, float] = {}
    for storage in STORAGES:
        code = f"import storage; print(storage.idle_kib({storage!r}, {count}))"
        output = subprocess.run(
            [sys.executable, "-c", code],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        figures[storage] = float(output.split()[-1])
    return figures


LEDGER_SCHEMA = """
CREATE TABLE accounts (id TEXT PRIMARY KEY, name TEXT NOT NULL, profile TEXT NOT NULL) STRICT;
CREATE TABLE entries (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    cents INTEGER NOT NULL,
    memo TEXT NOT NULL,
    tags TEXT NOT NULL
) STRICT;
CREATE INDEX entries_by_account ON entries (account_id);
CREATE TABLE events (n INTEGER PRIMARY KEY, entry_id TEXT NOT NULL, payload TEXT NOT NULL) STRICT;
"""
THREE_MB = 3 * 1024 * 1024


def three_megabyte_world(directory: Path) -> tuple[seahaven.World, int]:
    """A ledger world whose fixture ``big`` is frozen into ``directory``: at least 3 MB.

    Three tables and an index of JSON-heavy rows, grown until the frozen file
    passes 3 MB; answers the world and the file's size.
    """
    world = seahaven.World(
        name="bench_ledger",
        version="1.0.0",
        schema=LEDGER_SCHEMA,
        state_format="seahaven.state/1",
        fixtures_dir=directory,
    )
    with world.instance(now="2026-06-01T09:00:00.000Z", storage="disk") as inst:
        with inst.bulk() as ctx:
            ctx.db.executemany(
                "INSERT INTO accounts (id, name, profile) VALUES (?, ?, ?)",
                [
                    (f"acct_{n:04d}", f"Account {n}", json.dumps({"tier": n % 5, "n": n}))
                    for n in range(400)
                ],
            )
            ctx.db.executemany(
                "INSERT INTO entries (id, account_id, cents, memo, tags) VALUES (?, ?, ?, ?, ?)",
                [
                    (
                        f"ent_{n:06d}",
                        f"acct_{n % 400:04d}",
                        (n * 7919) % 100_000,
                        f"Invoice {n} for services rendered in period {n % 12}",
                        json.dumps(["ops", f"q{n % 4}", f"region-{n % 7}"]),
                    )
                    for n in range(16_000)
                ],
            )
            ctx.db.executemany(
                "INSERT INTO events (entry_id, payload) VALUES (?, ?)",
                [
                    (
                        f"ent_{n:06d}",
                        json.dumps({"kind": "posted", "by": f"user{n % 50}", "seq": n}),
                    )
                    for n in range(16_000)
                ],
            )
        fixture = inst.freeze("big", "The storage benchmark's ledger of at least 3 MB.")
    size = fixture.state_path.stat().st_size
    if size < THREE_MB:
        raise SystemExit(f"the benchmark's fixture is {size} bytes, under 3 MB: grow it")
    return world, size


def case_create_3mb(count: int, rounds: int) -> dict[str, float]:
    """Making and destroying an instance of a fixture of at least 3 MB, nothing else."""
    with tempfile.TemporaryDirectory(prefix="seahaven-bench-") as tmp:
        world, size = three_megabyte_world(Path(tmp))
        print(f"  (the ledger fixture is {size / 2**20:.2f} MiB)", flush=True)

        def make(storage: str) -> Callable[[int], None]:
            def create(index: int) -> None:
                world.instance("big", seed=index, storage=storage).destroy()  # type: ignore[arg-type]

            return create

        return _median_rounds({storage: make(storage) for storage in STORAGES}, count, rounds)


CASES: dict[str, tuple[Callable[[int, int], dict[str, float]], int, str, str]] = {
    "create": (case_create, 100, "create + destroy, agency (2.4 MB)", "ms"),
    "create3": (case_create_3mb, 100, "create + destroy, a 3 MB ledger fixture", "ms"),
    "episode": (case_episode, 60, "episode in process, agency", "ms"),
    "wire": (case_wire, 40, "episode over the wire, agency", "ms"),
    "idle": (case_idle_memory, 200, "RSS per idle company instance (acme)", "KiB"),
}


def main(argv: list[str]) -> int:
    """Run the chosen cases (all by default) and print their medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", choices=[*CASES, []], default=[])
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds per case")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every case's count")
    parser.add_argument("--markdown", action="store_true", help="also print a Markdown table")
    arguments = parser.parse_args(argv)
    print(
        f"seahaven {seahaven.__version__}, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs; medians of {arguments.rounds} rounds",
        flush=True,
    )
    rows = []
    for name in arguments.cases or list(CASES):
        case, count, label, unit = CASES[name]
        figures = case(max(1, int(count * arguments.scale)), arguments.rounds)
        ratio = figures["memory"] / figures["disk"]
        if unit == "KiB":
            extra = (
                f"  (1,000 instances: memory {figures['memory'] * 1000 / 2**20:.2f} GiB, "
                f"disk {figures['disk'] * 1000 / 2**20:.2f} GiB)"
            )
        else:
            cpu_ratio = figures["memory cpu"] / figures["disk cpu"]
            extra = (
                f"  ({1000 / figures['memory']:.0f} vs {1000 / figures['disk']:.0f} a second); "
                f"cpu memory {figures['memory cpu']:.3f} disk {figures['disk cpu']:.3f} "
                f"ratio {cpu_ratio:.2f}"
            )
        print(
            f"{label:<40} memory {figures['memory']:9.3f} {unit}   disk {figures['disk']:9.3f} "
            f"{unit}   memory/disk {ratio:5.2f}{extra}",
            flush=True,
        )
        rows.append((label, figures, unit, ratio))
    print(f"fixture images cached in this process: {cached_image_bytes() / 2**20:.1f} MiB")
    if arguments.markdown:
        print(
            "\n| case | memory | disk | memory / disk | CPU memory | CPU disk | CPU ratio |"
            "\n|---|---|---|---|---|---|---|"
        )
        for label, figures, unit, ratio in rows:
            cpu = (
                f"{figures['memory cpu']:.3f} {unit} | {figures['disk cpu']:.3f} {unit} | "
                f"{figures['memory cpu'] / figures['disk cpu']:.2f}"
                if "memory cpu" in figures
                else "- | - | -"
            )
            print(
                f"| {label} | {figures['memory']:.3f} {unit} | {figures['disk']:.3f} {unit} | "
                f"{ratio:.2f} | {cpu} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
