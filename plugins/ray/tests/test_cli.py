"""``seahaven episodes run``: checks made before anything runs, output lines, and resuming."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import need_ray
from episode_cases import ACME_SCRIPT

from seahaven.cli import main
from seahaven.registry.extras import EXTRAS

CALLS = [*ACME_SCRIPT[:3], {"tool": "no_such_tool", "arguments": {}}]


def write_episodes(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["episodes", "run", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def good_lines(count: int) -> list[dict[str, Any]]:
    return [
        {"episode_id": f"e{n}", "fixture": "acme", "seed": n, "clock_mode": "tick", "calls": CALLS}
        for n in range(count)
    ]


def test_episodes_run_in_process_and_append_one_result_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = good_lines(4)
    lines.append({"calls": [{"tool": "whoami"}]})  # no id, no fixture: a blank instance
    episodes = write_episodes(tmp_path / "in.jsonl", lines)
    out = tmp_path / "out.jsonl"

    status, stdout, stderr = run_cli(
        capsys, "company", "--episodes", str(episodes), "--out", str(out)
    )

    assert status == 0, stderr
    assert stderr == ""  # no progress line outside a terminal
    assert stdout.strip() == f"5 episodes run (5 ok, 0 failed); results in {out}"
    results = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [result["episode_id"] for result in results] == ["e0", "e1", "e2", "e3", "line-5"]
    # The state document carries the line's id too, not the id of the instance that ran it.
    assert [result["state"]["episode_id"] for result in results] == [
        "e0",
        "e1",
        "e2",
        "e3",
        "line-5",
    ]
    first = results[0]
    assert {"episode_id", "calls", "state", "timings", "status", "attempts"} <= set(first)
    assert [call["tool"] for call in first["calls"]] == [call["tool"] for call in CALLS]
    assert all(set(call) == {"tool", "arguments", "result"} for call in first["calls"][:3])
    assert set(first["calls"][3]) == {"tool", "arguments", "error"}
    assert first["calls"][3]["error"]["code"] == "unknown_tool"
    assert first["state"]["format"] == "seahaven.state/1"
    assert first["state"]["fixture"]["id"] == "acme"
    assert results[4]["state"]["fixture"] is None
    assert first["worker"] == "in-process"


def test_a_bad_line_is_named_by_its_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    cases = [
        ("{not json", "line 3: is not JSON"),
        ("[1, 2]", "line 3: is a JSON list, not an object"),
        ({"episode_id": "x"}, 'line 3: has no "calls"'),
        ({"calls": [], "tools": []}, "line 3: has the key tools; an episode line has"),
        ({"calls": [{"tool": 3}]}, "line 3: calls.0.tool: Input should be a valid string"),
        ({"calls": [], "clock_mode": "sometimes"}, "line 3: clock_mode: Input should be"),
        ({"episode_id": "e0", "calls": []}, "line 3: episode id 'e0' is already used on line 1"),
    ]
    for bad, expected in cases:
        episodes = write_episodes(tmp_path / "in.jsonl", [*good_lines(1), "", bad])
        status, stdout, stderr = run_cli(
            capsys, "company", "--episodes", str(episodes), "--out", str(out)
        )
        assert status == 1, (bad, stderr)
        assert expected in one_error_line(stderr), (bad, stderr)
        assert str(episodes) in stderr
        assert stdout == ""
        assert not out.exists()


def test_an_unknown_world_or_fixture_fails_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    episodes = write_episodes(tmp_path / "in.jsonl", good_lines(2))
    status, _, stderr = run_cli(
        capsys, "no-such-world", "--episodes", str(episodes), "--out", str(out)
    )
    assert status == 1
    assert "no world is registered as 'no-such-world'" in one_error_line(stderr)

    lines = good_lines(2)
    lines[1]["fixture"] = "nowhere"
    episodes = write_episodes(tmp_path / "in.jsonl", lines)
    status, _, stderr = run_cli(capsys, "company", "--episodes", str(episodes), "--out", str(out))
    assert status == 1
    line = one_error_line(stderr)
    assert "line 2: world 'company' has no fixture 'nowhere'" in line
    assert "acme, empty" in line
    assert not out.exists()


def test_an_unwritable_out_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    episodes = write_episodes(tmp_path / "in.jsonl", good_lines(1))
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    for out, expected in (
        (tmp_path / "missing" / "out.jsonl", "cannot write --out"),
        (blocker / "out.jsonl", "cannot write --out"),
        (tmp_path, "is a directory"),
    ):
        status, stdout, stderr = run_cli(
            capsys, "company", "--episodes", str(episodes), "--out", str(out)
        )
        assert status == 1, out
        assert expected in one_error_line(stderr)
        assert stdout == ""


def test_an_out_that_holds_results_needs_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    episodes = write_episodes(tmp_path / "in.jsonl", good_lines(3))
    out = tmp_path / "out.jsonl"
    assert run_cli(capsys, "company", "--episodes", str(episodes), "--out", str(out))[0] == 0
    before = out.read_bytes()

    status, _, stderr = run_cli(capsys, "company", "--episodes", str(episodes), "--out", str(out))
    assert status == 1 and "pass --resume" in one_error_line(stderr)
    assert out.read_bytes() == before

    status, stdout, _ = run_cli(
        capsys, "company", "--episodes", str(episodes), "--out", str(out), "--resume"
    )
    assert status == 0
    assert (
        stdout.strip() == f"0 episodes run (0 ok, 0 failed), 3 already in {out}; results in {out}"
    )
    assert out.read_bytes() == before


def test_resume_refuses_an_out_that_is_not_a_result_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    episodes = write_episodes(tmp_path / "in.jsonl", good_lines(1))
    out = tmp_path / "out.jsonl"
    out.write_text("hello\nworld\n", encoding="utf-8")
    status, _, stderr = run_cli(
        capsys, "company", "--episodes", str(episodes), "--out", str(out), "--resume"
    )
    assert status == 1
    assert f"{out} line 1: is not a result line" in one_error_line(stderr)


def test_a_missing_episode_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, stderr = run_cli(
        capsys,
        "company",
        "--episodes",
        str(tmp_path / "absent.jsonl"),
        "--out",
        str(tmp_path / "o"),
    )
    assert status == 1 and "cannot read --episodes" in one_error_line(stderr)


def test_ray_without_ray_installed_names_the_install_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails as if not installed
    episodes = write_episodes(tmp_path / "in.jsonl", good_lines(1))
    out = tmp_path / "out.jsonl"
    status, _, stderr = run_cli(
        capsys, "company", "--episodes", str(episodes), "--out", str(out), "--ray", "local"
    )
    assert status == 1
    assert EXTRAS["seahaven.ray"].install_command in one_error_line(stderr)
    assert not out.exists()


@pytest.mark.parametrize("address", ["127.0.0.1:9", "ray://127.0.0.1:9"])
def test_a_cluster_address_nothing_answers_at_is_one_line_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str
) -> None:
    ray = need_ray()
    if ray.is_initialized():
        ray.shutdown()
    episodes = write_episodes(tmp_path / "in.jsonl", good_lines(1))
    out = tmp_path / "out.jsonl"
    status, _, stderr = run_cli(
        capsys, "company", "--episodes", str(episodes), "--out", str(out), "--ray", address
    )
    assert status == 1
    line = one_error_line(stderr)
    assert f"cannot reach the Ray cluster at '{address}'" in line
    assert "nothing accepts a connection at 127.0.0.1:9" in line
    assert not ray.is_initialized()
    assert not out.exists() or out.read_text() == ""


class NotRay:
    """A plain TCP listener on a loopback port: it accepts, then does as ``mode`` says."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return  # closed
            if self.mode == "answers HTTP/1.1":
                with contextlib.suppress(OSError):
                    connection.recv(1024)
                    connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                connection.close()
            elif self.mode == "closes":
                connection.close()
            else:
                self.accepted.append(connection)  # held open, and never answered

    def close(self) -> None:
        self.listener.close()
        for connection in self.accepted:
            connection.close()


