"""``seahaven eval PACK --model A --user-model U`` and ``--replay``, as a user runs them.

The scripted server answers both models (``for_roles``); ``seahaven`` runs as a
subprocess pointed at it. The results and transcripts carry the user's side,
``seahaven report`` shows its tokens apart, and ``--replay`` runs the trials
again from the transcripts, the same, with no model asked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seahaven_agents.testing import ScriptedChatServer, for_roles, solution_script, user_script
from typer.testing import CliRunner

from seahaven import cli
from seahaven.scenarios import ScenarioSet

Start = Callable[..., ScriptedChatServer]
SEAHAVEN = [sys.executable, "-m", "seahaven.cli"]
SCENARIOS = ["verify-then-refund-globex", "hooli-card-in-portal", "lena-files-expense"]


def seahaven(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SEAHAVEN, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
        check=False,
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(text) for text in path.read_text().splitlines()]


def test_eval_with_a_user_model_then_report_then_replay(
    company: ScenarioSet, scripted: Start, tmp_path: Path
) -> None:
    server = scripted(for_roles(agent=solution_script(company), user=user_script(company)))
    picked = [option for scenario in SCENARIOS for option in ("--scenario", scenario)]
    ran = seahaven(
        "eval", "company", "--model", "scripted", "--base-url", server.url,
        "--user-model", "scripted-user", "--user-temperature", "0.5",
        *picked, "-k", "2", "-j", "4", "--out", "r.jsonl",
        cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "the simulated users: tokens" in ran.stdout
    results = lines(tmp_path / "r.jsonl")
    assert len(results) == 6 and all(result["passed"] for result in results)
    assert {result["user"] for result in results} == {"chat:scripted-user@127.0.0.1"}
    users = [request for request in server.requests if "submit" not in request.tools]
    # --user-base-url defaults to --base-url; --user-temperature reaches the user's model only.
    assert users and all(request.body.get("temperature") == 0.5 for request in users)
    assert not any("temperature" in r.body for r in server.requests if "submit" in r.tools)
    transcripts = lines(tmp_path / "r.transcripts.jsonl")
    assert all(line["user_usage"]["model_calls"] for line in transcripts)

    report = seahaven("report", "r.jsonl", "--json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert data["users"] == ["chat:scripted-user@127.0.0.1"]
    assert data["user_usage"]["model_calls"] == sum(
        r["user_tokens"]["model_calls"] for r in results
    )
    assert data["usage"]["model_calls"] == sum(r["usage"]["model_calls"] for r in results)
    assert data["user_model_seconds"] > 0

    asked = len(server.requests)
    # Replayed over two worker processes: the recorded agent and users travel to them.
    again = seahaven(
        "eval", "company", "--replay", "r.transcripts.jsonl", "--out", "again.jsonl",
        "--workers", "2",
        cwd=tmp_path,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert len(server.requests) == asked  # replayed, not asked
    replayed = {(r["scenario"], r["trial"]): r for r in lines(tmp_path / "again.jsonl")}
    for result in results:
        twin = replayed[(result["scenario"], result["trial"])]
        assert twin["state_sha256"] == result["state_sha256"]
        assert (twin["score"], twin["checks"]) == (result["score"], result["checks"])
        assert twin["user"] == "replay:chat:scripted-user@127.0.0.1"
    assert (tmp_path / "again.transcripts.jsonl").is_file()


def test_what_cannot_go_with_a_user_model_or_a_replay_is_refused(tmp_path: Path) -> None:
    runner = CliRunner()
    app = cli.build_app()
    out = str(tmp_path / "r.jsonl")
    cases = [
        (["--policy", "m:p", "--user-base-url", "http://127.0.0.1:9/v1"], "configure --user-model"),
        (
            ["--policy", "m:p", "--user-model", "u", "--url", "http://127.0.0.1:9"],
            "a served world plays each scenario's user on the server",
        ),
        (["--replay", out, "--model", "m"], "drop --model"),
        (["--replay", out, "--trials", "2"], "drop --trials"),
        (["--replay", str(tmp_path / "none.jsonl")], "is not a transcripts file"),
        (["--policy", "m:p", "--temperature", "1"], "configure --model"),
    ]
    (tmp_path / "r.jsonl").write_text("")
    for argv, said in cases:
        ran = runner.invoke(app, ["eval", "company", "--out", out, *argv])
        assert ran.exit_code == 2, (argv, ran.output)
        assert said in " ".join(ran.output.split()), (argv, ran.output)
