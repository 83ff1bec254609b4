"""Seahaven's airline and retail worlds against tau2-bench itself: the same verdicts, and speed.

For every task of each domain, the gold actions are replayed twice: in
tau2-bench's own environment (``tau2_side.py``, run by tau2-bench's own
interpreter) and in a trial of the task's scenario here. Then, task by task:

* **agreement**: every tool call answers the same (the same JSON, or the same
  refusal text), and the two end databases are the same, table by table: the
  benchmark's end database is put through the world's own fixture mapping
  (``fixtures_src/generate.py``'s ``tables``) and compared with every row of
  every table of the instance, as multisets; and both graders pass it;
* **refusals**: the calls of ``tau2_calls.json`` (refusals of every kind, and
  reads the gold actions never make), made in turn on one environment or
  instance per domain, answer the same;
* **speed**: an episode (a fresh environment or instance, and the gold calls;
  here also as a trial, which keeps an image of its start for the grade's replay)
  and a grade (tau2-bench's environment and communicate checks, which replay
  the gold actions on a second fresh environment; here the scenario's grader,
  whose ``matches_solution`` replays them too, on a seed never seen before).
  The figures are medians; the ratio is tau2-bench's over Seahaven's.

With ``--cpu`` every time is CPU time (each side's process's) instead of the
wall clock: on a machine other work shares, that is what each side costs,
where the wall clock adds whatever else ran meanwhile, and more to the side
that ran while more did.

tau2-bench is never a dependency of the project. Install it from its source in
a virtualenv of its own (Python 3.12) and name that interpreter::

    python3.12 -m venv /tmp/tau2venv && /tmp/tau2venv/bin/pip install -e <tau2-bench checkout>
    .venv/bin/python benchmarks/tau2_domains.py --tau2-python /tmp/tau2venv/bin/python --markdown

Without ``--tau2-python`` (or ``$SEAHAVEN_TAU2_PYTHON``) it says so and stops.
Nothing asserts; a disagreement is printed and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic_core import to_jsonable_python
from tau2_telecom import run_telecom

import seahaven
from seahaven.scenarios import Scenario, ScenarioSet, Trial, load_pack

ROOT = Path(__file__).resolve().parents[1]
DOMAINS = ("airline", "retail")
ALL_DOMAINS = (*DOMAINS, "telecom")
MESSAGE = "message_user"
PYTHON_VARIABLE = "SEAHAVEN_TAU2_PYTHON"
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
"""The clocks the times may be taken on; tau2_side.py reads the name from $SEAHAVEN_TAU2_CLOCK."""


class _TimedTrial(Trial):
    """A trial that also times its grade on the benchmark's clock (``grade_time``).

    ``Trial.grade_seconds`` is on the wall clock; with ``--cpu`` the grade's CPU
    time is wanted, so the grade is timed here around the trial's own ending.
    """

    clock: Callable[[], float] = time.perf_counter
    grade_time: float | None = None

    def _end(self) -> Any:
        started = self.clock()
        try:
            return super()._end()
        finally:
            self.grade_time = self.clock() - started


def _generator(domain: str) -> ModuleType:
    """The domain's committed fixture generator (both worlds call their package fixtures_src)."""
    for name in [name for name in sys.modules if name.split(".")[0] == "fixtures_src"]:
        del sys.modules[name]
    sys.path.insert(0, str(ROOT / "worlds" / domain))
    try:
        return importlib.import_module("fixtures_src.generate")
    finally:
        sys.path.pop(0)


def _data_dir(source: Path) -> Path:
    """tau2-bench's data layout (tau2/domains/<domain>/...), linked to the project's copy.

    Telecom's task set is read from ``tasks.json``: the small set is linked there.
    """
    root = Path(tempfile.mkdtemp(prefix="tau2-data-"))
    for domain in ALL_DOMAINS:
        folder = root / "tau2" / "domains" / domain
        folder.mkdir(parents=True)
        for item in (source / domain).iterdir():
            (folder / item.name).symlink_to(item)
    (root / "tau2" / "domains" / "telecom" / "tasks.json").symlink_to(
        source / "telecom" / "tasks_small.json"
    )
    return root


