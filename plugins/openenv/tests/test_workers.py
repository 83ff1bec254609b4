"""``seahaven serve --workers 2``: two server processes behind one port, through real sockets.

Every server here is ``seahaven serve`` in a child process on a loopback port;
the clients are raw WebSockets, ``SeahavenClient`` and OpenEnv's own
``MCPToolClient``. Each test is bounded and stops its server, then checks that
no worker process, socket or instance directory is left.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import allow_open_files, post_mcp
from openenv.core.mcp_client import MCPToolClient
from seahaven_openenv.front import routing
from seahaven_openenv.sessions import pool
from websockets.sync.client import connect

from seahaven.openenv import SeahavenClient, SessionLost

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))

from serving_load import CALLS_PER_SESSION, Server, run_load, start_server  # noqa: E402

SESSIONS = 400


@pytest.fixture(autouse=True)
def enough_file_descriptors() -> None:
    allow_open_files(8 * SESSIONS)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has ended; only its parent has yet to collect it.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def instance_directories(tmpdir: Path) -> list[Path]:
    """Every instance directory any process of the server keeps under its temp directory."""
    root = tmpdir / f"seahaven-{os.getuid()}"
    return sorted(p for p in root.glob("*/*/*") if p.is_dir())


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def wait_for(condition: Any, timeout: float = 60, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@contextmanager
def two_workers(tmp_path: Path, *extra: str) -> Iterator[Server]:
    """``seahaven serve --workers 2``; after it stops, nothing of it is left."""
    pids: list[int] = []
    with start_server(
        tmp_path, extra=("--workers", "2", "--max_concurrent_envs", "1000", *extra)
    ) as server:
        pids = [row["pid"] for row in server.get("/metrics")["workers"]]
        assert len(set(pids)) == 2 and server.process.pid not in pids
        yield server
        pids = [row["pid"] for row in server.get("/metrics")["workers"] if row["pid"]]
        port = server.port
        # What a Ctrl-C or a service manager sends: every worker stops, then the front.
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=60) == 0, (tmp_path / "serve.log").read_text()
    for pid in pids:
        wait_for(lambda pid=pid: not alive(pid), 10, f"worker {pid} to end")
    assert instance_directories(tmp_path) == []
    with pytest.raises(ConnectionRefusedError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=5).connect()


def post(server: Server, request: dict[str, Any]) -> dict[str, Any]:
    return post_mcp("127.0.0.1", server.port, request)


def rpc(server: Server, method: str, **params: Any) -> dict[str, Any]:
    return post(server, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


def test_two_workers_serve_400_sessions_without_cross_talk(tmp_path: Path) -> None:
    with two_workers(tmp_path) as server:
        rows = server.get("/metrics")["workers"]
        run_load(server.ws_url, 20)  # each worker's first fixture and imports
        wait_for(lambda: server.get("/capacity")["active_sessions"] == 0)
        before = {row["pid"]: descriptors(row["pid"]) for row in rows}
        opened = {row["index"]: row["sessions_opened"] for row in server.get("/metrics")["workers"]}
        # Every session checks that its state document holds its own calls and rows only.
        result = run_load(server.ws_url, SESSIONS, timeout=300)
        assert result.problems == []
        assert result.frames == SESSIONS * (CALLS_PER_SESSION + 2)
        metrics = server.get("/metrics")
        served = {
            row["index"]: row["sessions_opened"] - opened[row["index"]]
            for row in metrics["workers"]
        }
        # Both processes took a share of the sessions, and every session was counted once.
        assert sum(served.values()) == SESSIONS
        assert min(served.values()) >= SESSIONS // 4, served
        wait_for(
            lambda: (
                server.get("/capacity")["active_sessions"] == 0
                and not instance_directories(tmp_path)
            ),
            what="sessions and instance directories to go",
        )
        after = {pid: descriptors(pid) for pid in before}
        for pid, count in before.items():
            assert after[pid] <= count + 2, (pid, count, after[pid])
        assert server.get("/health") == {"status": "healthy"}


def test_seahaven_clients_on_two_workers_each_see_their_own_episode(tmp_path: Path) -> None:
    with two_workers(tmp_path) as server:

        def episode(index: int) -> tuple[int, int]:
            with SeahavenClient(base_url=server.base_url) as env:
                env.reset(fixture="small_shop", episode_id=f"ep-{index}")
                made = [
                    env.call("create_customer", email=f"c{index}.{n}@example.com").result["id"]
                    for n in range(3)
                ]
                state = env.state()
                assert state.episode_id == f"ep-{index}" and state.call_count == 3
                log = state.state["db"]["log"]
                assert sorted(r["key"]["id"] for r in log) == sorted(made)
                # Sessions are open on both workers at once here: the totals are the sums.
                metrics = server.get("/metrics")
                total = sum(row["active_sessions"] for row in metrics["workers"])
                return metrics["active_sessions"], total

        with ThreadPoolExecutor(8) as pool_of_threads:
            totals = list(pool_of_threads.map(episode, range(24)))
        assert all(1 <= reported <= 8 for reported, _ in totals)
        assert all(abs(reported - summed) <= 8 for reported, summed in totals)


def test_totals_are_the_sum_of_the_workers(tmp_path: Path) -> None:
    with two_workers(tmp_path) as server:
        clients = [SeahavenClient(base_url=server.base_url) for _ in range(6)]
        try:
            for n, env in enumerate(clients):
                env.reset(fixture="small_shop", episode_id=f"held-{n}")
            metrics = server.get("/metrics")
            per_worker = [row["active_sessions"] for row in metrics["workers"]]
            assert sum(per_worker) == 6 and min(per_worker) >= 1, per_worker
            assert metrics["active_sessions"] == 6 and metrics["workers_alive"] == 2
            # Whichever worker answers, it answers for the whole server.
            for _ in range(4):
                assert server.get("/capacity") == {"active_sessions": 6, "max_sessions": 1000}
        finally:
            for env in clients:
                env.close()
        wait_for(lambda: server.get("/capacity")["active_sessions"] == 0)


def test_a_session_id_reaches_the_worker_that_owns_it(tmp_path: Path) -> None:
    with two_workers(tmp_path) as server:
        ids = [rpc(server, "openenv/session/create")["result"]["session_id"] for _ in range(4)]
        # Each id names its worker, and the ids are spread over both.
        owners = {pool.owner_of(session_id) for session_id in ids}
        assert owners == {(0, 1), (1, 1)}
        for n, session_id in enumerate(ids):
            called = rpc(
                server,
                "tools/call",
                session_id=session_id,
                name="create_customer",
                arguments={"email": f"m{n}@example.com"},
            )
            assert called["result"]["data"]["email"] == f"m{n}@example.com"
            # The socket attached to the id lands on the same process: it sees that call.
            with connect(f"{server.ws_url}?session_id={session_id}") as ws:
                ws.send(json.dumps({"type": "state", "data": {}}))
                state = json.loads(ws.recv(timeout=30))["data"]
            assert state["call_count"] == 1
            emails = [r["after"]["email"] for r in state["state"]["db"]["log"]]
            assert emails == [f"m{n}@example.com"]
        for session_id in ids:
            assert rpc(server, "openenv/session/close", session_id=session_id)["result"]["closed"]

        async def with_openenvs_client() -> list[str]:
            names = []
            for _ in range(4):
                async with MCPToolClient(base_url=server.base_url) as env:
                    await env.reset(fixture="small_shop")
                    made = await env.call_tool("create_customer", email="ada@example.com")
                    fetched = await env.call_tool("get_customer", customer_id=made["id"])
                    names.append(fetched["email"])
            return names

        assert asyncio.run(with_openenvs_client()) == ["ada@example.com"] * 4
        wait_for(lambda: server.get("/capacity")["active_sessions"] == 0)


def answered(server: Server, path: str) -> dict[str, Any] | None:
    """``GET path``, or ``None`` when the connection was handed to a worker as it died."""
    try:
        document: dict[str, Any] = server.get(path)
    except (ConnectionResetError, http.client.RemoteDisconnected):
        return None
    return document


def test_a_killed_worker_is_reported_and_restarted(tmp_path: Path) -> None:
    with two_workers(tmp_path) as server:
        clients = [SeahavenClient(base_url=server.base_url) for _ in range(4)]
        made = rpc(server, "openenv/session/create")["result"]["session_id"]
        try:
            for n, env in enumerate(clients):
                env.reset(fixture="small_shop", episode_id=f"ep-{n}")
                env.call("create_customer", email=f"k{n}@example.com")
            victim_index = pool.owner_of(made)[0]  # type: ignore[index]
            rows = server.get("/metrics")["workers"]
            victim = rows[victim_index]
            held = victim["active_sessions"]
            assert held >= 1
            os.kill(victim["pid"], signal.SIGKILL)
            wait_for(lambda: not alive(victim["pid"]), 10, "the worker to die")
            # Health degrades, naming the death and the sessions lost with it.
            wait_for(lambda: (answered(server, "/health") or {}).get("status") == "degraded")
            health = server.get("/health")
            assert health["sessions_lost"] == held and str(victim_index) in health["reason"]
            # Each client on that worker is told its episode is gone; the others go on.
            lost = 0
            for env in clients:
                try:
                    env.call("get_balance")
                except SessionLost:
                    lost += 1
            assert lost == held - 1  # the session made over POST /mcp was the other one
            # A request naming a session of the dead worker says what happened to it.
            refused = rpc(server, "tools/call", session_id=made, name="get_balance", arguments={})
            assert "worker" in refused["error"]["message"]
            assert "lost" in refused["error"]["message"]

            # It comes back, in a new life, and serves again.
            def restarted() -> bool:
                metrics = answered(server, "/metrics")
                return (
                    metrics is not None
                    and metrics["workers"][victim_index]["generation"] == 2
                    and metrics["workers_alive"] == 2
                )

            wait_for(restarted, what="the worker's restart")
            metrics = server.get("/metrics")
            assert metrics["worker_deaths"] == 1 and metrics["sessions_lost"] == held
            fresh = [SeahavenClient(base_url=server.base_url) for _ in range(2)]
            for env in fresh:
                env.reset(fixture="small_shop")
                assert env.call("get_balance").error is None
                env.close()
        finally:
            for env in clients:
                env.close()


def test_a_reset_from_a_snapshot_reaches_the_worker_holding_it(tmp_path: Path) -> None:
    with two_workers(tmp_path) as server, SeahavenClient(base_url=server.base_url) as original:
        original.reset(fixture="small_shop", seed=5, episode_id="origin")
        original.call("create_customer", email="ada@example.com")
        token = original.snapshot()
        holder = pool.owner_of(token)
        assert holder is not None
        expected = original.call("create_customer", email="ben@example.com").result["id"]
        # Fresh clients land on either worker in turn; each reaches the snapshot's.
        for n in range(4):
            with SeahavenClient(base_url=server.base_url) as branch:
                reset = branch.reset(from_snapshot=token)
                assert reset.observation.metadata["step_count"] == 1
                made = branch.call("create_customer", email="ben@example.com")
                assert made.result["id"] == expected, n
        # A client in an episode on the other worker moves to the snapshot's worker.
        for _ in range(6):
            elsewhere = SeahavenClient(base_url=server.base_url)
            elsewhere.reset(fixture="small_shop", seed=9)
            credentials = elsewhere._resume_credentials
            assert credentials is not None
            if pool.owner_of(credentials[0]) != holder:
                break
            elsewhere.close()
        else:
            pytest.fail("no session landed on the other worker")
        try:
            elsewhere.reset(from_snapshot=token)
            made = elsewhere.call("create_customer", email="ben@example.com")
            assert made.result["id"] == expected
        finally:
            elsewhere.close()
        # A token of a worker with no such snapshot is told so, on that worker.
        with (
            SeahavenClient(base_url=server.base_url) as stray,
            pytest.raises(RuntimeError, match="snapshot"),
        ):
            stray.reset(from_snapshot=token[:-4] + "0000")


def test_workers_stop_when_the_front_process_dies(tmp_path: Path) -> None:
    with start_server(tmp_path, extra=("--workers", "2")) as server:
        pids = [row["pid"] for row in server.get("/metrics")["workers"]]
        with SeahavenClient(base_url=server.base_url) as env:
            env.reset(fixture="small_shop")
            env.call("create_customer", email="ada@example.com")
            server.process.send_signal(signal.SIGKILL)
            server.process.wait(timeout=30)
            for pid in pids:
                wait_for(lambda pid=pid: not os.path.exists(f"/proc/{pid}"), 30, "workers to end")
            with pytest.raises(SessionLost):
                env.state()
    # Each worker ended its sessions as it stopped.
    assert instance_directories(tmp_path) == []


def test_the_console_is_served_by_every_worker(tmp_path: Path) -> None:
    # start_server passes --no-console; the console is served when it is not.
    log = tmp_path / "console.log"
    argv = [sys.executable, "-m", "seahaven.cli", "serve", "--world", "payments", "--port", "0"]
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    with log.open("w") as out:
        process = subprocess.Popen([*argv, "--workers", "2"], stdout=out, stderr=out, env=env)
    try:
        wait_for(lambda: "Web console" in log.read_text() or process.poll() is not None)
        found = re.search(r"Web console for 'payments': (http://\S+)", log.read_text())
        assert found, log.read_text()
        base = found.group(1).rsplit("/console", 1)[0]
        # Requests alternate between the workers: each answers the same pages and documents.
        pages = {urllib.request.urlopen(f"{base}/console/", timeout=10).status for _ in range(4)}
        assert pages == {200}
        cards = [server_json(f"{base}/metadata") for _ in range(4)]
        assert all(card == cards[0] for card in cards) and cards[0]["name"] == "payments"
        fixtures = [server_json(f"{base}/fixtures") for _ in range(4)]
        assert all(listed == fixtures[0] for listed in fixtures) and fixtures[0]
    finally:
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0, log.read_text()


def server_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_one_worker_is_this_process_alone(tmp_path: Path) -> None:
    with start_server(tmp_path, extra=("--workers", "1")) as server:
        children = Path(f"/proc/{server.process.pid}/task/{server.process.pid}/children")
        assert children.read_text().split() == []
        metrics = server.get("/metrics")
        assert [row["pid"] for row in metrics["workers"]] == [server.process.pid]
        assert server.get("/health") == {"status": "healthy"}


def test_a_request_that_never_arrives_whole_is_refused_in_time(tmp_path: Path) -> None:
    # The request's clock starts at its first byte: a client that connected and then waited
    # (for the CPU, on a machine running thousands of sessions) past the read time before it
    # wrote its handshake is served; one that never writes is closed once the idle time passes.
    limits = ("--request-read-seconds", "0.5", "--idle-connection-seconds", "4")
    with two_workers(tmp_path, *limits) as server:
        late = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in "ab"]
        silent = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        partial = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        started = time.monotonic()
        partial.sendall(b"GET /ws?session_id=w0g1.x HTTP/1.1\r\nHost: 127")
        time.sleep(1.5)  # three read times, before the late ones' first byte
        late[0].sendall(
            b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            b"Sec-WebSocket-Version: 13\r\n\r\n"
        )
        late[1].sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert late[0].recv(1024).startswith(b"HTTP/1.1 101")
        assert late[1].recv(1024).startswith(b"HTTP/1.1 200")
        for sock in late:
            sock.close()
        for sock in (silent, partial):
            assert sock.recv(1024).startswith(b"HTTP/1.1 408")
            try:
                rest = sock.recv(1024)
            except ConnectionResetError:
                rest = b""
            assert rest == b""  # closed after the answer
            sock.close()
        assert time.monotonic() - started < 4 + 5
        # Meanwhile the server went on serving.
        assert server.get("/health") == {"status": "healthy"}


def test_route_of_reads_the_session_a_request_names() -> None:
    named = pool.prefix_for(1, 3) + "abc_DEF-123"
    ws = f"GET /ws?session_id={named}&resume=tok HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    assert routing.route_of(ws) == (True, named)
    resumed = f"GET /worlds/a/ws?resume={named} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    assert routing.route_of(resumed) == (True, named)
    kept = pool.prefix_for(0, 2) + "snap-0123abcd"
    snapshot = f"GET /ws?snapshot={kept} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    assert routing.route_of(snapshot) == (True, kept)
    assert routing.route_of(b"GET /ws?session_id=unprefixed HTTP/1.1\r\n\r\n") == (True, None)
    assert routing.route_of(b"GET /ws HTTP/1.1\r\nHost: x") == (False, None)
    body = json.dumps({"method": "tools/list", "params": {"session_id": named}}).encode()
    head = f"POST /mcp HTTP/1.1\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    assert routing.route_of(head + body) == (True, named)
    # The body has not all arrived: the front looks again before it routes.
    assert routing.route_of(head + body[:5]) == (False, None)
    assert routing.route_of(head + b"not json" + body[8:]) == (True, None)
    assert routing.route_of(b"GET /health HTTP/1.1\r\n\r\n") == (True, None)


def test_a_dropped_connection_resumes_on_the_worker_that_holds_its_session(
    tmp_path: Path,
) -> None:
    with two_workers(tmp_path) as server:
        owners = set()
        for n in range(6):
            with connect(server.ws_url, open_timeout=10) as first:
                first.send(
                    json.dumps({"type": "reset", "data": {"fixture": "small_shop"}, "id": 1})
                )
                credentials = json.loads(first.recv(timeout=30))["data"]["resume"]
                owners.add(pool.owner_of(credentials["session_id"]))
                step = {"type": "call_tool", "tool_name": "create_customer"}
                step["arguments"] = {"email": f"r{n}@example.com"}
                first.send(json.dumps({"type": "step", "id": 2, "data": step}))
                first.recv(timeout=30)
                # Gone without a close frame, as a network drop leaves it.
                first.socket.shutdown(socket.SHUT_RDWR)
                first.socket.close()
            query = f"?session_id={credentials['session_id']}&resume={credentials['token']}"
            deadline = time.monotonic() + 30
            while True:
                with connect(server.ws_url + query, open_timeout=10) as again:
                    answer = json.loads(again.recv(timeout=30))
                    if answer["type"] == "resumed":
                        again.send(json.dumps({"type": "state", "id": 3}))
                        state = json.loads(again.recv(timeout=30))["data"]
                        break
                # The worker may not have seen the drop yet: its session is still attached.
                assert time.monotonic() < deadline, answer
                time.sleep(0.1)
            assert state["call_count"] == 1
            assert [r["after"]["email"] for r in state["state"]["db"]["log"]] == [
                f"r{n}@example.com"
            ]
        # Resumes landed on both workers: each was routed to its own.
        assert {worker for worker, _ in owners} == {0, 1}
