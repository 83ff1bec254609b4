"""``seahaven mcp``'s options: what is refused before the server starts, and how it stops.

A malformed option is a usage error (exit 2) and starts nothing. A world, fixture,
seed or ``setup_sql`` the framework refuses is one line on stderr (exit 1), and no
instance directory is left. A signal destroys the instance before the process ends.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable

import pytest
from conftest import BOUND_SECONDS, COMMAND, INITIALIZE, Server, environment, message, run_command

USAGE_ERRORS: list[tuple[list[str], dict[str, str], str]] = [
    (["--reset-options", '{"seed": 1}', "--seed", "2"], {}, "--seed"),
    (["--reset-options", "{}", "--fixture", "small_shop"], {}, "--fixture"),
    (["--reset-options", "{}"], {"SEAHAVEN_NOW": "2030-01-01T00:00:00.000Z"}, "--now"),
    ([], {"SEAHAVEN_RESET_OPTIONS": "{}", "SEAHAVEN_CLOCK_MODE": "fixed"}, "--clock-mode"),
    (["--reset-options", '{"control_tools": true}'], {}, "control_tools"),
    (["--reset-options", '{"control_tools": false}'], {}, "control_tools"),
    (["--reset-options", '{"fixtur": "small_shop"}'], {}, "'fixtur'"),
    ([], {"SEAHAVEN_RESET_OPTIONS": '{"episode_id": "x"}'}, "'episode_id'"),
    (["--reset-options", "not json"], {}, "not JSON"),
    (["--reset-options", "[1, 2]"], {}, "JSON object"),
    (["--reset-options", '{"clock_mode": "warp"}'], {}, "warp"),
    (["--clock-mode", "warp"], {}, "warp"),
    ([], {"SEAHAVEN_CLOCK_MODE": "warp"}, "warp"),
    (["--now", "yesterday"], {}, "yesterday"),
    ([], {"SEAHAVEN_NOW": "yesterday"}, "yesterday"),
    (["--seed", "seven"], {}, "--seed"),
    ([], {"SEAHAVEN_SEED": "seven"}, "SEAHAVEN_SEED"),
    (["--no-such-option"], {}, "--no-such-option"),
]


@pytest.mark.parametrize(("args", "env", "named"), USAGE_ERRORS)
def test_a_malformed_option_is_a_usage_error_and_starts_nothing(
    server_dirs: Callable[[], Server], args: list[str], env: dict[str, str], named: str
) -> None:
    server = server_dirs()
    result = run_command(["--world", "payments", *args], server, env)
    assert result.returncode == 2, result.stderr
    assert named in result.stderr
    assert result.stdout == ""
    assert server.files() == []


FAILURES: list[tuple[list[str], dict[str, str], str]] = [
    (["--fixture", "no_such_fixture"], {}, "no_such_fixture"),
    ([], {"SEAHAVEN_FIXTURE": "no_such_fixture"}, "no_such_fixture"),
    (["--seed", "-1"], {}, "seed"),
    (["--seed", str(2**64)], {}, "seed"),
    (["--fixture", "small_shop", "--now", "2001-01-01T00:00:00.000Z"], {}, "now"),
    (
        ["--reset-options", json.dumps({"setup_sql": "DROP TABLE customers"})],
        {},
        "setup_sql statement 1 of 1",
    ),
    (["--reset-options", json.dumps({"startup": {"nobody": 1}})], {}, "nobody"),
    (["--reset-options", json.dumps({"state_format": "no.such/1"})], {}, "no.such/1"),
]


@pytest.mark.parametrize(("args", "env", "named"), FAILURES)
def test_what_the_framework_refuses_is_one_line_and_leaves_nothing(
    server_dirs: Callable[[], Server], args: list[str], env: dict[str, str], named: str
) -> None:
    server = server_dirs()
    result = run_command(["--world", "payments", *args], server, env)
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert named in lines[0]
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert server.instance_dirs() == []


def test_an_unknown_world_is_one_line(server_dirs: Callable[[], Server]) -> None:
    result = run_command(["--world", "no_such_world"], server_dirs())
    assert result.returncode == 1
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_destroys_the_instance_while_the_client_is_still_connected(
    server_dirs: Callable[[], Server], signum: int
) -> None:
    server = server_dirs()
    with subprocess.Popen(
        [*COMMAND, "--world", "payments", "--seed", "1"],
        cwd=server.cwd,
        env=environment(server.tmp),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(message(id=1, method="initialize", params=INITIALIZE))
            process.stdin.flush()
            answer = json.loads(process.stdout.readline())
            assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"] == "payments"
            assert len(server.instance_dirs()) == 1
            # stdin stays open: only the signal can end the process.
            process.send_signal(signum)
            assert process.wait(timeout=BOUND_SECONDS) == 128 + signum
        finally:
            if process.poll() is None:
                process.kill()
    assert server.instance_dirs() == []
    assert server.files() == []


def test_closing_stdin_ends_the_process_and_the_instance(
    server_dirs: Callable[[], Server],
) -> None:
    server = server_dirs()
    result = subprocess.run(
        [*COMMAND, "--world", "payments", "--seed", "1"],
        cwd=server.cwd,
        env=environment(server.tmp),
        input="",
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert server.files() == []


def test_the_seed_line_is_on_stderr_only(server_dirs: Callable[[], Server]) -> None:
    server = server_dirs()
    result = subprocess.run(
        [*COMMAND, "--world", "payments"],
        cwd=server.cwd,
        env=environment(server.tmp),
        input="",
        capture_output=True,
        text=True,
        timeout=BOUND_SECONDS,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "seahaven mcp: seed " in result.stderr


RUNAWAY_WORLD = """
import os
from pathlib import Path

