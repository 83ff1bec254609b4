"""A lost episode is never silently replaced by an empty one.

An episode lives as long as its connection. When the reaper ends it, the
server stops or restarts, or the connection drops, ``SeahavenClient`` raises
``SessionLost`` naming what happened on its next step or ``state()``, where
OpenEnv's own client reconnects into a fresh session without a word.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import payments_world
import pytest
from conftest import wait_until
from openenv import GenericEnvClient
from seahaven_openenv.sessions.session import FrameError, WorldService
from test_serve_command import serving as serving_command

import seahaven
from seahaven.openenv import SeahavenClient, SessionLost, serve


def start_episode(env: Any) -> None:
    env.reset(fixture="small_shop", episode_id="ep-1")
    created = env.call("create_customer", email="ada@example.com", name="Ada")
    assert created.error is None


def test_a_reaped_session_raises_naming_the_reaper(serving) -> None:
    server = serving(payments_world.world, session_timeout=1)
    with SeahavenClient(base_url=server.base_url) as env:
        start_episode(env)
        wait_until(lambda: server.hub.active_sessions == 0)
        with pytest.raises(SessionLost) as lost:
            env.state()
        assert "reaped" in lost.value.reason and "idle for more than 1 s" in lost.value.reason
        # Every step after it says the same, until a reset starts a new episode.
        with pytest.raises(SessionLost, match="reaped"):
            env.call("get_balance")
        with pytest.raises(SessionLost, match="reaped"):
            env.list_tools()
        env.reset(fixture="small_shop", episode_id="ep-2")
        state = env.state()
        assert state.episode_id == "ep-2" and state.call_count == 0


def test_a_reset_refused_for_its_shape_keeps_the_episode_watched(serving) -> None:
    server = serving(payments_world.world, session_timeout=1)
    with SeahavenClient(base_url=server.base_url) as env:
        start_episode(env)
        # Refused before anything changed: the episode is still the one to lose.
        with pytest.raises(RuntimeError, match="reset does not take"):
            env.reset(fixtrue="small_shop")
        wait_until(lambda: server.hub.active_sessions == 0)
        with pytest.raises(SessionLost, match="reaped"):
            env.state()


def test_a_closed_client_says_its_episode_went_with_the_connection(serving) -> None:
    server = serving(payments_world.world)
    env = SeahavenClient(base_url=server.base_url)
    start_episode(env)
    env.close()
    with pytest.raises(SessionLost, match="the client closed the connection"):
        env.state()
    env.reset(fixture="small_shop")
    assert env.state().call_count == 0
    env.close()


def test_a_server_restart_raises_naming_the_restart() -> None:
    world = payments_world.world
    with serve.running(world) as first:
        port = first.port
        env = SeahavenClient(base_url=first.base_url)
        start_episode(env)
    try:
        # The first server has stopped; another takes its port.
        with serve.running(world, port=port):
            with pytest.raises(SessionLost) as lost:
                env.state()
            assert "the server stopped or restarted" in lost.value.reason
            with pytest.raises(SessionLost):
                env.call("get_balance")
            env.reset(fixture="small_shop")
            assert env.call("get_balance").error is None
    finally:
        env.close()


def test_a_connection_lost_without_a_word_raises_naming_the_loss(tmp_path: Path) -> None:
    with serving_command(tmp_path, "--world", "payments") as running:
        url = running["urls"]["payments"]
        with SeahavenClient(base_url=url) as env:
            start_episode(env)
            # The server dies at once: no close frame is ever sent.
            running["process"].send_signal(signal.SIGKILL)
            running["process"].wait(timeout=30)
            with pytest.raises(SessionLost) as lost:
                env.state()
            assert "lost with no word from the server" in lost.value.reason


def test_openenvs_client_is_refused_a_call_after_its_session_was_reaped(serving) -> None:
    server = serving(payments_world.world, session_timeout=1)
    with GenericEnvClient(base_url=server.base_url).sync() as env:
        env.reset(fixture="small_shop", episode_id="ep-1")
        wait_until(lambda: server.hub.active_sessions == 0)
        # It reconnects without a word, to a session that never had an episode: a call is
        # refused, saying an episode does not outlive its connection...
        with pytest.raises(RuntimeError, match="lost the episode it had"):
            env.step({"type": "call_tool", "tool_name": "get_balance", "arguments": {}})
        # ...and so is a state: the new connection holds no episode, and the refusal says
        # what may have ended the one the client had.
        with pytest.raises(RuntimeError, match="SESSION_ERROR") as refused:
            env.state()
        assert "after 1 s idle" in str(refused.value) and "restarted" in str(refused.value)
        # A reset starts a new episode, whose state is answered again.
        env.reset(fixture="small_shop", episode_id="ep-2")
        assert env.state()["episode_id"] == "ep-2"


def test_openenvs_client_is_refused_a_state_after_a_server_restart() -> None:
    """The issue's repro with the stock client: an empty document after a restart raises."""
    world = payments_world.world
    with serve.running(world) as first:
        port = first.port
        env = GenericEnvClient(base_url=first.base_url).sync()
        env.connect()
        env.reset(fixture="small_shop", episode_id="ep-1")
        env.step(
            {
                "type": "call_tool",
                "tool_name": "create_customer",
                "arguments": {"email": "ada@example.com"},
            }
        )
    try:
        with serve.running(world, port=port):
            with pytest.raises(RuntimeError, match="SESSION_ERROR") as refused:
                env.state()
            message = str(refused.value)
            assert "holds no episode" in message and "the server restarted" in message
            with pytest.raises(RuntimeError, match="lost the episode it had"):
                env.step({"type": "call_tool", "tool_name": "get_balance", "arguments": {}})
    finally:
        env.close()


def test_the_document_of_no_episode_is_there_when_asked_for(served, wire) -> None:
    ws = wire(served)
    refused = ws.ask({"type": "state"})
    assert refused["type"] == "error" and refused["data"]["no_episode"] is True
    assert "reaper is off" in refused["data"]["message"]
    document = ws.ask({"type": "state", "data": {"allow_no_episode": True}})
    assert document["type"] == "state" and document["data"]["episode_id"] is None
    for bad in ({"allow_no_episode": 1}, {"other": True}, []):
        reply = ws.ask({"type": "state", "data": bad})
        assert reply["data"]["code"] == "VALIDATION_ERROR"


def test_a_session_tells_a_reaped_episode_from_none_at_all(beacon_world: seahaven.World) -> None:
    session = WorldService(beacon_world).session()
    # Never had one: the document of no instance.
    assert session.state()["episode_id"] is None
    session.reset({"episode_id": "ep-9"})
    session.last_activity -= 10
    assert session.reap(5)
    for frame in (
        session.state,
        session.state_text,
        lambda: session.step({"type": "list_tools"}),
        lambda: session.invoke("add_note", {"text": "x"}),
    ):
        with pytest.raises(FrameError) as refused:
            frame()
        assert refused.value.code == "SESSION_ERROR"
        assert refused.value.extra == {"lost": "episode 'ep-9' was reaped after 5 s idle"}
    session.reset({})
    assert session.state()["call_count"] == 0
    session.close()


def test_a_client_that_never_had_an_episode_reconnects_quietly(serving) -> None:
    server = serving(payments_world.world, session_timeout=1)
    with SeahavenClient(base_url=server.base_url) as env:
        # Nothing to lose: the tool list belongs to the world, and no episode began.
        assert env.list_tools()
        env.close()
        assert env.list_tools()
