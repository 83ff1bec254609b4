"""Trials spread over worker processes: the same results, crashes, refusals, and clean stops.

Real worker processes throughout (``seahaven.evaluation.processes``); the policies they run
are in ``process_policies``, a module a worker imports by name.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import process_policies
import pytest

import seahaven
from seahaven.errors import SeahavenError
from seahaven.evaluation import (
    PolicySession,
    evaluate,
    in_process,
    plan,
    run_in_processes,
    solution_policy,
)
from seahaven.evaluation.processes import split_concurrency
from seahaven.evaluation.worker import RESULTS_BATCH
from seahaven.scenarios import ScenarioSet, load_pack

# What may differ between two runs of the same trials: how long they took. The company pack's
# start leaves its clock on wall time, so the hash of the state its tools stamp differs too,
# from one run to the next in one process as well.
VARIES = {"seconds", "episode_seconds", "grade_seconds", "state_sha256"}


@pytest.fixture(scope="module")
def company() -> ScenarioSet:
    return load_pack("company")


def comparable(path: Path) -> list[dict[str, Any]]:
    """A results file's lines without what varies, in the plan's order."""
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    kept = [{k: v for k, v in line.items() if k not in VARIES} for line in lines]
    return sorted(kept, key=lambda line: (line["scenario"], line["trial"]))


def workers_of(parent: int) -> list[int]:
    """The child processes of ``parent`` (forked workers or spawned ones), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended while we looked
        # The parent's pid is the second field after the command's closing parenthesis.
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            found.append(int(entry.name))
    return found


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_concurrency_is_shared_out_evenly_and_never_below_one_a_worker() -> None:
    assert split_concurrency(8, 2) == [4, 4]
    assert split_concurrency(5, 2) == [3, 2]
    assert split_concurrency(1, 4) == [1]


def test_two_workers_give_the_lines_one_process_gives(company: ScenarioSet, tmp_path: Path) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    notes = tmp_path / "two.transcripts.jsonl"
    _, alone = evaluate(company, solution_policy, trials=2, out=one)
    summary, spread = evaluate(
        company, solution_policy, trials=2, out=two, workers=2, transcripts=notes
    )
    assert comparable(one) == comparable(two) and len(spread) == 2 * len(company)
    assert summary.mean == 1.0 and summary.errored == 0
    # Returned in the plan's order, with the seeds of the plan, however they ended.
    assert [result.key for result in spread] == [spec.key for spec in plan(company, trials=2)]
    assert [r.seed for r in spread] == [r.seed for r in alone]
    assert {result.runner for result in spread} == {"in process"}
    # Every trial's transcript came back from its worker, with its calls.
    recorded = [json.loads(line) for line in notes.read_text().splitlines()]
    assert sorted((t["scenario"], t["trial"]) for t in recorded) == sorted(
        result.key for result in spread
    )


def test_workers_running_two_trials_at_once_give_the_same_lines(
    company: ScenarioSet, tmp_path: Path
) -> None:
    # Two at once a worker: each runs them on its event loop, not in turn.
    scenarios = [scenario.id for scenario in company][::4]
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    evaluate(company, solution_policy, scenarios=scenarios, trials=3, out=one)
    at_once = in_process(workers=2, concurrency=4)
    summary, _ = evaluate(
        company, solution_policy, scenarios=scenarios, trials=3, out=two, runner=at_once
    )
    assert comparable(one) == comparable(two) and summary.mean == 1.0


def test_spawned_workers_give_the_lines_one_process_gives_too(
    company: ScenarioSet, tmp_path: Path
) -> None:
    scenarios = [scenario.id for scenario in company][::3]
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    evaluate(company, solution_policy, scenarios=scenarios, trials=2, out=one)
    spawned = functools.partial(run_in_processes, workers=2, concurrency=2, start_method="spawn")
    summary, _ = evaluate(
        company, solution_policy, scenarios=scenarios, trials=2, out=two, runner=spawned
    )
    assert comparable(one) == comparable(two) and summary.mean == 1.0


