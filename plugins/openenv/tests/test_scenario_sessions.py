"""A session bound to a scenario over ``/ws``: the reset, submit, the budget, the reward, the grade.

Every test drives a real server (``serve.running``) with raw frames, so what is
checked is exactly what any client reads. A session is bound by a reset naming
``scenario`` (``pack/id``), or ``split`` and ``index`` of the server's pack; an
unbound session answers as it always has (reward null), which the rest of the
suite checks.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import depot
import pytest

import seahaven
from seahaven.scenarios import Trial, refresh_packs, submit_listing


def observation(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["type"] == "observation", reply
    data: dict[str, Any] = reply["data"]
    return data


def error_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["type"] == "error", reply
    data: dict[str, Any] = reply["data"]
    return data


@pytest.fixture
def depot_world() -> seahaven.World:
    return depot.make_depot()


@pytest.fixture
def pack(depot_world: seahaven.World) -> Any:
    return depot.make_pack(depot_world)


@pytest.fixture
def served(serving, depot_world, pack):
    return serving(depot_world, scenarios=[pack])


def step(ws: Any, action: dict[str, Any]) -> dict[str, Any]:
    return ws.ask({"type": "step", "data": action})


# --- binding and the reset observation --------------------------------------------------------


def test_a_reset_naming_a_scenario_carries_its_instructions_and_budget(served, wire, pack) -> None:
    ws = wire(served)
    reset = observation(ws.reset(scenario="depot/count-apples", episode_id="ep-1"))
    metadata = reset["observation"]["metadata"]
    scenario = pack.get("count-apples")
    assert metadata["scenario"] == "depot/count-apples"
    assert metadata["scenario_hash"] == scenario.hash
    assert metadata["instructions"] == scenario.instructions
    assert (metadata["budget"], metadata["calls_left"]) == (3, 3)
    assert metadata["episode_id"] == "ep-1" and metadata["now"] == depot.NOW
    # The world's five tools and submit.
    assert metadata["tools"] == 6
    assert reset["reward"] is None and reset["done"] is False
    assert reset["metadata"] == metadata


def test_split_and_index_pick_the_task_the_task_api_lists(served, wire) -> None:
    ws = wire(served)
    metadata = observation(ws.reset(split="train", index=1))["observation"]["metadata"]
    assert metadata["scenario"] == "depot/restock-pears"
    metadata = observation(ws.reset(split="test", index=0))["observation"]["metadata"]
    assert metadata["scenario"] == "depot/count-apples"


def test_a_bound_session_lists_submit_after_the_worlds_tools(served, wire) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/ship-c1")
    listing = observation(step(ws, {"type": "list_tools"}))
    names = [tool["name"] for tool in listing["observation"]["tools"]]
    assert names == ["count", "ship", "restock", "jam", "misroute", "submit"]
    assert listing["observation"]["tools"][-1] == submit_listing()
    assert (listing["reward"], listing["done"]) == (0.0, False)
    # An unbound session on the same server lists the world's tools alone, with no reward.
    free = wire(served)
    free.reset()
    listing = observation(step(free, {"type": "list_tools"}))
    assert [tool["name"] for tool in listing["observation"]["tools"]] == names[:-1]
    assert listing["reward"] is None


# --- the reward, the end, and the grade ----------------------------------------------------------


def test_every_step_pays_zero_until_submit_pays_the_score_with_the_grade(served, wire) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/count-apples")
    counted = observation(ws.call("count", item="apples"))
    assert counted["observation"]["result"] == {"qty": 15}
    assert (counted["reward"], counted["done"]) == (0.0, False)
    assert counted["observation"]["metadata"] == {"calls_left": 2}

    submitted = observation(ws.call("submit", answer="15"))
    assert (submitted["reward"], submitted["done"]) == (1.0, True)
    metadata = submitted["observation"]["metadata"]
    assert metadata["ended_by"] == "submit" and metadata["calls_left"] == 2
    grade = metadata["grade"]
    assert grade["score"] == 1.0 and grade["passed"] is True
    assert [check["passed"] for check in grade["checks"]] == [True, True]
    assert submitted["metadata"] == metadata

    # The state document says the same, with what the trial counted.
    report = ws.state()["scenario"]
    assert report["scenario"] == "depot/count-apples" and report["pack_version"] == "1.0.0"
    assert (report["done"], report["ended_by"], report["answer"]) == (True, "submit", "15")
    assert (report["calls_made"], report["calls_left"], report["budget"]) == (1, 2, 3)
    assert report["grade"] == grade


def test_the_grade_and_the_hash_are_the_ones_a_trial_in_process_computes(
    served, wire, depot_world, pack
) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/restock-pears", seed=11)
    created = observation(ws.call("restock", item="pears", qty=12))["observation"]["result"]
    ended = observation(step(ws, {"type": "finish"}))
    report = ws.state()["scenario"]

    with Trial(pack.get("restock-pears"), seed=11, world=depot_world) as trial:
        assert trial.call("restock", item="pears", qty=12) == created
        grade = trial.finish()
        assert ended["observation"]["metadata"]["grade"] == grade.to_dict()
        assert ended["reward"] == grade.score == 1.0
        assert report["state_sha256"] == trial.state_sha256()
        assert report["seed"] == 11


def test_a_wrong_answer_scores_zero_on_the_last_step(served, wire) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/count-apples")
    submitted = observation(ws.call("submit", answer="14"))
    assert (submitted["reward"], submitted["done"]) == (0.0, True)
    grade = submitted["observation"]["metadata"]["grade"]
    assert grade["passed"] is False and grade["score"] == 0.0


def test_the_call_that_spends_the_budget_ends_the_episode(served, wire) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/ship-c1")
    first = observation(ws.call("ship", crate_id="nope"))
    assert first["observation"]["error"] is not None and first["reward"] == 0.0
    assert first["observation"]["metadata"]["seahaven_error"]["code"] == "NOT_FOUND"
    assert first["observation"]["metadata"]["calls_left"] == 2
    observation(ws.call("no_such_tool"))
    last = observation(ws.call("ship", crate_id="c1"))
    assert last["done"] is True and last["reward"] == 1.0
    assert last["observation"]["metadata"]["ended_by"] == "budget"

    # After the end every call is refused, pays nothing more, and changes nothing.
    after = observation(ws.call("ship", crate_id="c2"))
    assert (after["done"], after["reward"]) == (True, 0.0)
    assert after["observation"]["metadata"]["seahaven_error"]["code"] == "episode_over"
    assert "grade" not in after["observation"]["metadata"]
    again = observation(step(ws, {"type": "finish"}))
    assert (again["done"], again["reward"]) == (True, 0.0)
    document = ws.state()
    assert document["scenario"]["calls_made"] == 3 and document["step_count"] == 5


def test_a_name_longer_than_any_tool_counts_against_the_budget(served, wire) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/ship-c1")
    refused = observation(ws.call("x" * 10_000))
    triple = refused["observation"]["metadata"]["seahaven_error"]
    assert triple["code"] == "unknown_tool" and len(json.dumps(refused)) < 2_000
    assert refused["observation"]["metadata"]["calls_left"] == 2


def test_a_refused_submit_counts_and_an_accepted_one_does_not(served, wire) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/count-apples")
    refused = observation(ws.call("submit", answer=15))
    assert refused["observation"]["metadata"]["seahaven_error"]["code"] == "invalid_arguments"
    assert refused["done"] is False and refused["observation"]["metadata"]["calls_left"] == 2
    accepted = observation(ws.call("submit", answer="15"))
    assert accepted["observation"]["metadata"]["calls_left"] == 2 and accepted["reward"] == 1.0


def test_finish_grades_where_the_episode_stands(served, wire) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/ship-c1")
    observation(ws.call("ship", crate_id="c1"))
    ended = observation(step(ws, {"type": "finish"}))
    assert ended["observation"] == {"metadata": ended["metadata"]}
    assert (ended["done"], ended["reward"]) == (True, 1.0)
    assert ended["metadata"]["ended_by"] == "finish"


def test_a_world_bug_in_a_bound_session_is_an_execution_error_and_the_session_goes_on(
    served, wire
) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/ship-c1")
    failed = observation(ws.call("jam"))
    # A tool that raises something else is the world's internal error, as in any session.
    assert failed["observation"]["metadata"]["seahaven_error"]["code"] == "internal"
    assert failed["observation"]["metadata"]["calls_left"] == 2
    assert observation(ws.call("ship", crate_id="c1"))["reward"] == 0.0


# --- what a reset refuses ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"scenario": "depot/nope"}, "pack 'depot' has no scenario 'nope'"),
        ({"scenario": "nopack/x"}, "no pack of scenarios is registered as 'nopack'"),
        ({"scenario": "depot"}, "a scenario is named pack/id"),
        ({"scenario": "os:system/x"}, "pack name 'os:system' must be"),
        ({"split": "test", "index": 1}, "holds 1 task, index 0; there is no task 1"),
        ({"split": "test", "index": -1}, "there is no task -1"),
        ({"split": "dev", "index": 0}, "has no split 'dev'; its splits are train, test"),
        ({"split": "test"}, "split and index go together"),
        ({"index": 0}, "split and index go together"),
        ({"scenario": "depot/ship-c1", "split": "test"}, "names its scenario once"),
        ({"scenario": "depot/ship-c1", "fixture": "x"}, "does not take fixture"),
        ({"scenario": "depot/ship-c1", "setup_sql": "SELECT 1"}, "does not take setup_sql"),
        ({"scenario": 5}, "scenario must be a string (a scenario, as pack/id)"),
        ({"split": "test", "index": True}, "index must be a whole number"),
    ],
)
def test_a_bad_scenario_is_a_validation_error_and_the_episode_before_it_goes_on(
    served, wire, data: dict[str, Any], said: str
) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/count-apples", episode_id="kept")
    refused = error_of(ws.ask({"type": "reset", "data": data}))
    assert refused["code"] == "VALIDATION_ERROR"
    assert said in refused["message"]
    # Untouched: the same bound episode.
    assert observation(ws.call("count", item="pears"))["observation"]["result"] == {"qty": 4}
    assert ws.state()["episode_id"] == "kept"


def test_a_scenario_of_another_world_is_refused(serving, wire, depot_world) -> None:
    other = depot.make_depot("warehouse")
    server = serving([depot_world, other], scenarios=[depot.make_pack(depot_world)])
    ws = wire(server, "/worlds/warehouse/ws")
    refused = error_of(ws.reset(scenario="depot/ship-c1"))
    assert refused["code"] == "VALIDATION_ERROR"
    assert "runs on world 'depot'; this is world 'warehouse'" in refused["message"]
    # split and index need a pack served beside this world.
    refused = error_of(ws.reset(split="test", index=0))
    assert "served without a pack of scenarios" in refused["message"]


def test_finish_in_an_unbound_session_is_refused_and_not_counted(served, wire) -> None:
    ws = wire(served)
    ws.reset()
    refused = error_of(step(ws, {"type": "finish"}))
    assert refused["code"] == "VALIDATION_ERROR" and "not bound" in refused["message"]
    document = ws.state()
    assert document["step_count"] == 0 and "scenario" not in document


def test_an_unbound_reset_after_a_bound_one_unbinds_the_session(served, wire) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/ship-c1")
    ws.reset(setup_sql=depot.SEED_ROWS)
    shipped = observation(ws.call("ship", crate_id="c1"))
    assert shipped["reward"] is None and shipped["observation"]["metadata"] == {}
    assert "metadata" not in shipped
    assert "scenario" not in ws.state()
    # submit is a bound session's tool alone: here it is a tool the world does not have.
    unknown = observation(ws.call("submit", answer="x"))
    assert unknown["observation"]["metadata"]["seahaven_error"]["code"] == "unknown_tool"


# --- a pack found by name, as installed ----------------------------------------------------------


def write_dist_info(site: Path, pack_target: str) -> None:
    """An installed distribution's metadata publishing ``pack_target`` as the pack ``depot``."""
    info = site / "seahaven_test_depot-1.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: seahaven-test-depot\nVersion: 1.0.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[seahaven.scenarios]\ndepot = {pack_target}\n", encoding="utf-8"
    )


