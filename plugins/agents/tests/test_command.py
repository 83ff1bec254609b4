"""``seahaven eval PACK --model`` and ``seahaven report``, as a user runs them, in a real process.

Each test starts the scripted server here and runs ``seahaven`` as a subprocess pointed at it
with ``--base-url``: the real command line, the real ``openai`` client, a real SIGINT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seahaven_agents.testing import (
    ChatRequest,
    Reply,
    ScriptedChatServer,
    error,
    flaky,
    solution_script,
)

from seahaven.scenarios import ScenarioSet

Start = Callable[..., ScriptedChatServer]
SEAHAVEN = [sys.executable, "-m", "seahaven.cli"]
TIMINGS = {"seconds", "episode_seconds", "grade_seconds", "runner"}
# The company pack's start leaves the clock running on wall time, so the timestamps its tools
# write, and with them the hash of the change log, differ from one run to the next (one at a
# time as well): the hash is left out of what two runs must agree on.
WALL_CLOCK = {"state_sha256"}
KEY = "sk-seahaven-leak-check-5c1d2e3f4a5b6c7d8e9f"


def seahaven(
    *argv: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SEAHAVEN, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
        check=False,
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for text in path.read_text().splitlines()]


def test_a_model_plays_the_whole_pack_and_the_report_page_is_written(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(solution_script(company))
    ran = seahaven(
        "eval", "company", "--model", "scripted", "--base-url", server.url,
        "--trials", "3", "--concurrency", "16", "--out", "r.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    planned = {(scenario.id, trial) for scenario in company for trial in range(3)}
    results = lines(tmp_path / "r.jsonl")
    assert {(r["scenario"], r["trial"]) for r in results} == planned and len(results) == 3 * len(
        company
    )
    assert all(r["score"] == 1.0 and r["policy"] == "chat:scripted@127.0.0.1" for r in results)
    transcripts = lines(tmp_path / "r.transcripts.jsonl")
    assert {(t["scenario"], t["trial"]) for t in transcripts} == planned
    # The per-scenario table, the tokens, and where both files are.
    assert "scenario                      trials  passed" in ran.stdout
    assert "mean score 1.000" in ran.stdout and "tokens " in ran.stdout
    assert "transcripts in r.transcripts.jsonl" in ran.stdout
    # Nothing but the summary in a pipe: no progress line.
    assert ran.stderr == ""
    reported = seahaven("report", "r.jsonl", "--html", "r.html", cwd=tmp_path)
    assert reported.returncode == 0, reported.stderr
    assert "pass^k  (95% CI)" in reported.stdout and "report page in r.html" in reported.stdout
    assert (tmp_path / "r.html").read_text().startswith("<!doctype html>")


def test_sixteen_at_once_give_the_lines_one_at_a_time_gives(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(solution_script(company))
    scenarios = [argument for s in list(company)[::4] for argument in ("--scenario", s.id)]
    found = {}
    for concurrency in ("1", "16"):
        out = f"c{concurrency}.jsonl"
        ran = seahaven(
            "eval", "company", "--model", "scripted", "--base-url", server.url,
            "--trials", "2", "-j", concurrency, "--out", out, *scenarios,
            cwd=tmp_path,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        kept = [
            {k: v for k, v in r.items() if k not in TIMINGS | WALL_CLOCK}
            for r in lines(tmp_path / out)
        ]
        found[concurrency] = sorted(kept, key=lambda r: (r["scenario"], r["trial"]))
    assert found["1"] == found["16"] and len(found["1"]) == 2 * len(scenarios) // 2


def test_a_model_across_worker_processes_gives_the_lines_one_process_gives(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(solution_script(company))
    scenarios = [argument for s in list(company)[::4] for argument in ("--scenario", s.id)]
    found = {}
    for workers in ("1", "2"):
        out = f"w{workers}.jsonl"
        ran = seahaven(
            "eval", "company", "--model", "scripted", "--base-url", server.url,
            "--api-key-env", "SEAHAVEN_TEST_KEY", "--trials", "2", "-j", "8",
            "--workers", workers, "--out", out, *scenarios,
            cwd=tmp_path, env={"SEAHAVEN_TEST_KEY": KEY},
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        assert "mean score 1.000" in ran.stdout
        kept = [
            {k: v for k, v in r.items() if k not in TIMINGS | WALL_CLOCK}
            for r in lines(tmp_path / out)
        ]
        found[workers] = sorted(kept, key=lambda r: (r["scenario"], r["trial"]))
        recorded = lines(tmp_path / f"w{workers}.transcripts.jsonl")
        assert sorted((t["scenario"], t["trial"]) for t in recorded) == sorted(
            (r["scenario"], r["trial"]) for r in kept
        )
        for text in (ran.stdout, ran.stderr):
            assert KEY not in text
    assert found["1"] == found["2"] and len(found["2"]) == len(scenarios)
    # The workers read the key from the environment they inherited, and sent it where it goes.
    assert {request.headers["authorization"] for request in server.requests} == {f"Bearer {KEY}"}
    for path in tmp_path.iterdir():
        assert KEY not in path.read_text()


def test_ctrl_c_and_resume_keep_every_finished_trial_exactly_once(
    company: ScenarioSet, tmp_path: Path
) -> None:
    # A model that takes 0.2 s an answer, so that the run is stopped half way.
    with ScriptedChatServer(solution_script(company), delay=0.2) as server:
        argv = [
            *SEAHAVEN, "eval", "company", "--model", "scripted", "--base-url", server.url,
            "--trials", "2", "--concurrency", "4", "--out", "r.jsonl",
        ]  # fmt: skip
        running = subprocess.Popen(
            argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        results = tmp_path / "r.jsonl"
        deadline = time.monotonic() + 300
        while not (results.exists() and len(results.read_text().splitlines()) >= 6):
            assert running.poll() is None, running.communicate()
            assert time.monotonic() < deadline, "no trial finished"
            time.sleep(0.05)
        running.send_signal(signal.SIGINT)
        _, stderr = running.communicate(timeout=120)
        assert running.returncode == 130, stderr
        assert "interrupted: the finished trials are in r.jsonl" in stderr
        stopped = [(r["scenario"], r["trial"]) for r in lines(results)]
        assert len(stopped) == len(set(stopped)) < 2 * len(company)
        recorded = [(t["scenario"], t["trial"]) for t in lines(tmp_path / "r.transcripts.jsonl")]
        assert sorted(recorded) == sorted(stopped)
        resumed = subprocess.run(
            [*argv, "--resume"], cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
        assert resumed.returncode == 0, resumed.stderr
    planned = sorted((scenario.id, trial) for scenario in company for trial in range(2))
    assert sorted((r["scenario"], r["trial"]) for r in lines(results)) == planned
    assert (
        sorted((t["scenario"], t["trial"]) for t in lines(tmp_path / "r.transcripts.jsonl"))
        == planned
    )
    assert "mean score 1.000" in resumed.stdout


def test_the_api_key_never_leaves_the_request(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    solution = solution_script(company)

    def echoing(request: ChatRequest) -> Reply:
        # A server that echoes the key in its error, as a hosted API's 401 does.
        if request.instructions and "euros" in request.instructions:
            return error(401, f"Incorrect API key provided: {request.headers['authorization']}")
        return solution(request)

    server = scripted(flaky(echoing, every=5, status=500))
    ran = seahaven(
        "eval", "company", "--model", "scripted", "--base-url", server.url,
        "--api-key-env", "SEAHAVEN_TEST_KEY", "--trials", "2", "--out", "r.jsonl",
        "--max-errors-in-a-row", "0",
        cwd=tmp_path, env={"SEAHAVEN_TEST_KEY": KEY, "OPENAI_LOG": "debug"},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    # The key went where it belongs: the Authorization header of every request.
    assert {request.headers["authorization"] for request in server.requests} == {f"Bearer {KEY}"}
    results = lines(tmp_path / "r.jsonl")
    errored = [r for r in results if r["errored"]]
    assert errored and all("[API key]" in r["error"]["message"] for r in errored)
    reported = seahaven("report", "r.jsonl", "--html", "r.html", "--json", cwd=tmp_path)
    assert reported.returncode == 0, reported.stderr
    outputs = [ran.stdout, ran.stderr, reported.stdout, reported.stderr]
    outputs += [path.read_text() for path in tmp_path.iterdir() if path.is_file()]
    assert len(outputs) >= 7
    for text in outputs:
        assert KEY not in text and KEY[10:30] not in text


def test_a_hosted_model_without_a_key_fails_in_one_line(tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith("OPENAI_")}
    ran = subprocess.run(
        [*SEAHAVEN, "eval", "company", "--model", "gpt-4.1-mini", "--out", "r.jsonl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert ran.returncode == 1
    [line] = ran.stderr.strip().splitlines()
    assert "no API key for api.openai.com (hosted)" in line and "OPENAI_API_KEY" in line
    assert not (tmp_path / "r.jsonl").exists()