def test_the_default_start_forks_only_a_process_of_one_thread() -> None:
    from seahaven.evaluation.processes import choose_start_method

    # A fresh interpreter has its main thread alone; this one may not (a test before this one
    # in the same process can leave threads behind: torch's, after TRL's trainer test).
    alone = subprocess.run(
        [
            sys.executable,
            "-c",
            "from seahaven.evaluation.processes import choose_start_method\n"
            "print(choose_start_method(None))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert alone.stdout.strip() == "fork"
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert choose_start_method(None) == "spawn"
    finally:
        stop.set()
        other.join()
    with pytest.raises(seahaven.WorldBug, match="'fork', 'spawn' or None"):
        choose_start_method("forkserver")


def test_a_trial_past_its_time_limit_in_a_worker_is_the_agents_failure(
    company: ScenarioSet,
) -> None:
    scenarios = [scenario.id for scenario in company][:3]
    summary, results = evaluate(
        company,
        process_policies.stalls,
        scenarios=scenarios,
        runner=in_process(workers=2, concurrency=4, trial_timeout=0.2),
    )
    assert len(results) == 3 and summary.errored == 0
    for result in results:
        assert result.error is not None and result.error.kind == "timeout"
        assert result.score == 0.0 and not result.errored


def test_a_worker_that_dies_makes_its_trials_errored_and_the_others_go_on(
    company: ScenarioSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "r.jsonl"
    monkeypatch.setenv(process_policies.MARKER, str(tmp_path / "died"))
    policy = process_policies.dies_once_on_one_scenario
    summary, results = evaluate(company, policy, out=out, workers=2)
    lost = [result for result in results if result.errored]
    # The trial it ran, and those whose results it had not sent yet (a worker running its
    # trials in turn sends them in batches): at most a batch's worth, all of that worker's.
    assert process_policies.FATAL_SCENARIO in [result.scenario for result in lost]
    assert len(lost) <= RESULTS_BATCH + 1
    for result in lost:
        assert result.error is not None and result.error.kind == "runner"
        assert "exited (exit code 3) before it sent the trial's result" in result.error.message
    # The other worker ran the rest; the lost trials are in the file, for --resume to run again.
    assert len(results) == len(company) and summary.errored == len(lost)
    assert all(result.passed for result in results if not result.errored)
    _, again = evaluate(company, policy, out=out, resume=True, workers=2)
    assert len(again) == len(company) and all(result.passed for result in again)


def test_a_worker_running_trials_on_its_loop_that_dies_loses_only_the_trials_it_ran(
    company: ScenarioSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two at once a worker: each result goes back as its trial ends, so only the trials in
    # flight when it died are lost, the one that killed it among them.
    out = tmp_path / "r.jsonl"
    monkeypatch.setenv(process_policies.MARKER, str(tmp_path / "died"))
    policy = process_policies.dies_once_on_one_scenario
    at_once = in_process(workers=2, concurrency=4)
    summary, results = evaluate(company, policy, out=out, runner=at_once)
    lost = [result.scenario for result in results if result.errored]
    assert process_policies.FATAL_SCENARIO in lost and len(lost) <= 2
    assert len(results) == len(company) and summary.errored == len(lost)


def test_when_every_worker_dies_the_run_stops_in_one_clear_error(company: ScenarioSet) -> None:
    with pytest.raises(SeahavenError, match="every worker process exited"):
        evaluate(company, process_policies.always_dies, workers=2, max_consecutive_errors=None)


def test_a_policy_that_cannot_reach_a_worker_is_refused_before_any_trial(
    company: ScenarioSet, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"
    played = []

    def local(session: PolicySession) -> None:  # a closure: pickle cannot carry it
        played.append(session.scenario.id)

    with pytest.raises(seahaven.WorldBug, match="cannot be sent to worker processes") as refused:
        evaluate(company, local, out=out, workers=2)
    assert "give a function defined at the top of a module" in str(refused.value)
    assert "workers=1" in str(refused.value)
    assert not played and not out.exists() and workers_of(os.getpid()) == []


def test_a_users_source_that_cannot_reach_a_worker_is_refused_before_any_trial(
    company: ScenarioSet, tmp_path: Path
) -> None:
    out = tmp_path / "r.jsonl"

    class Local:  # defined in a function: pickle cannot carry it
        def player(self, trial: Any = None, transcript: Any = None) -> Any:
            raise AssertionError("no trial runs")

        def describe(self) -> str:
            return "local users"

    with pytest.raises(seahaven.WorldBug, match="cannot be sent to worker processes") as refused:
        evaluate(company, solution_policy, out=out, workers=2, user=Local())
    assert "the users' source local users" in str(refused.value)
    assert "give an object of a class a module defines" in str(refused.value)
    assert "workers=1" in str(refused.value)
    assert not out.exists() and workers_of(os.getpid()) == []


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
@pytest.mark.parametrize("concurrency", [4, 2], ids=["on-a-loop", "in-turn"])
def test_closing_the_runner_stops_every_worker_and_destroys_their_instances(
    company: ScenarioSet,
    start_method: str,
    concurrency: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two at once a worker runs them on an event loop, one at a time in turn on its main
    # thread: stopped by the parent's SIGINT there, the trial in flight ends where it is.
    # Instances on disk, under a temporary directory of this test's: what is left is seen.
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    specs = plan(company, trials=3)
    results: Iterator[Any] = run_in_processes(
        specs,
        process_policies.slow_solution,
        workers=2,
        concurrency=concurrency,
        storage="disk",
        start_method=start_method,
    )
    first = next(results)
    assert first.passed
    started = workers_of(os.getpid())
    assert len(started) == 2
    made = [path for path in tmp_path.rglob("*") if path.is_dir()]
    assert made  # the workers' instances in flight, on disk
    results.close()  # type: ignore[attr-defined]
    assert all(gone(pid) for pid in started) and workers_of(os.getpid()) == []
    # Every trial in flight was cancelled and its instance destroyed: no store is left.
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_a_trial_running_in_turn_is_stopped_where_it_is_when_the_runner_closes(
    company: ScenarioSet, start_method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One trial waits an hour on a worker's main thread, where the stop message cannot be
    # read: the parent's SIGINT ends it, and its instance is destroyed. A worker killed after
    # STOP_WAIT instead would leave that instance's files behind.
    stores = tmp_path / "stores"
    stores.mkdir()
    monkeypatch.setenv("TMPDIR", str(stores))
    monkeypatch.setattr(tempfile, "tempdir", None)
    marker = tmp_path / "stalled"
    monkeypatch.setenv(process_policies.MARKER, str(marker))
    results: Iterator[Any] = run_in_processes(
        plan(company, trials=2),
        process_policies.stalls_once,
        workers=2,
        concurrency=2,
        storage="disk",
        start_method=start_method,
    )
    first = next(results)  # from the worker that did not stall
    assert first.passed and marker.exists()
    started = workers_of(os.getpid())
    assert len(started) == 2
    assert [path for path in stores.rglob("*") if path.is_file()]  # the stalled trial's store
    results.close()  # type: ignore[attr-defined]
    assert all(gone(pid) for pid in started)
    assert [path for path in stores.rglob("*") if path.is_file()] == []


@pytest.mark.parametrize("at_once", [["--concurrency", "4"], []], ids=["on-a-loop", "in-turn"])
def test_ctrl_c_stops_the_run_and_leaves_no_worker_process(
    tmp_path: Path, at_once: list[str]
) -> None:
    tests = str(Path(__file__).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])}
    argv = [
        sys.executable, "-m", "seahaven.cli", "eval", "company",
        "--policy", "process_policies:slow_solution", "--workers", "2", *at_once,
        "--out", "r.jsonl",
    ]  # fmt: skip
    running = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    results = tmp_path / "r.jsonl"
    deadline = time.monotonic() + 300
    while not (results.exists() and len(results.read_text().splitlines()) >= 2):
        assert running.poll() is None, running.communicate()
        assert time.monotonic() < deadline, "no trial finished"
        time.sleep(0.05)
    started = workers_of(running.pid)
    assert len(started) == 2
    running.send_signal(signal.SIGINT)
    _, stderr = running.communicate(timeout=120)
    assert running.returncode == 130, stderr
    assert "interrupted: the finished trials are in r.jsonl" in stderr
    assert all(gone(pid) for pid in started)
    kept = [json.loads(line) for line in results.read_text().splitlines()]
    keys = [(line["scenario"], line["trial"]) for line in kept]
    assert len(keys) == len(set(keys)) and all(line["passed"] for line in kept)


def test_workers_against_a_served_world_are_refused(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from seahaven import cli

    argv = ["eval", "company", "--policy", "m:p", "--out", str(tmp_path / "r.jsonl")]
    ran = CliRunner().invoke(
        cli.build_app(), [*argv, "--url", "http://127.0.0.1:9", "--workers", "2"]
    )
    assert ran.exit_code == 2, ran.output
    assert "a served world's trials run one at a time" in " ".join(ran.output.split())


def test_a_trial_that_cannot_start_in_a_worker_stops_the_run_with_its_error(
    company: ScenarioSet, tmp_path: Path
) -> None:
    kept = next(iter(company))
    # Its start names a fixture the world does not have: the trial cannot start.
    broken = kept.model_copy(
        update={"id": "broken", "start": kept.start.model_copy(update={"fixture": "nowhere"})}
    )
    mixed = ScenarioSet("mixed", "1.0.0", [kept, broken])
    out = tmp_path / "r.jsonl"
    with pytest.raises(seahaven.WorldBug, match="nowhere"):
        evaluate(mixed, solution_policy, trials=3, out=out, workers=2)
    assert workers_of(os.getpid()) == []
