"""Realistic episodes a second: the airline pack's gold actions, replayed, one state read each.

Each episode is what a harness runs for one task of the ``airline`` pack (issue
34's world: tau2-bench's airline database as fixture ``initial``, about 12,000
rows): a fresh instance of the fixture in memory (a runner's default), the
task's gold tool calls, and one ``state()`` at the end. A round runs every task
once; the figure is episodes a second over the round, the median of the rounds.

With ``--against DIR`` (a checkout of other Seahaven code, such as a ``git
worktree`` of an older commit) the same rounds also run with that checkout's
``seahaven`` package first on the path, in a process of its own, alternating
with this code's process round by round so both see the same machine noise;
the ratio is this code's rate over that one's. Both sides run this code's airline world unless
``--against-world DIR`` names a checkout whose airline world the other side runs instead (the
world as it was, to count what the world's own changes bought too). Nothing asserts. Run it with

    .venv/bin/python benchmarks/airline_episodes.py --rounds 7
    git worktree add --detach /tmp/old 3641c8b
    .venv/bin/python benchmarks/airline_episodes.py --against /tmp/old --rounds 7
    git worktree add --detach /tmp/mw b8be88f
    .venv/bin/python benchmarks/airline_episodes.py --against /tmp/old --against-world /tmp/mw
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from against import Side, load_checkout, load_package

# The calls a replay leaves out: the agent's messages and the end of the conversation.
NOT_TOOLS = ("message_user", "submit")


def gold_calls() -> list[list[tuple[str, dict[str, Any]]]]:
    """Each airline task's gold tool calls, in order, read through this code's pack loader."""
    from seahaven.scenarios import load_pack

    return [
        [
            (step.tool, dict(step.arguments))
            for step in scenario.solution or ()
            if step.tool not in NOT_TOOLS
        ]
        for scenario in load_pack("airline")
    ]


def _episode(world: Any, steps: list[tuple[str, dict[str, Any]]]) -> int:
    """One episode: a fresh in-memory instance, the gold calls, one state read."""
    import seahaven

    with world.instance("initial", storage="memory") as inst:
        for tool, arguments in steps:
            with contextlib.suppress(seahaven.ToolError):
                inst.call(tool, **arguments)
        return len(inst.state()["state"]["db"]["log"])


def _round() -> dict[str, float]:
    """Run every task once; print and return the rate and the records the reads held."""
    tasks = _ROUND_TASKS
    started, cpu_started = time.perf_counter(), time.process_time()
    records = sum(_episode(world, steps) for world, steps in tasks)
    seconds = time.perf_counter() - started
    # This process's CPU time too: on a shared machine waiting for a core moves the wall
    # clock, not this (the caches shared with other work still move both).
    cpu_seconds = time.process_time() - cpu_started
    return {
        "episodes_per_second": len(tasks) / seconds,
        "episodes_per_cpu_second": len(tasks) / cpu_seconds if cpu_seconds > 0 else 0.0,
        "episodes": len(tasks),
        "records": records,
    }


_ROUND_TASKS: list[tuple[Any, list[tuple[str, dict[str, Any]]]]] = []


def serve_rounds(calls: Path, checkout: Path | None, world_from: Path | None = None) -> None:
    """The child's side: a round each time a line arrives on stdin, its figures on stdout.

    The gold calls come from the parent, so an older checkout whose pack
    loader cannot read today's pack replays the same calls on the same world.
    With ``world_from`` the side runs that checkout's airline world instead.
    """
    if checkout is not None:
        load_checkout(checkout)
    if world_from is not None:
        load_package("airline_world", world_from / "worlds" / "airline" / "src" / "airline_world")
    import airline_world

    import seahaven

    tasks = [(airline_world.world, steps) for steps in json.loads(calls.read_text())]
    _ROUND_TASKS.extend(tasks)
    _episode(*_ROUND_TASKS[0])  # the first instance pays for imports and the fixture's cache
    print(json.dumps({"ready": True, "seahaven": seahaven.__file__}), flush=True)
    for _ in sys.stdin:
        print(json.dumps(_round()), flush=True)


def main(argv: list[str]) -> int:
    """Alternate the rounds of each side; print medians and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--against", type=Path, help="a checkout whose seahaven to compare with")
    parser.add_argument(
        "--against-world",
        type=Path,
        help="a checkout whose airline world the other side runs (default: this code's)",
    )
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--world-from", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    checkout = arguments.against.resolve() if arguments.against is not None else None
    if arguments.serve is not None:
        serve_rounds(arguments.serve, checkout, arguments.world_from)
        return 0
    with tempfile.TemporaryDirectory(prefix="seahaven-airline-") as scratch:
        calls = Path(scratch) / "calls.json"
        calls.write_text(json.dumps(gold_calls()), encoding="utf-8")
        sides = [Side("this code", __file__, ["--serve", str(calls)], None)]
        if checkout is not None:
            other = ["--serve", str(calls)]
            name = str(checkout)
            if arguments.against_world is not None:
                world = arguments.against_world.resolve()
                other += ["--world-from", str(world)]
                name += f" (airline world of {world})"
            sides.append(Side(name, __file__, other, checkout))
        return _run(sides, arguments.rounds)


def _run(sides: list[Side], rounds: int) -> int:
    for side in sides:
        print(f"{side.name}: seahaven from {side.loaded_from}", flush=True)
    rates: dict[str, list[float]] = {side.name: [] for side in sides}
    cpu_rates: dict[str, list[float]] = {side.name: [] for side in sides}
    shape: dict[str, Any] = {}
    for _ in range(rounds):
        for side in sides:
            figures = side.round()
            rates[side.name].append(figures["episodes_per_second"])
            # A checkout older than this figure has none: its column is left out.
            if "episodes_per_cpu_second" in figures:
                cpu_rates[side.name].append(figures["episodes_per_cpu_second"])
            shape = figures
    for side in sides:
        side.close()
    print(
        f"airline: {shape['episodes']} episodes a round (gold actions, one state read each, "
        f"in memory), medians of {rounds} rounds; load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    medians = {name: statistics.median(values) for name, values in rates.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu_rates.items() if values}
    for name, median in medians.items():
        cpu = f", {cpu_medians[name]:8.1f} a CPU second" if name in cpu_medians else ""
        print(f"  {name:<40} {median:8.1f} episodes/s{cpu}")
    if len(sides) == 2:
        this, other = (medians[side.name] for side in sides)
        print(f"  ratio (this code over the other): {this / other:.2f}")
        if len(cpu_medians) == 2:
            this, other = (cpu_medians[side.name] for side in sides)
            print(f"  ratio in CPU time: {this / other:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
