"""Interrupt ``seahaven episodes run`` (a real process, SIGINT) and resume it.

The episodes run against ``gate_world``, whose ``wait_for`` tool blocks until
a file appears: the run is stopped at a known episode, never by timing. After
the interrupt the output holds exactly the episodes before the gate; resuming
(on a local Ray cluster the command starts itself, so the command's Ray path
runs too) adds each of the rest once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import HERE, need_ray

COUNT = 24
GATE = 9  # episodes 0..8 finish, episode 9 waits at the gate


def episodes_file(path: Path, release: Path) -> Path:
    lines = []
    for number in range(COUNT):
        calls = [{"tool": "note", "arguments": {"text": f"episode {number}"}}]
        if number == GATE:
            calls.append({"tool": "wait_for", "arguments": {"path": str(release)}})
        lines.append(
            json.dumps(
                {
                    "episode_id": f"g{number}",
                    "seed": number,
                    "now": "2030-01-01T00:00:00.000Z",
                    "clock_mode": "tick",
                    "calls": calls,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def command(episodes: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "seahaven.cli",
        "episodes",
        "run",
        "gate_world:world",
        "--episodes",
        str(episodes),
        "--out",
        str(out),
        *extra,
    ]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    # gate_world is importable by the command and by the Ray workers it starts.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH")) if p)
    return env


def ids_in(out: Path) -> list[str]:
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    return [json.loads(line)["episode_id"] for line in text.splitlines() if line.endswith("}")]


def wait_for_lines(out: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if out.exists() and out.read_text(encoding="utf-8").count("\n") >= count:
            return
        if process.poll() is not None:
            pytest.fail(f"the run ended early: {process.communicate()}")
        time.sleep(0.05)
    process.kill()
    pytest.fail(f"{out} never reached {count} lines")


def interrupt_at_the_gate(episodes: Path, out: Path, *extra: str) -> str:
    """Start the run, wait until it is held at the gate, SIGINT it; return its stderr."""
    process = subprocess.Popen(
        command(episodes, out, *extra),
        env=environment(),
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_lines(out, GATE, process)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    assert "interrupted:" in stderr and "--resume" in stderr
    return stderr


def test_an_interrupted_run_resumes_with_each_episode_once(tmp_path: Path) -> None:
    release = tmp_path / "release"
    episodes = episodes_file(tmp_path / "gate.jsonl", release)
    out = tmp_path / "out.jsonl"

    stderr = interrupt_at_the_gate(episodes, out)
    assert f"{GATE} of {COUNT} episodes are in {out}" in stderr
    assert ids_in(out) == [f"g{n}" for n in range(GATE)]
    # A write the interrupt cut short leaves a partial line; resuming cuts it off.
    with out.open("a", encoding="utf-8") as handle:
        handle.write('{"episode_id": "g9", "calls": [')

    release.touch()
    need_ray()
    resumed = subprocess.run(
        command(episodes, out, "--resume", "--ray", "local", "--workers", "2"),
        env=environment(),
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"{COUNT - GATE} episodes run ({COUNT - GATE} ok, 0 failed), {GATE} already in" in (
        resumed.stdout
    )
    found = ids_in(out)
    assert sorted(found) == sorted(f"g{n}" for n in range(COUNT))
    assert len(found) == len(set(found)) == COUNT
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert all(result["status"] == "ok" for result in results)
    ran_on_ray = [result for result in results if result["worker"].startswith("ray actor")]
    assert len(ran_on_ray) == COUNT - GATE


def test_an_interrupted_ray_run_stops_its_cluster_and_resumes(tmp_path: Path) -> None:
    need_ray()
    release = tmp_path / "release"
    episodes = episodes_file(tmp_path / "gate.jsonl", release)
    out = tmp_path / "out.jsonl"

    # One actor, one episode at a time beyond the next: the gate holds the whole run.
    interrupt_at_the_gate(
        episodes, out, "--ray", "local", "--workers", "1", "--instances-per-worker", "1"
    )
    held = ids_in(out)
    assert held == [f"g{n}" for n in range(GATE)]

    release.touch()
    resumed = subprocess.run(
        command(episodes, out, "--resume"),
        env=environment(),
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    found = ids_in(out)
    assert sorted(found) == sorted(f"g{n}" for n in range(COUNT))
    assert len(found) == COUNT