def _tau2_runs(
    python: str, domain: str, data: Path, out: Path, clock: str = "wall"
) -> dict[str, dict[str, Any]]:
    """Run tau2-bench's half for one domain, timed on ``clock``; its line per task, by task id."""
    done = subprocess.run(
        [python, str(Path(__file__).with_name("tau2_side.py")), domain, str(out)],
        env={
            **os.environ,
            "TAU2_DATA_DIR": str(data),
            "LOGURU_LEVEL": "ERROR",
            "SEAHAVEN_TAU2_CLOCK": clock,
        },
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"tau2-bench's side failed:\n{done.stderr[-3000:]}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {line["task"]: line for line in lines}


def _parsed(value: Any) -> Any:
    """A tool's answer as tau2-bench's replay compares them: JSON text read as JSON."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _plain_episode(scenario: Scenario, clock: Callable[[], float]) -> float:
    """An episode as the world runs it: a fresh instance of the fixture, the gold calls.

    In memory, as a trial's and every runner's instances are (and telecom's plain
    episode is): a library caller's default instance is files in a directory.
    """
    world = scenario.resolve_world()
    steps = [step for step in scenario.solution or () if step.tool not in ("submit", MESSAGE)]
    started = clock()
    with world.instance("initial", storage="memory") as inst:
        for step in steps:
            with contextlib.suppress(seahaven.ToolError):
                inst.call(step.tool, **step.arguments)
        return clock() - started


def _ours(
    scenario: Scenario, seed: int, clock: Callable[[], float]
) -> tuple[float, float, list[Any], Trial, Any]:
    """Play the reference conversation in a trial; time the episode and the grade; keep it open.

    The conversation is the gold actions with the agent's messages to the scripted
    customer between them; its last message is the one the customer ends the
    conversation on, and the trial grades the episode then. A trial's episode
    costs more than a plain one: a grader that replays the solution makes it keep
    an image of the start. The grade replays the reference conversation from that
    image, as this seed has not been graded before.
    """
    started = clock()
    trial = _TimedTrial(scenario, seed=seed)
    trial.clock = clock
    answers: list[Any] = []
    for step in scenario.solution or ():
        if step.tool == MESSAGE:
            trial.call(MESSAGE, **step.arguments)
            continue
        try:
            answers.append(_parsed(to_jsonable_python(trial.call(step.tool, **step.arguments))))
        except seahaven.ToolError as refused:
            answers.append(f"Error: {refused.message}")
    whole = clock() - started
    grade = trial.grade
    if grade is None or trial.grade_time is None:
        raise SystemExit(f"{scenario.id}: the customer did not end the reference conversation")
    return whole - trial.grade_time, trial.grade_time, answers, trial, grade


def _tables_differ(
    generate: ModuleType, instance: seahaven.Instance, database: dict[str, Any]
) -> list[str]:
    """The tables whose rows differ between the instance and tau2-bench's end database."""
    theirs = generate.tables(database)
    differing = []
    for table, columns in generate.COLUMNS.items():
        mine = instance.inspect().rows(f"SELECT {', '.join(columns)} FROM {table}")
        if Counter(tuple(row.values()) for row in mine) != Counter(theirs[table]):
            differing.append(table)
    return differing


def run_domain(domain: str, python: str, data: Path, clock: str = "wall") -> dict[str, Any]:
    """Agreement and speed for one domain, timed on ``clock`` (a name in ``CLOCKS``)."""
    generate = _generator(domain)
    pack: ScenarioSet = load_pack(domain)
    with tempfile.TemporaryDirectory(prefix="tau2-end-") as out:
        theirs = _tau2_runs(python, domain, data, Path(out), clock)
        problems: list[str] = []
        timings: dict[str, list[float]] = {
            "ours_plain": [],
            "ours_episode": [],
            "ours_grade": [],
            "tau2_episode": [],
            "tau2_grade": [],
        }
        for seed, scenario in enumerate(pack, start=1000):
            task = scenario.id.removeprefix("task-")
            line = theirs[task]
            plain = _plain_episode(scenario, CLOCKS[clock])
            episode, graded, answers, trial, grade = _ours(scenario, seed, CLOCKS[clock])
            instance = trial.instance
            try:
                expected = [
                    f"{result['content']}" if result["error"] else _parsed(result["content"])
                    for result in line["results"]
                ]
                for number, (mine, tau2) in enumerate(zip(answers, expected, strict=True)):
                    if mine != tau2:
                        problems.append(f"{scenario.id} call {number}: {mine!r} != {tau2!r}")
                database = json.loads(Path(line["database"]).read_text())
                for table in _tables_differ(generate, instance, database):
                    problems.append(f"{scenario.id}: table {table} differs")
                if not grade.passed:
                    problems.append(f"{scenario.id}: Seahaven's grade failed: {grade.summary()}")
                if line["db_reward"] != 1.0 or line["communicate_reward"] not in (None, 1.0):
                    problems.append(f"{scenario.id}: tau2-bench's grade failed: {line}")
            finally:
                trial.close()
            timings["ours_plain"].append(plain)
            timings["ours_episode"].append(episode)
            timings["ours_grade"].append(graded)
            timings["tau2_episode"].append(line["episode_s"])
            timings["tau2_grade"].append(line["grade_s"])
    medians = {key: statistics.median(values) for key, values in timings.items()}
    return {"domain": domain, "tasks": len(pack), "problems": problems, **medians}


def run_calls(python: str, data: Path) -> tuple[int, list[str]]:
    """The calls of ``tau2_calls.json`` made in both; how many, and each that answered otherwise."""
    listed = Path(__file__).with_name("tau2_calls.json")
    done = subprocess.run(
        [python, str(Path(__file__).with_name("tau2_side.py")), "calls", str(listed)],
        env={**os.environ, "TAU2_DATA_DIR": str(data), "LOGURU_LEVEL": "ERROR"},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"tau2-bench's side failed:\n{done.stderr[-3000:]}")
    theirs = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    cases = json.loads(listed.read_text())
    worlds = {name: load_pack(name).scenarios[0].resolve_world() for name in ALL_DOMAINS}
    instances = {name: world.instance("initial") for name, world in worlds.items()}
    problems = []
    try:
        for (domain, tool, arguments), answer in zip(cases, theirs, strict=True):
            try:
                mine = _parsed(to_jsonable_python(instances[domain].call(tool, **arguments)))
            except seahaven.ToolError as refused:
                mine = f"Error: {refused.message}"
            expected = answer["content"] if answer["error"] else _parsed(answer["content"])
            if mine != expected:
                problems.append(f"{domain} {tool} {arguments}: {mine!r} != {expected!r}")
    finally:
        for instance in instances.values():
            instance.destroy()
    return len(cases), problems


def _load() -> str:
    """The machine's load averages now (1, 5 and 15 minutes), or "unknown"."""
    try:
        return ", ".join(f"{value:.1f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def _report(rows: list[dict[str, Any]], markdown: bool) -> None:
    header = (
        "| Domain | Tasks | Agree | Episode: tau2-bench | Seahaven | Ratio | Trial episode | Ratio "
        "| Grade: tau2-bench | Seahaven | Ratio |"
    )
    if markdown:
        print(header)
        print("|---" * 11 + "|")
    for row in rows:
        failing = {problem.split(":")[0].split(" ")[0] for problem in row["problems"]}
        cells = [
            row["domain"],
            str(row["tasks"]),
            f"{row['tasks'] - len(failing)}/{row['tasks']}",
            f"{row['tau2_episode'] * 1e3:.0f} ms",
            f"{row['ours_plain'] * 1e3:.2f} ms",
            f"{row['tau2_episode'] / row['ours_plain']:.0f}x",
            f"{row['ours_episode'] * 1e3:.2f} ms",
            f"{row['tau2_episode'] / row['ours_episode']:.0f}x",
            f"{row['tau2_grade'] * 1e3:.0f} ms",
            f"{row['ours_grade'] * 1e3:.2f} ms",
            f"{row['tau2_grade'] / row['ours_grade']:.0f}x",
        ]
        print(("| " + " | ".join(cells) + " |") if markdown else "  ".join(cells))
        if "verdicts" in row:
            agree, differ = row["verdicts"]["agree"], row["verdicts"]["differ"]
            print(f"  {row['domain']}: verdicts agree on {agree} of {agree + differ} episodes")
        for problem in row["problems"]:
            print(f"  disagreement: {problem}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tau2-python", default=os.environ.get(PYTHON_VARIABLE))
    parser.add_argument("--domains", nargs="*", default=list(ALL_DOMAINS), choices=ALL_DOMAINS)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--cpu", action="store_true", help="time on each process's CPU time, not the wall clock"
    )
    options = parser.parse_args(argv)
    if not options.tau2_python:
        print(
            f"skipped: tau2-bench is not installed here; give --tau2-python (or "
            f"${PYTHON_VARIABLE}) the interpreter of a virtualenv it is installed in"
        )
        return 0
    source = _generator("airline").tau2_data("airline")
    if source is None:
        print("skipped: tau2-bench's data is not here (set SEAHAVEN_TAU2_DATA)")
        return 0
    data = _data_dir(source.parent)
    count, refusals = run_calls(options.tau2_python, data)
    clock = "cpu" if options.cpu else "wall"
    rows = []
    for domain in options.domains:
        if domain == "telecom":
            with tempfile.TemporaryDirectory(prefix="tau2-end-") as out:
                theirs = _tau2_runs(options.tau2_python, "telecom", data, Path(out), clock)
                rows.append(run_telecom(theirs, CLOCKS[clock]))
        else:
            rows.append(run_domain(domain, options.tau2_python, data, clock))
    print(f"Python {sys.version.split()[0]}, tau2-bench at {options.tau2_python}")
    print(f"times on the {'CPU' if options.cpu else 'wall'} clock; load average {_load()}")
    print(f"tau2_calls.json: {count - len(refusals)} of {count} calls answer the same")
    for problem in refusals:
        print(f"  disagreement: {problem}")
    _report(rows, options.markdown)
    return 1 if refusals or any(row["problems"] for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
