"""What the agent harness costs a model turn, and what running trials at once buys.

Two measurements, each against its baseline in the same run, in alternating rounds, reported
as medians. The model is the agents plugin's scripted Chat Completions server playing every
scenario's reference solution, in a process of its own (``python -m seahaven_agents.testing``),
so its work is not this process's.

* **Cost a model turn.** The company pack, one trial of each scenario, one at a time, played
  three ways against the same server answering at once:

  - *harness*: ``seahaven.evaluation.evaluate(pack, ChatAgent(...))``, the whole of
    ``seahaven eval --model``: the trial (its instance, budget and ``submit``), the agent's
    loop, retries and transcript, the grading, and the results and transcripts files;
  - *direct, as sent*: the same loop written on the ``openai`` client and a world instance,
    nothing else: the instance made from the scenario's start, its tools as function schemas,
    each turn posted as JSON with ``client.post`` (as the harness posts it), each tool call
    made on the instance; no trial, no grading, no files;
  - *direct, create()*: that loop with ``client.chat.completions.create``, as the SDK's
    documentation writes it.

  Figures are wall and CPU time per model call, medians over rounds; a ratio is the median of
  the rounds' ratios of the harness's figure to a direct loop's (the ways take turns within a
  round). Target: within 1.2x of the direct loop.

* **Trials at once.** The company pack, ``--trials 2`` (124 trials; ``--trials N`` here),
  with the server answering after 50 ms, run by the runner ``seahaven eval --concurrency N``
  uses, with N = 1 and N = 32, and N = 32 over two worker processes (``--workers 2``, their
  start inside the time): trials per second, and their ratio. Target: at least 20x.

It also reports the world's own share of a trial (the solution policy with no model: making
the instance, the calls, the grading) and the longest a single trial's world work held the
event loop. Nothing asserts. Run it with

    .venv/bin/python benchmarks/agents.py --markdown
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
from seahaven_agents import DEFAULT_SYSTEM_PROMPT, ChatAgent, function_schemas

import seahaven
from seahaven.evaluation import evaluate, in_process, plan, solution_policy
from seahaven.scenarios import load_pack
from seahaven.scenarios.trial import submit_listing

PACK = "company"


@contextmanager
def served(delay: float) -> Iterator[str]:
    """The scripted server in a process of its own, playing the pack's solutions; its URL."""
    server = subprocess.Popen(
        [sys.executable, "-m", "seahaven_agents.testing", PACK, "--delay", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(30)


def timed(run: Callable[[], int]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and the count ``run`` returns."""
    wall, cpu = time.perf_counter(), time.process_time()
    count = run()
    return time.perf_counter() - wall, time.process_time() - cpu, count


# --- the harness ---------------------------------------------------------------------------


def harness(url: str, folder: Path) -> Callable[[], int]:
    pack = load_pack(PACK)
    runs = iter(range(10**6))

    def run() -> int:
        number = next(runs)
        summary, _ = evaluate(
            pack,
            ChatAgent("scripted", base_url=url),
            out=folder / f"h{number}.jsonl",
            transcripts=folder / f"h{number}.transcripts.jsonl",
            runner=in_process(concurrency=1),
        )
        assert summary.mean == 1.0, summary.render()
        return summary.usage["model_calls"]

    return run


# --- the same loop, written directly on the client and an instance ---------------------------


def direct(
    url: str, *, create: bool, trials: int = 1, concurrency: int = 1, count_trials: bool = False
) -> Callable[[], int]:
    pack = load_pack(PACK)
    specs = plan(pack, trials=trials)
    world = specs[0].scenario.resolve_world()

    async def play(client: openai.AsyncOpenAI, spec: Any) -> int:
        options = spec.scenario.start.instance_options(seed=spec.seed)
        instance = world.instance(**options)
        try:
            tools = [*instance.tools(), submit_listing()]
            schemas, _ = function_schemas(tools)
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": DEFAULT_SYSTEM_PROMPT},
                {"role": "user", "content": spec.scenario.instructions},
            ]
            calls = 0
            for _ in range(40):
                if create:
                    reply = await client.chat.completions.create(
                        model="scripted",
                        messages=messages,  # type: ignore[arg-type]
                        tools=schemas,  # type: ignore[arg-type]
                    )
                    message = reply.choices[0].message.model_dump(exclude_none=True)
                else:
                    body = {"model": "scripted", "messages": messages, "tools": schemas}
                    raw = await client.post(
                        "/chat/completions",
                        content=json.dumps(body).encode(),
                        cast_to=bytes,
                        options={"headers": {"Content-Type": "application/json"}},
                    )
                    message = json.loads(raw)["choices"][0]["message"]
                calls += 1
                messages.append(message)
                if not message.get("tool_calls"):
                    break
                for call in message["tool_calls"]:
                    name = call["function"]["name"]
                    arguments = json.loads(call["function"]["arguments"] or "{}")
                    if name == "submit":
                        return calls
                    try:
                        result: Any = instance.call(name, **arguments)
                    except seahaven.ToolError as refused:
                        result = {"error": refused.to_dict()}
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": call["id"],
                            "content": json.dumps(result, default=str),
                        }
                    )
            return calls
        finally:
            instance.destroy()

    def run() -> int:
        async def all_of_them() -> int:
            client = openai.AsyncOpenAI(api_key="EMPTY", base_url=url, max_retries=0)
            slots = asyncio.Semaphore(concurrency)

            async def one(spec: Any) -> int:
                async with slots:
                    return await play(client, spec)

            try:
                calls = await asyncio.gather(*(one(spec) for spec in specs))
            finally:
                await client.close()
            return len(calls) if count_trials else sum(calls)

        return asyncio.run(all_of_them())

    return run


# --- trials at once --------------------------------------------------------------------------


def at_once(
    url: str, concurrency: int, folder: Path, workers: int = 1, trials: int = 2
) -> Callable[[], int]:
    pack = load_pack(PACK)
    runs = iter(range(10**6))

    def run() -> int:
        number = next(runs)
        name = f"c{concurrency}-w{workers}-{number}"
        summary, results = evaluate(
            pack,
            ChatAgent("scripted", base_url=url),
            trials=trials,
            out=folder / f"{name}.jsonl",
            transcripts=folder / f"{name}.transcripts.jsonl",
            runner=in_process(concurrency=concurrency, workers=workers),
        )
        assert summary.mean == 1.0, summary.render()
        return len(results)

    return run


def world_share() -> tuple[float, float]:
    """Milliseconds a company trial's world work takes (median, and the longest)."""
    pack = load_pack(PACK)
    _, results = evaluate(pack, solution_policy, trials=2)
    seconds = sorted(result.seconds for result in results)
    return statistics.median(seconds) * 1000, seconds[-1] * 1000


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--concurrency-rounds", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--trials", type=int, default=2, help="trials of each scenario in the runs at once"
    )
    options = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="seahaven-bench-agents-"))
    turns: dict[str, list[tuple[float, float]]] = {}
    with served(0.0) as url:
        ways = {
            "harness": harness(url, folder),
            "direct, as sent": direct(url, create=False),
            "direct, create()": direct(url, create=True),
        }
        for way in ways.values():
            way()  # warm: imports, the fixture's image, the solution replays
        for _ in range(options.rounds):
            for name, way in ways.items():
                wall, cpu, calls = timed(way)
                turns.setdefault(name, []).append((wall / calls, cpu / calls))
    rates: dict[str, list[float]] = {}
    with served(0.05) as url:
        runs = {
            "harness, --concurrency 1": at_once(url, 1, folder, trials=options.trials),
            "harness, --concurrency 32": at_once(url, 32, folder, trials=options.trials),
            "harness, --concurrency 32 --workers 2": at_once(
                url, 32, folder, workers=2, trials=options.trials
            ),
            "direct, as sent, 32 at once": direct(
                url, create=False, trials=options.trials, concurrency=32, count_trials=True
            ),
        }
        for run in runs.values():
            run()  # warm
        for _ in range(options.concurrency_rounds):
            for name, run in runs.items():
                wall, _, trials = timed(run)
                rates.setdefault(name, []).append(trials / wall)
    world_ms, world_most = world_share()
    median = {
        name: (
            statistics.median(wall for wall, _ in rows) * 1000,
            statistics.median(cpu for _, cpu in rows) * 1000,
        )
        for name, rows in turns.items()
    }
    # Each round's ratio, then their median: the rounds ran side by side, so a round's two
    # figures saw the same machine, which the medians of the two columns need not have.
    ratios = {
        name: (
            statistics.median(h[0] / r[0] for h, r in zip(turns["harness"], rows, strict=True)),
            statistics.median(h[1] / r[1] for h, r in zip(turns["harness"], rows, strict=True)),
        )
        for name, rows in turns.items()
    }
    rate = {name: statistics.median(values) for name, values in rates.items()}
    one = rate["harness, --concurrency 1"]
    cpus = os.cpu_count()
    machine = (
        f"Python {platform.python_version()}, openai {openai.__version__}, {cpus} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    if options.markdown:
        print(f"{machine}; {options.rounds} rounds a turn, {options.concurrency_rounds} at once\n")
        print("| way | wall a model call | CPU a model call | harness / this, wall | CPU |")
        print("|---|---|---|---|---|")
        for name, (wall, cpu) in median.items():
            wall_ratio, cpu_ratio = ratios[name]
            print(
                f"| {name} | {wall:.2f} ms | {cpu:.2f} ms | {wall_ratio:.2f}x | {cpu_ratio:.2f}x |"
            )
        print()
        print("| run, model answering after 50 ms | trials/s | vs --concurrency 1 |")
        print("|---|---|---|")
        for name, value in rate.items():
            print(f"| {name} | {value:.1f} | {value / one:.1f}x |")
        print(
            f"\nworld work a trial (no model): median {world_ms:.1f} ms, "
            f"longest {world_most:.1f} ms"
        )
    else:
        print(machine)
        for name, (wall, cpu) in median.items():
            wall_ratio, cpu_ratio = ratios[name]
            print(
                f"{name:<18} {wall:7.2f} ms wall {cpu:7.2f} ms CPU a model call   harness/this "
                f"{wall_ratio:.2f}x wall {cpu_ratio:.2f}x CPU"
            )
        for name, value in rate.items():
            print(f"{name:<30} {value:7.1f} trials/s  ({value / one:.1f}x)")
        print(f"world work a trial: median {world_ms:.1f} ms, longest {world_most:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