def test_a_reset_reaches_an_installed_pack_the_server_was_not_given(
    serving, wire, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_dist_info(tmp_path, "depot:pack")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    refresh_packs()
    try:
        server = serving(depot.world)
        ws = wire(server)
        metadata = observation(ws.reset(scenario="depot/ship-c1"))["observation"]["metadata"]
        assert metadata["scenario_hash"] == depot.pack.get("ship-c1").hash
        assert observation(ws.call("ship", crate_id="c1"))["reward"] == 0.0
        assert observation(step(ws, {"type": "finish"}))["reward"] == 1.0
        # The Task API and split/index are the served pack's alone.
        assert "served without a pack" in error_of(ws.reset(split="test", index=0))["message"]
    finally:
        monkeypatch.undo()
        refresh_packs()


# --- MCP frames in a bound session ---------------------------------------------------------------


def test_mcp_frames_go_through_the_scenario(served, wire) -> None:
    ws = wire(served)
    ws.reset(scenario="depot/count-apples")

    def rpc(method: str, **params: Any) -> dict[str, Any]:
        reply = ws.ask(
            {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}}
        )
        result: dict[str, Any] = reply["data"]["result"]
        return result

    names = [tool["name"] for tool in rpc("tools/list")["tools"]]
    assert names[-1] == "submit"
    counted = rpc("tools/call", name="count", arguments={"item": "apples"})
    assert counted["_meta"] == {"reward": 0.0, "done": False, "calls_left": 2}
    submitted = rpc("tools/call", name="submit", arguments={"answer": "15"})
    assert submitted["_meta"]["reward"] == 1.0 and submitted["_meta"]["done"] is True
    assert submitted["_meta"]["grade"]["passed"] is True