import seahaven
from seahaven import sandbox

# The statement's own time limit would end the query by itself, in seconds; raised out of
# reach, only the server stopping can end it.
sandbox.STATEMENT_SECONDS = 3600.0
DOOR = sandbox.Authorizer(["notes"], read_only=True)

world = seahaven.World(
    name="runaway",
    version="1.0.0",
    schema="CREATE TABLE notes (id TEXT PRIMARY KEY) STRICT",
    state_format="seahaven.state/1",
)


@world.tool
def run_sql(ctx: seahaven.Ctx, query: str) -> dict:
    \"\"\"Run one statement, as seahaven.sql_tools.run_sql does, saying first that it starts.\"\"\"
    Path(os.environ["RUNAWAY_STARTED"]).write_text("started", encoding="utf-8")
    return sandbox.run_statement(ctx.db, query, authorizer=DOOR).to_dict()
"""

RUNAWAY = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"


@pytest.mark.parametrize("stop", ["SIGTERM", "stdin closed"])
def test_a_runaway_statement_does_not_hold_up_the_end(
    server_dirs: Callable[[], Server], stop: str
) -> None:
    server = server_dirs()
    (server.cwd / "runaway_world.py").write_text(RUNAWAY_WORLD, encoding="utf-8")
    started = server.cwd / "started"
    with subprocess.Popen(
        [*COMMAND, "--world", "runaway_world:world", "--seed", "1"],
        cwd=server.cwd,
        env=environment(server.tmp, {"RUNAWAY_STARTED": str(started)}),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(message(id=1, method="initialize", params=INITIALIZE))
            process.stdin.write(message(method="notifications/initialized"))
            process.stdin.write(
                message(
                    id=2,
                    method="tools/call",
                    params={"name": "run_sql", "arguments": {"query": RUNAWAY}},
                )
            )
            process.stdin.flush()
            assert json.loads(process.stdout.readline())["id"] == 1
            for _ in range(BOUND_SECONDS * 10):
                if started.exists() or process.poll() is not None:
                    break
                time.sleep(0.1)
            assert started.exists(), "the call never started"
            assert len(server.instance_dirs()) == 1
            if stop == "SIGTERM":
                process.send_signal(signal.SIGTERM)
                # The test's bound: without the interrupt the statement would run for an hour.
                assert process.wait(timeout=BOUND_SECONDS) == 128 + signal.SIGTERM
            else:
                process.stdin.close()
                assert process.wait(timeout=BOUND_SECONDS) == 0
        finally:
            if process.poll() is None:
                process.kill()
    assert server.instance_dirs() == []
    assert server.files() == []
