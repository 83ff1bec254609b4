"""A runaway ``setup_sql`` holds up no one else, and never holds up a stop.

``setup_sql`` may run for its whole allowance (``SETUP_SQL_SECONDS``). Resets
pass no concurrency gate, so they run on a pool of their own, beside the one
that runs tool calls: another client's reset is answered meanwhile. When the
client that asked goes, or the server is stopped, the statement is stopped.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import instance_dirs, wait_until
from test_serve_command import serving as serving_command
from websockets.sync.client import connect

import seahaven
from seahaven.calls.concurrency import concurrency, set_concurrency
from seahaven.sandbox import SETUP_SQL_SECONDS

RUNAWAY = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
    "INSERT INTO notes (id, text) SELECT 'n', CAST(count(*) AS TEXT) FROM c"
)


@pytest.fixture
def two_cpus() -> Iterator[None]:
    """The gate a machine of two CPUs has by default (and back to what it was after)."""
    before = concurrency()
    set_concurrency(2)
    try:
        yield
    finally:
        set_concurrency(before)


def still_waiting(ws: Any) -> bool:
    """Whether ``ws`` has had no answer yet."""
    try:
        ws.connection.recv(timeout=0)
    except TimeoutError:
        return True
    return False


def test_a_runaway_reset_holds_up_no_other_reset(
    serving, wire, beacon_world: seahaven.World, two_cpus: None
) -> None:
    server = serving(beacon_world)
    runaway, other = wire(server), wire(server)
    runaway.send({"type": "reset", "data": {"setup_sql": RUNAWAY}})
    other.send({"type": "reset", "data": {"setup_sql": "SELECT 1"}})
    # The other reset is answered while the runaway still runs: it never waited behind it.
    assert other.receive(timeout=SETUP_SQL_SECONDS / 2)["type"] == "observation"
    assert still_waiting(runaway)
    # A tool call and a state document are answered meanwhile too.
    assert other.call("add_note", text="meanwhile")["data"]["observation"]["error"] is None
    assert other.state()["call_count"] == 1
    # The runaway's client goes: its statement is stopped (well inside its allowance), and
    # the instance it was making is removed.
    episode = other.state()["episode_id"]
    runaway.connection.close()
    wait_until(
        lambda: [path.name for path in instance_dirs(beacon_world)] == [episode],
        timeout=SETUP_SQL_SECONDS / 2,
    )
    wait_until(lambda: server.hub.active_sessions == 1, timeout=SETUP_SQL_SECONDS / 2)


def test_a_stop_interrupts_a_runaway_reset(tmp_path: Path) -> None:
    with serving_command(tmp_path, "--world", "payments") as running:
        url = running["urls"]["payments"].replace("http://", "ws://") + "/ws"
        runaway = (
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
            "UPDATE customers SET name = (SELECT CAST(count(*) AS TEXT) FROM c)"
        )
        with connect(url, open_timeout=10) as ws:
            ws.send(json.dumps({"type": "state"}))
            ws.recv(timeout=30)
            ws.send(
                json.dumps(
                    {"type": "reset", "data": {"fixture": "small_shop", "setup_sql": runaway}}
                )
            )
            with pytest.raises(TimeoutError):
                ws.recv(timeout=1)  # it runs
            process = running["process"]
            process.send_signal(signal.SIGTERM)
            # Well inside the statement's allowance: only the interruption can end it so soon.
            assert process.wait(timeout=SETUP_SQL_SECONDS / 2) == 0
    leftovers = list(tmp_path.glob(f"seahaven-*/payments/{process.pid}-*/*"))
    assert leftovers == []