# --- serving a pack: what the server refuses at start-up -----------------------------------------


def test_a_pack_is_served_beside_its_own_world_only(serving, depot_world) -> None:
    with pytest.raises(seahaven.WorldBug, match="serve that world too, as --world depot"):
        serving(depot.make_depot("warehouse"), scenarios=[depot.make_pack(depot_world)])
    with pytest.raises(seahaven.WorldBug, match="is given two packs"):
        serving(
            depot_world,
            scenarios=[depot.make_pack(depot_world), depot.make_pack(depot_world, "2.0.0")],
        )


# --- seahaven serve --scenarios, as a user runs it ----------------------------------------------


def serve_command(*argv: str) -> list[str]:
    return [sys.executable, "-m", "seahaven.cli", "serve", *argv]


def test_seahaven_serve_scenarios_serves_the_pack_beside_its_world(tmp_path: Path) -> None:
    import re
    import signal
    import subprocess
    import time
    import urllib.request

    from websockets.sync.client import connect

    here = str(Path(__file__).resolve().parent)
    env = {**os.environ, "PYTHONPATH": here, "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp_path)}
    log = tmp_path / "serve.log"
    argv = serve_command("--world", "depot:world", "--scenarios", "depot:pack", "--port", "0")
    with log.open("w") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        pattern = re.compile(
            r"Tasks of pack 'depot' 1\.0\.0 for 'depot': (http://\S+)/depot/splits"
        )
        deadline = time.monotonic() + 60
        while not (found := pattern.search(log.read_text())):
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        base = found.group(1)
        with urllib.request.urlopen(base + "/depot/splits", timeout=10) as answer:
            splits = json.loads(answer.read())
        assert [(split["name"], split["num_tasks"]) for split in splits] == [
            ("train", 2),
            ("test", 1),
        ]
        with connect(base.replace("http", "ws", 1) + "/ws", open_timeout=10) as ws:
            ws.send(json.dumps({"type": "reset", "data": {"split": "test", "index": 0}}))
            reset = json.loads(ws.recv(timeout=30))
        assert reset["data"]["metadata"]["scenario"] == "depot/count-apples"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (("--world", "depot:world", "--scenarios", "nopack"), "no pack of scenarios is registered"),
        (
            ("--world", "depot:other", "--scenarios", "depot:pack"),
            "serve that world too, as --world depot",
        ),
    ],
)
def test_seahaven_serve_refuses_a_pack_it_cannot_serve_in_one_line(
    tmp_path: Path, argv: tuple[str, ...], fragment: str
) -> None:
    import subprocess

    here = str(Path(__file__).resolve().parent)
    env = {**os.environ, "PYTHONPATH": here}
    result = subprocess.run(
        serve_command(*argv), capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert result.returncode == 1, result.stderr
    assert fragment in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