@pytest.mark.parametrize(
    ("mode", "scheme"),
    [("stays silent", ""), ("stays silent", "ray://"), ("answers HTTP/1.1", ""), ("closes", "")],
)
def test_an_open_port_that_is_not_ray_is_one_line_at_once_and_leaves_no_results_file(
    tmp_path: Path, mode: str, scheme: str
) -> None:
    need_ray()
    listener = NotRay(mode)
    address = f"{scheme}127.0.0.1:{listener.port}"
    episodes = write_episodes(tmp_path / "in.jsonl", good_lines(1))
    out = tmp_path / "out.jsonl"
    try:
        # A process of its own with a bound: without the check, Ray retries for minutes.
        command = ["episodes", "run", "company", "--episodes", str(episodes), "--out", str(out)]
        result = subprocess.run(
            [sys.executable, "-m", "seahaven.cli", *command, "--ray", address],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        listener.close()
    assert result.returncode == 1, result.stderr
    line = one_error_line(result.stderr)
    assert f"cannot reach the Ray cluster at '{address}'" in line
    assert f"something accepts connections at 127.0.0.1:{listener.port}, but it is not Ray" in line
    assert not out.exists()


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    episodes = write_episodes(tmp_path / "in.jsonl", good_lines(1))
    assert run_cli(capsys, "company", "--episodes", str(episodes))[0] == 2  # no --out
    status = run_cli(
        capsys, "company", "--episodes", str(episodes), "--out", "o", "--workers", "0"
    )[0]
    assert status == 2
    status, _, stderr = run_cli(
        capsys, "company", "--episodes", str(episodes), "--out", "o", "--episode-timeout", "5"
    )
    assert status == 2 and "needs --ray" in stderr


def test_the_command_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["episodes", "--help"]) == 0
    assert "run" in capsys.readouterr().out
