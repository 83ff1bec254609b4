"""``seahaven eval PACK --ray local``: real processes, each starting its own local cluster.

The command runs the ``trial_cases`` pack with the same policy in process and on
Ray and must print the same summary and write the same results, trial by trial.
An eval held at a known trial (``gated_policy`` waits for a file) is interrupted
with SIGINT, as Ctrl-C does, and resumed on Ray: each trial ends up in the file once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trial_cases
from conftest import HERE, need_ray

TIMEOUT = 300


def command(out: Path, policy: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "seahaven.cli",
        "eval",
        "trial_cases:pack",
        "--policy",
        policy,
        "--trials",
        "2",
        "--out",
        str(out),
        *extra,
    ]


def environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    # trial_cases is importable by the command and by the Ray workers it starts.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def run(argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=environment(**env),
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def summary(completed: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert completed.returncode == 0, completed.stderr
    found: dict[str, Any] = json.loads(completed.stdout)
    return found


def runners(out: Path) -> set[str]:
    return {json.loads(line)["runner"] for line in out.read_text(encoding="utf-8").splitlines()}


def test_eval_on_ray_local_gives_the_summary_and_results_of_an_eval_in_process(
    tmp_path: Path,
) -> None:
    need_ray()
    here, there = tmp_path / "here.jsonl", tmp_path / "there.jsonl"
    policy = "seahaven.evaluation:solution_policy"
    in_process = summary(run(command(here, policy, "--json")))
    on_ray = summary(run(command(there, policy, "--ray", "local", "--workers", "2", "--json")))
    assert on_ray == in_process
    assert on_ray["results"] == 2 * len(trial_cases.pack) and on_ray["mean"] == 1.0
    assert trial_cases.summary_of(there) == trial_cases.summary_of(here)
    assert runners(here) == {"in process"}
    assert all(runner.startswith("ray actor seahaven-trials-") for runner in runners(there))
    # The text summary is the same too, but for the results file it names.
    text_here = run(command(tmp_path / "a.jsonl", "trial_cases:flaky_policy"))
    text_there = run(command(tmp_path / "b.jsonl", "trial_cases:flaky_policy", "--ray", "local"))
    assert text_here.returncode == text_there.returncode == 0, text_there.stderr
    assert text_here.stdout.replace("a.jsonl", "b.jsonl") == text_there.stdout
    assert "mean score 0.429" in text_there.stdout


def wait_for_lines(out: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if out.exists() and out.read_text(encoding="utf-8").count("\n") >= count:
            return
        if process.poll() is not None:
            pytest.fail(f"the eval ended early: {process.communicate()}")
        time.sleep(0.05)
    process.kill()
    pytest.fail(f"{out} never reached {count} lines")


def test_an_interrupted_eval_on_ray_resumes_with_each_trial_once(tmp_path: Path) -> None:
    need_ray()
    gate = tmp_path / "gate"
    out = tmp_path / "results.jsonl"
    policy = "trial_cases:gated_policy"
    # One actor runs the trials in the plan's order: the 8 before close-o2 end, then it waits.
    held = [scenario.id for scenario in trial_cases.pack].index(trial_cases.GATED) * 2
    process = subprocess.Popen(
        command(out, policy, "--ray", "local", "--workers", "1"),
        env=environment(**{trial_cases.GATE_ENV: str(gate)}),
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_lines(out, held, process)
        time.sleep(0.5)  # nothing else ends while the gate is shut
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    assert f"interrupted: the finished trials are in {out}" in stderr and "--resume" in stderr
    kept = trial_cases.summary_of(out)
    assert len(kept) == held and (trial_cases.GATED, 0) not in kept
    # A line cut short by a harder stop is dropped by the resume, and its trial run again.
    with out.open("a", encoding="utf-8") as handle:
        handle.write('{"pack": "raytrials", "scenario": "close-o2", "tri')

    gate.touch()
    resumed = summary(
        run(
            command(out, policy, "--resume", "--ray", "local", "--workers", "2", "--json"),
            **{trial_cases.GATE_ENV: str(gate)},
        )
    )
    assert resumed["results"] == 2 * len(trial_cases.pack) and resumed["missing"] == 0
    finished = trial_cases.summary_of(out)  # each trial once
    assert {key: finished[key] for key in kept} == kept
    expected = tmp_path / "in-process.jsonl"
    summary(run(command(expected, policy, "--json"), **{trial_cases.GATE_ENV: str(gate)}))
    assert finished == trial_cases.summary_of(expected)
