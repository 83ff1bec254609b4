"""``seahaven eval --url``: trials played on a served world score what they score in process.

``seahaven.openenv.trial_runner(url)`` is the runner ``seahaven eval PACK --url
URL`` uses. The same scripted policies run in process and against a real
server, and every result agrees: the score, the verdict and each check, the
calls counted, how the episode ended, the answer, and the hash of the episode's
change log and calls.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import depot
import pytest
from typer.testing import CliRunner

import seahaven
import seahaven.openenv
from seahaven import cli
from seahaven.evaluation import PolicySession, evaluate, idle_policy, solution_policy
from seahaven.scenarios import EpisodeOver

AGREE = ("score", "passed", "checks", "calls", "ended_by", "answer", "state_sha256", "seed")


def outcome(result: Any) -> dict[str, Any]:
    return {name: getattr(result, name) for name in AGREE}


@pytest.fixture
def depot_world() -> seahaven.World:
    return depot.make_depot()


@pytest.fixture
def pack(depot_world: seahaven.World) -> Any:
    return depot.make_pack(depot_world)


@pytest.fixture
def url(serving, depot_world, pack) -> str:
    server: Any = serving(depot_world, scenarios=[pack])
    return str(server.base_url)


@pytest.mark.parametrize("policy", [solution_policy, idle_policy], ids=["solution", "idle"])
def test_eval_in_process_and_against_the_served_world_agree(url, pack, policy) -> None:
    here, local = evaluate(pack, policy, trials=2)
    there, remote = evaluate(pack, policy, trials=2, runner=seahaven.openenv.trial_runner(url))
    assert [result.key for result in remote] == [result.key for result in local]
    assert [outcome(result) for result in remote] == [outcome(result) for result in local]
    assert all(result.error is None for result in local + remote)
    assert {result.runner for result in remote} == {f"served at {url}"}
    assert there.to_dict() == here.to_dict()
    if policy is solution_policy:
        assert [result.score for result in remote] == [1.0] * 6
    else:
        assert [result.score for result in remote] == [0.0] * 6


def test_a_remote_session_is_the_session_a_policy_gets_in_process(url, pack) -> None:
    seen: dict[str, list[Any]] = {"in process": [], "served": []}

    def curious(session: PolicySession) -> None:
        where = "in process" if type(session).__name__ == "LocalSession" else "served"
        assert isinstance(session, PolicySession)
        record = seen[where]
        record.append((session.instructions, session.calls_left, session.done))
        record.append([tool["name"] for tool in session.tools()])
        try:
            session.call("ship", crate_id="nope")
        except seahaven.ToolError as refused:
            record.append((type(refused).__name__, refused.code, refused.details))
        record.append(session.call("count", item="apples"))
        session.submit("15")
        record.append((session.calls_left, session.done))
        with pytest.raises(EpisodeOver) as over:
            session.call("count", item="apples")
        record.append(over.value.to_dict())

    evaluate(pack, curious, scenarios=["count-apples"])
    evaluate(pack, curious, scenarios=["count-apples"], runner=seahaven.openenv.trial_runner(url))
    assert seen["served"] == seen["in process"]
    assert seen["served"][1][-1] == "submit"


def test_a_world_bug_is_the_worlds_failure_on_both_runners(url, pack) -> None:
    def unlucky(session: PolicySession) -> None:
        session.call("ship", crate_id="c1")
        session.call("misroute")

    [local] = evaluate(pack, unlucky, scenarios=["ship-c1"])[1]
    [remote] = evaluate(
        pack, unlucky, scenarios=["ship-c1"], runner=seahaven.openenv.trial_runner(url)
    )[1]
    for result in (local, remote):
        assert result.error is not None and result.error.kind == "world"
        assert (result.score, result.passed) == (0.0, False)
    # The server logs the bug's text under an id and sends only the id.
    assert remote.error is not None and "internal error (err-" in remote.error.message
    assert remote.calls == local.calls == 2


def test_a_policy_that_raises_fails_as_the_policys_on_both_runners(url, pack) -> None:
    def crashing(session: PolicySession) -> None:
        session.call("ship", crate_id="c1")
        raise ValueError("the model ran out of ideas")

    [local] = evaluate(pack, crashing, scenarios=["ship-c1"])[1]
    [remote] = evaluate(
        pack, crashing, scenarios=["ship-c1"], runner=seahaven.openenv.trial_runner(url)
    )[1]
    assert outcome(remote) == outcome(local)
    assert remote.error == local.error
    assert local.error is not None and local.error.kind == "policy" and local.score == 1.0


def test_a_policy_misusing_its_session_is_the_policys_failure_on_both_runners(url, pack) -> None:
    def misnamed(session: PolicySession) -> None:
        session.call(42)  # type: ignore[arg-type]

    def unsendable(session: PolicySession) -> None:
        session.call("ship", crate_id=object())

    for policy in (misnamed, unsendable):
        [local] = evaluate(pack, policy, scenarios=["ship-c1"])[1]
        [remote] = evaluate(
            pack, policy, scenarios=["ship-c1"], runner=seahaven.openenv.trial_runner(url)
        )[1]
        assert local.error is not None and remote.error is not None
        assert local.error.kind == remote.error.kind == "policy", remote.error
        assert not remote.errored and remote.score == local.score == 0.0


def test_a_scenario_the_server_holds_in_another_version_is_the_runners_failure(
    serving, depot_world
) -> None:
    changed = depot.make_pack(depot_world)
    served = serving(depot_world, scenarios=[depot.make_pack(depot_world, "0.9.0")])
    tweaked = [
        scenario.model_copy(update={"budget": 9}) if scenario.id == "ship-c1" else scenario
        for scenario in changed
    ]
    here = seahaven.scenarios.ScenarioSet("depot", "1.0.0", tweaked, splits=changed.splits)
    results = evaluate(
        here, solution_policy, runner=seahaven.openenv.trial_runner(served.base_url)
    )[1]
    [stale] = [result for result in results if result.scenario == "ship-c1"]
    assert stale.error is not None and stale.error.kind == "runner"
    assert "another version of the task" in stale.error.message and stale.score == 0.0
    assert all(result.error is None for result in results if result is not stale)


def test_no_server_or_another_world_at_the_url_is_refused_at_once(serving, pack) -> None:
    with pytest.raises(seahaven.WorldBug, match="no served world answers there"):
        evaluate(pack, solution_policy, runner=seahaven.openenv.trial_runner("http://127.0.0.1:9"))
    other = serving(depot.make_depot("warehouse"))
    with pytest.raises(seahaven.WorldBug, match="serves world 'warehouse'"):
        evaluate(pack, solution_policy, runner=seahaven.openenv.trial_runner(other.base_url))
    with pytest.raises(seahaven.WorldBug, match="http:// or https://"):
        seahaven.openenv.trial_runner("ws://127.0.0.1:1")


def test_a_pack_served_as_one_of_several_worlds_is_reached_under_its_path(serving, pack) -> None:
    server = serving([pack.get("ship-c1").world, depot.make_depot("warehouse")], scenarios=[pack])
    runner = seahaven.openenv.trial_runner(server.base_url + "/worlds/depot")
    results = evaluate(pack, solution_policy, runner=runner)[1]
    assert [result.score for result in results] == [1.0, 1.0, 1.0]


def test_the_command_line_evaluates_against_a_served_world(
    serving, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = serving(depot.world, scenarios=[depot.pack])
    out = tmp_path / "results.jsonl"
    monkeypatch.chdir(tmp_path)
    argv = ["eval", "depot:pack", "--policy", "seahaven.evaluation:solution_policy", "-k", "2"]
    result = CliRunner().invoke(
        cli.build_app(), [*argv, "--url", served.base_url, "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 6 and {line["score"] for line in lines} == {1.0}
    assert {line["runner"] for line in lines} == {f"served at {served.base_url}"}
    local = tmp_path / "local.jsonl"
    again = CliRunner().invoke(cli.build_app(), [*argv, "--out", str(local), "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == json.loads(result.stdout)
    by_trial = {(line["scenario"], line["trial"]): line for line in lines}
    for line in map(json.loads, local.read_text().splitlines()):
        assert by_trial[(line["scenario"], line["trial"])]["state_sha256"] == line["state_sha256"]


async def async_solution(session: PolicySession) -> None:
    """The reference solution, played by an ``async def`` policy."""
    for step in session.scenario.solution or ():
        await asyncio.sleep(0)
        if step.tool == "submit":
            session.submit(step.arguments["answer"])
            return
        session.call(step.tool, **step.arguments)


def test_an_async_policy_is_awaited_against_a_served_world(url, pack) -> None:
    _, local = evaluate(pack, solution_policy, trials=2)
    _, remote = evaluate(pack, async_solution, trials=2, runner=seahaven.openenv.trial_runner(url))
    assert [outcome(result) for result in remote] == [outcome(result) for result in local]
    assert {result.score for result in remote} == {1.0}


def test_a_refused_url_leaves_no_results_file(serving, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    for where in ("http://127.0.0.1:9", serving(depot.make_depot("warehouse")).base_url):
        with pytest.raises(seahaven.WorldBug):
            evaluate(
                depot.pack, solution_policy, out=out, runner=seahaven.openenv.trial_runner(where)
            )
        assert not out.exists()
    argv = ["eval", "depot:pack", "--policy", "seahaven.evaluation:solution_policy"]
    refused = CliRunner().invoke(
        cli.build_app(), [*argv, "--url", "http://127.0.0.1:9", "--out", str(out)]
    )
    assert refused.exit_code == 1 and "no served world answers there" in refused.stderr
    assert not out.exists()


SERVE = (sys.executable, "-m", "seahaven.cli", "serve")
SERVED = re.compile(r"Serving world 'depot' at (http://127\.0\.0\.1:\d+)")

KILLER = '''
from seahaven.evaluation import solution_policy


class Reference:
    """The reference solution; on its ``kill_at``-th trial it kills the server first."""

    kill_at = 0
    server = None
    played = 0

    def describe(self):
        return "reference-solution"

    def __call__(self, session):
        self.played += 1
        if self.played == self.kill_at:
            self.server.kill()
            self.server.wait()
        solution_policy(session)


play = Reference()
'''


@contextmanager
def depot_server(log: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``seahaven serve`` of the depot world and its pack, as its own process."""
    with log.open("w") as out:
        process = subprocess.Popen(
            [*SERVE, "--world", "depot:world", "--scenarios", "depot:pack", "--port", "0"],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=Path(depot.__file__).parent,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        deadline = time.monotonic() + 60
        while not (found := SERVED.search(log.read_text())):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield found.group(1), process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_a_server_killed_mid_run_errors_its_trials_stops_the_run_and_resume_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "killer.py").write_text(KILLER, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    killer = importlib.import_module("killer")
    out = tmp_path / "results.jsonl"
    argv = ["eval", "depot:pack", "--policy", "killer:play", "-k", "5", "--out", str(out)]
    with depot_server(tmp_path / "first.log") as (base, process):
        killer.play.server, killer.play.kill_at = process, 5
        stopped = CliRunner().invoke(cli.build_app(), [*argv, "--url", base])
    # The run stops after the default five errored trials in a row, in one line, non-zero.
    assert stopped.exit_code == 1, stopped.output
    [line] = stopped.stderr.strip().splitlines()
    assert line.startswith(
        "error: stopped after 5 errored trials in a row, the last restock-pears #3 (runner: "
        "reset of depot/restock-pears failed:"
    )
    assert f"the finished trials are in {out}" in line
    written = [json.loads(text) for text in out.read_text().splitlines()]
    assert [(entry["scenario"], entry["trial"], entry["errored"]) for entry in written] == [
        *[("ship-c1", trial, False) for trial in range(4)],
        ("ship-c1", 4, True),
        *[("restock-pears", trial, True) for trial in range(4)],
    ]
    assert {entry["score"] for entry in written if not entry["errored"]} == {1.0}
    assert {entry["error"]["kind"] for entry in written if entry["errored"]} == {"runner"}
    assert {entry["policy"] for entry in written} == {"reference-solution"}
    # Resumed against a server started again: the errored trials and the rest run, and the
    # reference solution scores what it scores.
    with depot_server(tmp_path / "second.log") as (base, _):
        killer.play.kill_at = 0
        resumed = CliRunner().invoke(cli.build_app(), [*argv, "--url", base, "--resume", "--json"])
    assert resumed.exit_code == 0, resumed.output
    summary = json.loads(resumed.stdout)
    assert (summary["mean"], summary["results"], summary["errored"]) == (1.0, 15, 0)
    assert summary["pass_hat"]["5"] == 1.0
    lines = [json.loads(text) for text in out.read_text().splitlines()]
    assert len(lines) == 9 + 11  # the errored lines stay in the file, superseded
    assert not any(entry["errored"] for entry in lines[9:])
