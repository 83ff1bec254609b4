"""Resume: a session outlives a dropped connection for the server's grace, and nothing runs twice.

Every connection below goes through a TCP relay the test cuts, so the client's
socket really ends under it with no close frame, as a network drop does.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import payments_world
import pytest
from conftest import wait_until
from openenv import GenericEnvClient
from relay import Relay
from seahaven_openenv import plugin
from seahaven_openenv.sessions import resume
from websockets.sync.client import connect

import seahaven
from seahaven.openenv import SeahavenClient, SessionLost, serve


class Gate:
    """A tool that waits for the test: ``started`` once it runs, it returns on ``release``."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()


def make_harbour(work_dir: Path, gate: Gate) -> seahaven.World:
    """A world with one tool that holds, writing a row once the test lets it go."""
    world = seahaven.World(
        name="harbourmaster",
        version="1.0.0",
        description="Berths for the resume tests.",
        schema="CREATE TABLE berths (id TEXT PRIMARY KEY, ship TEXT NOT NULL) STRICT;",
        state_format="seahaven.state/1",
        default_clock_mode="tick",
        work_dir=work_dir,
    )

    @world.tool
    def berth(ctx: seahaven.Ctx, ship: str) -> dict[str, Any]:
        """Give a ship a berth, once the harbour master (the test) says so."""
        gate.started.set()
        if not gate.release.wait(30):
            raise RuntimeError("the test never released the berth")
        berth_id = ctx.ids.uuid()
        ctx.db.execute("INSERT INTO berths VALUES (?, ?)", berth_id, ship)
        return {"id": berth_id, "ship": ship}

    @world.tool
    def count_berths(ctx: seahaven.Ctx) -> int:
        """How many berths are given."""
        row = ctx.db.one("SELECT count(*) AS n FROM berths")
        return int(row["n"]) if row is not None else 0

    return world


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def harbour(tmp_path: Path, gate: Gate) -> seahaven.World:
    work_dir = tmp_path / "instances"
    work_dir.mkdir()
    return make_harbour(work_dir, gate)


@pytest.fixture
def relayed(serving) -> Iterator[Any]:
    """Start a server and a relay in front of it: ``relayed(world, **options)``."""
    relays: list[Relay] = []

    def start(world: Any, **options: Any) -> tuple[serve.RunningServer, Relay]:
        server = serving(world, **options)
        relay = Relay(server.port)
        relays.append(relay)
        return server, relay

    yield start
    for relay in relays:
        relay.close()


