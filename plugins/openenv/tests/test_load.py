"""A thousand sessions at once against one server process, each checked for its own work only.

The server is ``seahaven serve`` in a child process; the sessions are raw
WebSockets from this process, all open at once. Each resets from a fixture,
makes ten calls (writes, reads and one the world refuses), reads its state
and closes. The load is bounded: it fails after five minutes rather than hang.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from conftest import allow_open_files

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

import serving_load  # noqa: E402
from serving_load import CALLS_PER_SESSION, run_load, start_server  # noqa: E402

SESSIONS = 1000


@pytest.fixture(autouse=True)
def enough_file_descriptors() -> None:
    """Each session holds a socket on both ends and three files in the server."""
    allow_open_files(8 * SESSIONS)


def test_a_thousand_sessions_at_once(tmp_path: Path) -> None:
    with start_server(tmp_path, extra=("--max_concurrent_envs", str(SESSIONS + 10))) as server:
        result = run_load(server.ws_url, SESSIONS, timeout=300)
        assert result.problems == []
        # A reset, the calls and a state for every session: nothing lost on the way.
        assert result.frames == SESSIONS * (CALLS_PER_SESSION + 2)
        deadline = time.monotonic() + 60
        while server.get("/capacity")["active_sessions"] or server.instance_directories():
            assert time.monotonic() < deadline, "sessions or instance directories were left over"
            time.sleep(0.1)
        assert server.get("/capacity") == {"active_sessions": 0, "max_sessions": SESSIONS + 10}
        assert server.instance_directories() == []


@pytest.mark.parametrize("client", ["protocol", "native"])
def test_the_benchmarks_lean_clients_play_and_check_the_same_sessions(
    tmp_path: Path, client: str
) -> None:
    """The workers benchmark's clients: every frame sent and every answer checked by the scripts."""
    import native_client

    if client == "native" and native_client.find_compiler() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the native load generator needs a C compiler (cc or gcc)")
        pytest.skip("no C compiler (cc or gcc) to build the native load generator")

    with start_server(tmp_path, extra=("--max_concurrent_envs", "100")) as server:
        result = run_load(server.ws_url, 40, client=client, loop="uvloop")
        assert result.problems == []
        assert result.frames == 40 * (CALLS_PER_SESSION + 2)
        assert (result.client_cpu is not None) == (client == "native")
    # A later frame names an earlier answer's id, which wsload fills in as it sends it.
    script = serving_load.SESSIONS["payments"]
    planned = native_client.plan_of(script(7))
    assert '"customer_id": "@@reply1.id@@"' in planned[3]
    # What wsload recorded is checked by the scripts: a frame not theirs, or too few, is caught.
    wrong = planned[0].replace('"seed": 7', '"seed": 8').encode()
    _, _, problems = native_client.check([script(7)], {0: [(0.001, wrong, b"{}")]})
    assert problems and "wsload sent" in problems[0]
    _, _, problems = native_client.check([script(7)], {})
    assert problems == ["session 0: it ended after 0 frames"]