def call_in_thread(env: SeahavenClient, name: str, **arguments: Any) -> dict[str, Any]:
    """Start ``env.call(name, ...)`` on a thread; the dict gets ``result`` or ``error``."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = env.call(name, **arguments)
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    outcome["thread"] = thread
    return outcome


def test_a_call_in_flight_when_the_connection_drops_runs_once_and_returns(
    relayed, harbour: seahaven.World, gate: Gate
) -> None:
    server, relay = relayed(harbour)
    # The call runs on a worker thread, so the server is free while it holds.
    server.hub.offloaded.add("tool berth")
    with SeahavenClient(base_url=relay.base_url) as env:
        env.reset(episode_id="ep-resume")
        assert env.call("count_berths").result == 0
        pending = call_in_thread(env, "berth", ship="Endeavour")
        assert gate.started.wait(30)
        assert relay.cut() == 1
        # The client resumes on a new connection and re-sends the call while it still runs.
        wait_until(lambda: relay.connections == 2)
        time.sleep(0.2)
        gate.release.set()
        pending["thread"].join(30)
        assert "error" not in pending, pending.get("error")
        observation = pending["result"]
        assert observation.error is None and observation.result["ship"] == "Endeavour"
        assert env.resumes == 1
        # The same instance and step count: reset, count, berth; the berth ran once.
        state = env.state()
        assert state.episode_id == "ep-resume"
        assert state.step_count == 2
        assert state.call_count == 2
        assert env.call("count_berths").result == 1
        # The connection it resumed on drops too: resumed again, the same session.
        relay.cut()
        assert env.call("count_berths").result == 1
        assert env.resumes == 2 and env.state().step_count == 4
    wait_until(lambda: server.hub.active_sessions == 0)


def test_a_drop_between_calls_resumes_on_the_next_call(relayed) -> None:
    server, relay = relayed(payments_world.world)
    with SeahavenClient(base_url=relay.base_url) as env:
        env.reset(fixture="small_shop", episode_id="ep-1")
        created = env.call("create_customer", email="ada@example.com", name="Ada")
        relay.cut()
        # The session waits for its client, still counted against capacity.
        fetched = env.call("get_customer", customer_id=created.result["id"])
        assert fetched.error is None and fetched.result["email"] == "ada@example.com"
        assert env.resumes == 1
        state = env.state()
        assert state.episode_id == "ep-1" and state.step_count == 2
        assert server.hub.active_sessions == 1


def test_a_resume_refused_at_the_handshake_for_now_is_tried_again(relayed) -> None:
    # A busy server (or the balancer before it) answers the resume's handshake 503, then 408:
    # the session is not lost, and the client waits the Retry-After it was given.
    server, relay = relayed(payments_world.world)
    with SeahavenClient(base_url=relay.base_url) as env:
        env.reset(fixture="small_shop", episode_id="ep-busy")
        created = env.call("create_customer", email="ada@example.com", name="Ada")
        relay.refuse(
            [
                b"HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\n",
                b"HTTP/1.1 408 Request Timeout\r\n",
            ]
        )
        relay.cut()
        started = time.monotonic()
        fetched = env.call("get_customer", customer_id=created.result["id"])
        assert time.monotonic() - started >= 1.0
        assert fetched.error is None and fetched.result["email"] == "ada@example.com"
        assert relay.refused == 2 and env.handshake_retries_made == 2
        assert env.resumes == 1
        assert env.state().episode_id == "ep-busy"
        # The refused handshakes never reached the server: one session, the same one.
        assert server.hub.active_sessions == 1


def test_a_resume_refused_for_good_loses_the_session_at_once(relayed) -> None:
    _server, relay = relayed(payments_world.world)
    with SeahavenClient(base_url=relay.base_url) as env:
        env.reset(fixture="small_shop")
        relay.refuse([b"HTTP/1.1 403 Forbidden\r\n"] * 5)
        relay.cut()
        with pytest.raises(SessionLost, match="403"):
            env.call("get_balance")
        assert env.handshake_retries_made == 0
        # Each of the call's resumes was refused once, and none was tried again.
        assert 1 <= relay.refused <= 3


def test_a_frame_re_sent_after_resume_is_answered_from_the_kept_answer(relayed) -> None:
    """On the wire: the first frame of a resumed connection, with the kept id, never runs again."""
    server, relay = relayed(payments_world.world)
    url = relay.base_url.replace("http://", "ws://") + "/ws"
    with connect(url, open_timeout=10) as first:  # cut under it, closed at the end
        first.send(json.dumps({"type": "reset", "data": {"fixture": "small_shop"}, "id": 1}))
        reset = json.loads(first.recv(timeout=30))
        credentials = reset["data"]["resume"]
        assert set(credentials) == {"session_id", "token", "grace_s"}
        assert credentials["grace_s"] == resume.DEFAULT_RESUME_GRACE_SECONDS
        assert len(credentials["token"]) >= 40
        create = {
            "type": "step",
            "id": 2,
            "data": {
                "type": "call_tool",
                "tool_name": "create_customer",
                "arguments": {"email": "ada@example.com"},
            },
        }
        first.send(json.dumps(create))
        answer = first.recv(timeout=30)
        relay.cut()
        wait_until(lambda: server.hub.resumables.detached == 1)
        query = f"?session_id={credentials['session_id']}&resume={credentials['token']}"
        with connect(url + query, open_timeout=10) as second:
            resumed = json.loads(second.recv(timeout=30))
            assert resumed == {"type": "resumed", "data": {"session_id": credentials["session_id"]}}
            second.send(json.dumps(create))
            # The very answer the dropped connection carried, and the call did not run again.
            assert second.recv(timeout=30) == answer
            second.send(json.dumps({"type": "state", "id": 3}))
            state = json.loads(second.recv(timeout=30))["data"]
            assert state["call_count"] == 1 and state["step_count"] == 1
            # Only the first frame after the resume is matched: the same id again runs again.
            second.send(json.dumps(create))
            again = json.loads(second.recv(timeout=30))
            assert (
                again["id"] == 2
                and again["data"]["observation"]["result"]["id"]
                != (json.loads(answer)["data"]["observation"]["result"]["id"])
            )
            second.send(json.dumps({"type": "state", "id": 4}))
            assert json.loads(second.recv(timeout=30))["data"]["call_count"] == 2


def test_an_expired_grace_raises_naming_the_grace(relayed) -> None:
    server, relay = relayed(payments_world.world, resume_grace=0.5)
    with SeahavenClient(base_url=relay.base_url) as env:
        env.reset(fixture="small_shop", episode_id="ep-1")
        env.call("create_customer", email="ada@example.com")
        relay.cut()
        # The grace passes: the instance goes, as the reaper's does.
        wait_until(lambda: server.hub.active_sessions == 0)
        with pytest.raises(SessionLost) as lost:
            env.state()
        reason = lost.value.reason
        assert "lost with no word from the server" in reason
        assert "resume grace of 0.5 s passed" in reason
        # Never a fresh empty session: every call after says the same, until a reset.
        with pytest.raises(SessionLost, match="resume grace"):
            env.call("get_balance")
        env.reset(fixture="small_shop")
        assert env.state().call_count == 0


def test_a_detached_session_the_reaper_ended_says_so(relayed) -> None:
    server, relay = relayed(payments_world.world, session_timeout=1)
    with SeahavenClient(base_url=relay.base_url) as env:
        env.reset(fixture="small_shop", episode_id="ep-1")
        relay.cut()
        wait_until(lambda: server.hub.active_sessions == 0)
        with pytest.raises(SessionLost) as lost:
            env.call("get_balance")
        assert "resuming the session on a new connection failed" in lost.value.reason
        assert "episode 'ep-1' was reaped after 1 s idle" in lost.value.reason


def test_a_wrong_token_is_refused_and_attaches_nothing(relayed) -> None:
    _, relay = relayed(payments_world.world)
    url = relay.base_url.replace("http://", "ws://") + "/ws"
    with connect(url, open_timeout=10) as owner:
        owner.send(json.dumps({"type": "reset", "data": {}, "id": 1}))
        credentials = json.loads(owner.recv(timeout=30))["data"]["resume"]
        wrong = credentials["token"][:-2] + ("AA" if credentials["token"][-2:] != "AA" else "BB")
        for token in (wrong, "", "é" * 43):
            query = f"?session_id={credentials['session_id']}&resume={token}"
            with connect(url + query, open_timeout=10) as thief:
                refusal = json.loads(thief.recv(timeout=30))
                assert refusal["data"]["code"] == "SESSION_ERROR"
                assert "not session" in refusal["data"]["resume_refused"]
        # A token is no use for another client's session either: each session has its own.
        with connect(url, open_timeout=10) as other:
            other.send(json.dumps({"type": "reset", "data": {}, "id": 1}))
            theirs = json.loads(other.recv(timeout=30))["data"]["resume"]
            assert theirs["token"] != credentials["token"]
            query = f"?session_id={theirs['session_id']}&resume={credentials['token']}"
            with connect(url + query, open_timeout=10) as thief:
                assert "not session" in json.loads(thief.recv(timeout=30))["data"]["message"]
        # The owner's session goes on untouched.
        owner.send(json.dumps({"type": "state", "id": 2}))
        assert json.loads(owner.recv(timeout=30))["data"]["step_count"] == 0


def test_an_unknown_session_names_a_restart(relayed) -> None:
    _, relay = relayed(payments_world.world)
    url = relay.base_url.replace("http://", "ws://") + "/ws?session_id=nope&resume=abc"
    with connect(url, open_timeout=10) as ws:
        refusal = json.loads(ws.recv(timeout=30))["data"]
    assert "unknown session 'nope'" in refusal["message"] and "restarted" in refusal["message"]


def test_a_server_restart_refuses_the_resume_naming_the_restart(tmp_path: Path) -> None:
    world = payments_world.world
    with serve.running(world) as first:
        port = first.port
        relay = Relay(port)
        env = SeahavenClient(base_url=relay.base_url)
        env.reset(fixture="small_shop", episode_id="ep-1")
        env.call("create_customer", email="ada@example.com")
        # The network drops before the server stops, so the client hears nothing of it.
        relay.cut()
    try:
        with serve.running(world, port=port):
            with pytest.raises(SessionLost) as lost:
                env.state()
            assert "unknown session" in lost.value.reason
            assert "before this one restarted" in lost.value.reason
    finally:
        env.close()
        relay.close()


def test_a_client_that_closes_ends_its_session_at_once(relayed) -> None:
    server, relay = relayed(payments_world.world)
    with SeahavenClient(base_url=relay.base_url) as env:
        env.reset(fixture="small_shop")
    wait_until(lambda: server.hub.active_sessions == 0)
    assert server.hub.resumables.detached == 0


def test_a_detached_session_counts_against_capacity(relayed) -> None:
    server, relay = relayed(payments_world.world, max_concurrent_envs=1, admission_queue=0)
    with SeahavenClient(base_url=relay.base_url) as env:
        env.reset(fixture="small_shop")
        relay.cut()
        wait_until(lambda: server.hub.resumables.detached == 1)
        # No room for another session while this one waits for its client...
        other = GenericEnvClient(base_url=server.base_url).sync()
        with other, pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
            other.reset()
        # ...which resumes it.
        assert env.call("get_balance").error is None
        assert env.resumes == 1


def test_resume_grace_zero_behaves_as_before(relayed) -> None:
    server, relay = relayed(payments_world.world, resume_grace=0)
    with SeahavenClient(base_url=relay.base_url) as env:
        reset = env.reset(fixture="small_shop")
        assert reset.observation.metadata["fixture"] == "small_shop"
        env.call("create_customer", email="ada@example.com")
        relay.cut()
        # The session ended with its connection, as it always did.
        wait_until(lambda: server.hub.active_sessions == 0)
        with pytest.raises(SessionLost) as lost:
            env.state()
        assert lost.value.reason.startswith("the connection was lost with no word")
        assert env.resumes == 0
    url = server.base_url.replace("http://", "ws://") + "/ws"
    with connect(url, open_timeout=10) as ws:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert "resume" not in json.loads(ws.recv(timeout=30))["data"]
    with connect(url + "?session_id=x&resume=y", open_timeout=10) as ws:
        refusal = json.loads(ws.recv(timeout=30))["data"]
        assert "resume grace of 0" in refusal["message"]


def test_openenvs_client_is_answered_as_documented(relayed) -> None:
    """The stock client ignores the added key, and a dropped connection still raises on a call."""
    server, relay = relayed(payments_world.world)
    with GenericEnvClient(base_url=relay.base_url).sync() as env:
        env.reset(fixture="small_shop", episode_id="ep-1")
        step = env.step(
            {
                "type": "call_tool",
                "tool_name": "create_customer",
                "arguments": {"email": "ada@example.com"},
            }
        )
        assert step.observation["error"] is None
        assert env.state()["step_count"] == 1
        relay.cut()
        wait_until(lambda: server.hub.resumables.detached == 1)
        # It reconnects without a word into a new session, which holds no episode: refused.
        with pytest.raises(RuntimeError, match="lost the episode it had"):
            env.step({"type": "call_tool", "tool_name": "get_balance", "arguments": {}})


def test_shutdown_leaves_nothing_behind(harbour: seahaven.World, gate: Gate) -> None:
    gate.release.set()
    with serve.running(harbour) as server:
        relay = Relay(server.port)
        env = SeahavenClient(base_url=relay.base_url)
        env.reset()
        relay.cut()
        wait_until(lambda: server.hub.resumables.detached == 1)
        hub = server.hub
    relay.close()
    assert hub.active_sessions == 0 and hub.resumables.detached == 0
    assert harbour.work_dir is not None
    assert not [path for path in harbour.work_dir.iterdir() if path.is_dir()]
    env.close()


def test_the_command_lines_default_is_the_servers() -> None:
    assert plugin.RESUME_GRACE_SECONDS == resume.DEFAULT_RESUME_GRACE_SECONDS
